import Dispatch
@_spi(Engine) import LogStoreFormat
@_spi(Engine) import LogStoreSystem

/// The group commit: committers whose batches are queued wait for a leader (one of them) that writes
/// every queued batch, syncs once, publishes them to the index and wakes the others.
extension CommitPipeline {
    /// Waits until batch `ticket` is written and visible, leading the group commit when no one is.
    func awaitDurable(_ ticket: UInt64) throws(LogStoreError) {
        enum Step {
            case done
            case failed(LogStoreError, wake: [DispatchSemaphore])
            case wait(DispatchSemaphore)
            case spin(releases: UInt64, deadline: UInt64)
            case lead(CommitQueue.Work, SegmentFile?, UInt64)
        }
        // A leader whose batch is durable leads the next group too when one is queued already (a few
        // times at most): the disk starts on it at once instead of after a woken committer gets a core.
        var rounds = 0
        // While this committer spins (see `CommitSignals`): until when. It counts in `queue.spinners`.
        var spinDeadline: UInt64?
        var spun = false
        func stopSpinning(_ queue: inout CommitQueue) {
            guard spinDeadline != nil else { return }
            queue.spinners -= 1
            spinDeadline = nil
        }
        while true {
            let step = queue.withLock { queue -> Step in
                if queue.durableSequence >= ticket {
                    stopSpinning(&queue)
                    guard rounds > 0, rounds < 4, !queue.flushing, !queue.pending.isEmpty, queue.failure == nil,
                        !queue.closed
                    else { return .done }
                    queue.flushing = true
                    return .lead(queue.takeWork(), queue.active, queue.activeSize)
                }
                if let failure = queue.failure {
                    stopSpinning(&queue)
                    return .failed(failure, wake: queue.waitersToWake())
                }
                guard !queue.flushing else {
                    let releases = signals.releases.load(ordering: .relaxed)
                    if let deadline = spinDeadline, SystemClock.monotonicNanoseconds() < deadline {
                        return .spin(releases: releases, deadline: deadline)
                    }
                    stopSpinning(&queue)
                    if !spun, queue.spinners < signals.maximumSpinners,
                        queue.lastSyncNanoseconds < signals.limitNanoseconds
                    {
                        spun = true
                        queue.spinners += 1
                        let deadline = SystemClock.monotonicNanoseconds() + signals.limitNanoseconds
                        spinDeadline = deadline
                        return .spin(releases: releases, deadline: deadline)
                    }
                    // The leader wakes this committer when its batch is durable, or to lead the next group.
                    let semaphore = DispatchSemaphore(value: 0)
                    queue.waiters.append((ticket, semaphore))
                    return .wait(semaphore)
                }
                stopSpinning(&queue)
                queue.flushing = true
                return .lead(queue.takeWork(), queue.active, queue.activeSize)
            }
            switch step {
            case .done: return
            case .wait(let semaphore): semaphore.wait()
            case .spin(let releases, let deadline):
                _ = CommitSignals.yield(until: deadline, whileUnchanged: signals.releases, seen: releases)
            case .failed(let failure, let wake):
                for semaphore in wake { semaphore.signal() }
                throw LogStoreError(
                    .storeFailed, "the write failed and was not acknowledged; reopen the store", file: directory,
                    underlying: failure)
            case .lead(var work, let active, let size):
                let gatherStarted = SystemClock.monotonicNanoseconds()
                if gather(work) { work = queue.withLock { $0.takeMore(work) } }
                flush(work, active: active, size: size, gathered: SystemClock.monotonicNanoseconds() - gatherStarted)
                rounds += 1
            }
        }
    }

    /// Before a leader writes `work`, lets committers that are still encoding their batches, and those
    /// the last group served that are likely to commit again at once, queue theirs, so that one sync
    /// serves them too. It waits at most half the last sync's time (20 µs at least while someone is
    /// encoding): spinning on ``CommitSignals/groupsCompleted`` when that is within the spin limit,
    /// otherwise blocked on the queue's second condition; either way the committer that completes the
    /// group ends the wait. Returns whether more may have been queued.
    private func gather(_ work: CommitQueue.Work) -> Bool {
        let limit = queue.withLock { queue -> UInt64? in
            queue.gatheringCommitters = work.committers
            guard !queue.gathered, queue.arriving > 0 || work.committers < queue.expectedCommitters else {
                queue.gatheringCommitters = nil
                return nil
            }
            return queue.arriving > 0 ? max(queue.maximumGatherNanoseconds, 20_000) : queue.maximumGatherNanoseconds
        }
        guard let limit else { return false }
        let deadline = SystemClock.monotonicNanoseconds() + limit
        if limit <= signals.limitNanoseconds {
            // Spinning, like the committers it waits for: no wake-up to wait for when the group is complete.
            var seen = signals.groupsCompleted.load(ordering: .acquiring)
            while SystemClock.monotonicNanoseconds() < deadline {
                let now = CommitSignals.yield(until: deadline, whileUnchanged: signals.groupsCompleted, seen: seen)
                if now != seen, queue.withLock({ $0.gathered }) { break }
                seen = now
            }
        } else {
            _ = queue.waitUntil(deadline: deadline) { queue -> Bool? in queue.gathered ? true : nil }
        }
        queue.withLock { $0.gatheringCommitters = nil }
        return true
    }

