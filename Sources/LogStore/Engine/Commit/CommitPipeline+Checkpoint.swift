@_spi(Engine) import LogStoreFormat
@_spi(Engine) import LogStoreSystem

/// What a checkpoint asks of the pipeline: a moment when no leader is between writing a group and
/// publishing it.
extension CommitPipeline {
    /// Runs `body` holding the writer slot (waiting for a leader writing now), so that no leader is between
    /// writing a group and publishing it: a leader records a segment it seals or starts before it
    /// publishes the group, so only then do the index's published commits and its segments' sizes agree.
    /// Writers queue meanwhile, as behind a commit.
    ///
    /// First, when the segment being written holds `threshold` bytes or more, nothing is queued for it and
    /// no write failed, seals it, as the writer seals a full one; the next batch starts a
    /// new segment. A failed seal fails the store, as one of the writer's would (`storeFailed`); so does a
    /// store whose writer failed before (nothing is taken then). `body` is given the number
    /// of the segment being written after that (nil when none, or when it was just sealed).
    func holdingWriterSlot<Result>(
        sealingAt threshold: UInt64,
        _ body: (_ growing: UInt32?) throws(LogStoreError) -> Result
    ) throws(LogStoreError) -> Result {
        let (tail, growing, failed) = queue.waitUntil {
            queue -> ((file: SegmentFile, size: UInt64, sequence: UInt64)?, UInt32?, LogStoreError?)? in
            guard !queue.flushing else { return nil }
            queue.flushing = true
            // A leader that failed may have recorded a segment it sealed or started without publishing its
            // group: the index's sizes and its commits no longer agree.
            if let failure = queue.failure { return (nil, nil, failure) }
            guard queue.active != nil, queue.pending.isEmpty, !queue.closed, queue.activeSize >= threshold
            else { return (nil, queue.active?.number, nil) }
            return (queue.handOverTail(), nil, nil)
        }
        if let failed {
            releaseWriterSlot { _ in }
            throw LogStoreError(
                .storeFailed, "an earlier write failed; reopen the store to copy it", file: directory,
                underlying: failed)
        }
        var sealFailure: LogStoreError?
        if let (file, size, sequence) = tail {
            do throws(LogStoreError) {
                try seal(file, at: size, sequence: sequence)
            } catch {
                sealFailure = error
            }
        }
        let result: Result?
        var bodyFailure: LogStoreError?
        if sealFailure == nil {
            do throws(LogStoreError) {
                result = try body(growing)
            } catch {
                bodyFailure = error
                result = nil
            }
        } else {
            result = nil
        }
        releaseWriterSlot { queue in
            if tail != nil { queue.active = nil }
            if let sealFailure { queue.failure = queue.failure ?? sealFailure }
        }
        if let sealFailure {
            changes.finish()
            throw LogStoreError(
                .storeFailed, "sealing the segment being written failed; reopen the store", file: directory,
                underlying: sealFailure)
        }
        if let bodyFailure { throw bodyFailure }
        guard let result else { throw LogStoreError(.ioError, "internal: a checkpoint's state was not taken") }
        return result
    }
}
