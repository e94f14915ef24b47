@_spi(Engine) import LogStoreSystem

extension Store {
    /// Waits until every batch the writer accepted before this call is visible to readers (or until
    /// `timeout` has passed, the store failed or it was closed).
    ///
    /// A write's expectations are checked against the writer's view, which includes batches that were
    /// accepted but whose sync may still be running; snapshots show only batches that are done. So a
    /// write refused with `conflict`, retried at once on a new snapshot, may read the state from before
    /// the batch it conflicted with and conflict again for nothing. Retry loops call this first.
    /// - returns: whether all of them are visible.
    package func awaitAcceptedBatches(timeout: Duration = .milliseconds(500)) -> Bool {
        pipeline.awaitAcceptedBatches(timeout: timeout)
    }
}

extension CommitPipeline {
    /// See ``Store/awaitAcceptedBatches(timeout:)``.
    ///
    /// Polls, with short sleeps, rather than waiting as a committer: a committer waiting for a batch
    /// may be woken to lead the next group commit, which this caller (with no batch of its own) must not
    /// be asked to do.
    func awaitAcceptedBatches(timeout: Duration) -> Bool {
        let target = queue.withLock { $0.nextSequence > 0 ? $0.nextSequence - 1 : 0 }
        let (seconds, attoseconds) = timeout.components
        let deadline =
            SystemClock.monotonicNanoseconds() + UInt64(max(seconds, 0)) * 1_000_000_000
            + UInt64(max(attoseconds, 0) / 1_000_000_000)
        while true {
            let (visible, stopped) = queue.withLock { ($0.durableSequence >= target, $0.failure != nil || $0.closed) }
            if visible { return true }
            if stopped || SystemClock.monotonicNanoseconds() >= deadline { return false }
            SystemClock.sleep(.microseconds(50))
        }
    }
}