    /// The leader's part: write, sync, publish. Records a failure in the queue instead of throwing.
    /// `gathered`: how long the leader gathered committers first.
    private func flush(
        _ work: CommitQueue.Work, active startActive: SegmentFile?, size startSize: UInt64, gathered: UInt64
    ) {
        var active = startActive
        var size = startSize
        var failure: LogStoreError?
        var syncNanoseconds: UInt64 = 0
        do throws(LogStoreError) {
            for chunk in work.chunks {
                if chunk.createsSegment {
                    if let sealed = active { try seal(sealed, at: size, sequence: work.lastSequence) }
                    let created = try createSegment(
                        chunk.segment, capacity: chunk.capacity, baseSequence: chunk.baseSequence)
                    active = created
                    size = UInt64(LogFormat.segmentHeaderSize)
                    index.withLock { state in
                        state.segments.create(created, size: size, firstSequence: chunk.firstSequence)
                    }
                    queue.withLock {
                        $0.active = created
                        $0.activeSize = size
                    }
                    try writeManifest()
                }
                guard let file = active, file.number == chunk.segment, chunk.startOffset == size else {
                    throw LogStoreError(
                        .ioError, "internal: pending bytes for segment \(chunk.segment) do not follow the file end")
                }
                prefill.prepare(file, from: size, through: chunk.endOffset)
                try file.writeFrames(chunk.buffer.bytes, at: chunk.startOffset, io: io)
                size = chunk.endOffset
            }
            if options.fsyncPolicy == .always, let file = active {
                changes.syncStarting()
                let started = SystemClock.monotonicNanoseconds()
                try ioStep(file.path, size) { () throws(SystemError) in try io.syncData(file.fd, path: file.path) }
                syncNanoseconds = SystemClock.monotonicNanoseconds() - started
            }
        } catch {
            failure = error
        }
        var wake: ChangeLog.Wake?
        if failure == nil {
            index.withLock { state in
                readViews.publishChange()
                for edit in work.edits { state.apply(edit) }
                state.finishReplay()
            }
            // After the index: an observer that reads on hearing of a batch sees it. In commit order, as
            // leaders take turns; the observers are woken after the committers.
            wake = changes.append(work.edits)
        }
        releaseWriterSlot { queue in
            queue.flushingSegments = []
            queue.activeSize = size
            queue.flushingChunks = []
            // Those of this cycle, or one fewer than expected last time: a group that formed short (its
            // committers were still being woken) does not shrink the next ones at once.
            queue.expectedCommitters = max(work.committers + queue.pendingCommitters, queue.expectedCommitters - 1)
            // Half the sync, but at least 150 µs: waking the last group's committers on two cores takes about
            // that long, and a sync of a few records (no size change to write) takes less.
            queue.maximumGatherNanoseconds = min(max(syncNanoseconds / 2, 150_000), 1_000_000)
            queue.lastSyncNanoseconds = syncNanoseconds
            if let failure {
                queue.failure = queue.failure ?? failure
            } else {
                if work.lastSequence > queue.durableSequence {
                    queue.groupCommits.batches += Int(clamping: work.lastSequence - queue.durableSequence)
                }
                queue.groupCommits.groups += 1
                queue.groupCommits.syncNanoseconds += syncNanoseconds
                queue.groupCommits.gatherNanoseconds += gathered
                queue.durableSequence = max(queue.durableSequence, work.lastSequence)
                if options.fsyncPolicy != .always { queue.dirty = true }
            }
            for chunk in work.chunks where queue.spareBuffers.count < 4 {
                chunk.buffer.removeAll()
                queue.spareBuffers.append(CommitQueue.SpareBuffer(buffer: chunk.buffer))
            }
        }
        wake?.resume()
        // A failed store commits nothing more until it is opened again: its change feeds end (after what
        // the log holds), instead of waiting until it closes.
        if failure != nil { changes.finish() }
    }

    /// Ends a leader's (or a seal's) hold of the writer slot: runs `update` and clears `flushing`
    /// holding the queue lock, and wakes the waiters that are done, or that should lead next.
    func releaseWriterSlot(_ update: (inout CommitQueue) -> Void) {
        let wake = queue.withLock { queue -> [DispatchSemaphore] in
            update(&queue)
            queue.flushing = false
            signals.releases.add(1, ordering: .releasing)
            return queue.waitersToWake()
        }
        for semaphore in wake { semaphore.signal() }
        queue.broadcast()
    }

}
