@_spi(Engine) import LogStoreFormat
@_spi(Engine) import LogStoreSystem

/// What compaction, hint writing and mark-sweep may ask of the pipeline: which segments are busy, the
/// tail segment (to seal it), new segment numbers, whether a commit is in flight; and, for mark-sweep,
/// the pending chunks, an observer of accepted batches, and its sweep as one batch.
extension CommitPipeline {
    // MARK: - Compaction and hints

    /// Runs `body` with the segments the writer may still append to, holding the pipeline's lock, so
    /// that no other segment becomes busy before `body` returns.
    func withBusySegments<Result>(_ body: (Set<UInt32>) -> Result) -> Result {
        queue.withLock { body($0.busySegments) }
    }

    /// Hands the active segment over to be sealed, when `shouldSeal` says so of its number and nothing
    /// is pending or failed (it waits for a leader writing now). The writer slot stays taken, and the next
    /// batch goes to a new segment, until ``takeBackTail(sealFailure:)``.
    func handOverTail(if shouldSeal: (UInt32) -> Bool) -> (file: SegmentFile, size: UInt64, sequence: UInt64)? {
        queue.waitUntil { queue -> (file: SegmentFile, size: UInt64, sequence: UInt64)?? in
            guard !queue.flushing else { return nil }
            guard let active = queue.active, queue.pending.isEmpty, queue.failure == nil, !queue.closed,
                shouldSeal(active.number)
            else { return .some(nil) }
            return .some(queue.handOverTail())
        }
    }

    /// Takes back the writer slot after the tail segment handed over was sealed (or failed to be).
    func takeBackTail(sealFailure failure: LogStoreError?) {
        releaseWriterSlot { queue in
            queue.active = nil
            if let failure { queue.failure = queue.failure ?? failure }
        }
        // A failed store commits nothing more: its change feeds end.
        if failure != nil { changes.finish() }
    }

    /// The id reservation and the newest durable sequence a compaction output starts with.
    var reservation: (reservedIDs: UInt64, durableSequence: UInt64) {
        queue.withLock { ($0.reservedIDs, $0.durableSequence) }
    }

    /// A segment number nobody uses, for a compaction output.
    func newSegmentNumber() -> UInt32 {
        queue.withLock { queue in
            defer { queue.nextSegmentNumber += 1 }
            return queue.nextSegmentNumber
        }
    }

    /// Whether a leader is writing or a batch is queued (compaction lets it go first).
    var isWriting: Bool { queue.withLock { $0.flushing || !$0.pending.isEmpty } }

    // MARK: - Mark-sweep

    /// Runs `body` with the chunks queued or being written (pending records' references are read from
    /// them), holding the pipeline's lock so no batch is accepted meanwhile; with `observing`, starts
    /// noting the ids every batch accepted from now on names (``AcceptedBatchObserver``).
    func withPendingChunks<Result>(observing: Bool, _ body: ([PendingChunk]) -> Result) -> Result {
        queue.withLock { queue in
            if observing { queue.observer = AcceptedBatchObserver() }
            return body(queue.pending + queue.flushingChunks)
        }
    }

    /// Ends the observation begun by ``withPendingChunks(observing:_:)`` and frees, in one batch of
    /// tombstones, what `choose` picks given the ids the observed batches named (sorted). Nothing is
    /// written when it picks nothing, or the pipeline failed or closed. Returns whether a batch was written
    /// (when this returns, it is durable).
    /// - throws: what a commit throws; the index's integrity check refuses the batch when a freed object is
    ///   still referenced.
    func sweep(_ choose: (Set<UInt64>) -> [UInt64]) throws(LogStoreError) -> Bool {
        let ticket = try queue.withLock { queue throws(LogStoreError) -> UInt64? in
            let touched = queue.observer?.touched ?? []
            queue.observer = nil
            let garbage = choose(touched)
            guard !garbage.isEmpty, queue.failure == nil, !queue.closed else { return nil }
            let allocated = nextID.withLock { $0 }
            return try enqueue([], collecting: garbage, allocatedBelow: allocated, into: &queue).sequence
        }
        guard let ticket else { return false }
        try awaitDurable(ticket)
        return true
    }
}
