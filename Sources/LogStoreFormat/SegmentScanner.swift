/// Damage found while scanning a segment: where, why, and whether a valid frame follows it.
package struct SegmentDamage: Equatable, Sendable {
    /// Offset of the first byte that is not part of a committed, valid frame sequence.
    package var offset: Int
    /// What is wrong there.
    package var reason: String
    /// Offset of the next valid frame after the damage, or nil when none follows (``TailClassifier``
    /// tells what that makes it).
    package var nextValidFrame: Int?

    package init(offset: Int, reason: String, nextValidFrame: Int?) {
        self.offset = offset
        self.reason = reason
        self.nextValidFrame = nextValidFrame
    }
}

/// Walks the frames of one segment in order and hands out committed batches.
///
/// A batch is the frames from one commit-flagged frame (exclusive) to the next (inclusive); the
/// scanner calls `onCommittedFrame` for its frames only once the commit frame was read, so an
/// unfinished batch at the end is never applied. It reports damage and does not judge it: what the
/// damage means (a torn tail, a torn group, corruption) is for ``TailClassifier`` to say.
package struct SegmentScanner {
    /// The whole segment, header included, up to the end of the file.
    package let bytes: UnsafeRawBufferPointer
    /// Check every frame's checksum (off only for the compactor, which checks what it copies).
    package var verifyChecksums = true

    /// The layout of the segment's frames (from its header).
    package let format: FrameFormat
    /// False for the bytes of an encrypted segment as written, whose bodies are ciphertext: frames are then
    /// only delimited, their bodies not read.
    package var readsBodies = true

    package init(bytes: UnsafeRawBufferPointer, verifyChecksums: Bool = true) {
        self.bytes = bytes
        self.verifyChecksums = verifyChecksums
        self.format = FrameFormat(segment: bytes)
    }

    /// The result of a scan.
    package struct Outcome {
        /// Offset just after the last committed frame (the header size when there is none).
        package var committedEnd: Int
        /// Problems met, in file order: at most one unless `continueAfterDamage` said to go on.
        package var damages: [SegmentDamage] = []
        /// Number of committed frames.
        package var frames = 0
        /// Highest sequence number of a committed frame.
        package var maxSequence: UInt64 = 0
        /// Lowest sequence number of a committed frame (`UInt64.max` when there is none).
        package var minSequence: UInt64 = .max
        /// Offset of the seal frame, when the segment ends with a valid one.
        package var sealedAt: Int?
    }

    /// Scans from just after the header.
    ///
    /// - parameter continueAfterDamage: asked at damage that a valid frame follows (invalid bytes, or a
    ///   frame whose fields are out of range) with the damage and the outcome so far (without it): true
    ///   goes on from the next valid frame (for `verify`), false ends the scan there. Damage that nothing
    ///   valid follows, and seal damage, always end the scan. By default the scan stops at the first damage.
    /// - parameter start: where to begin: a frame boundary (after the header by default).
    package func scan(
        from start: Int = LogFormat.segmentHeaderSize,
        continueAfterDamage: (_ damage: SegmentDamage, _ before: Outcome) -> Bool = { _, _ in false },
        onCommittedFrame: (DecodedFrame) -> Void
    ) -> Outcome {
        var outcome = Outcome(committedEnd: start)
        var pending: [DecodedFrame] = []
        var offset = start
        while offset < bytes.count {
            switch FrameDecoder.decode(
                bytes, at: offset, format: format, readsBodies: readsBodies, verifyChecksum: verifyChecksums)
            {
            case .success(let frame) where outcome.sealedAt != nil:
                // Nothing is ever written after a seal: this is damage, never a torn tail.
                outcome.damages.append(
                    SegmentDamage(
                        offset: frame.offset, reason: "frame after the segment's seal", nextValidFrame: frame.offset))
                return outcome
            case .success(let frame) where FrameDecoder.rangeProblem(of: frame) != nil:
                // Written like this (its checksum holds): corruption, never a torn tail.
                let reason = FrameDecoder.rangeProblem(of: frame) ?? ""
                let damage = SegmentDamage(offset: frame.offset, reason: reason, nextValidFrame: frame.offset)
                let goesOn = continueAfterDamage(damage, outcome)
                outcome.damages.append(damage)
                pending.removeAll(keepingCapacity: true)
                guard goesOn else { return outcome }
                offset += frame.length
            case .success(let frame) where frame.kind == .seal:
                guard frame.id == UInt64(frame.offset), frame.flags.contains(.commit), pending.isEmpty,
                    batchChecksumHolds(frame, batchStart: frame.offset)
                else {
                    outcome.damages.append(
                        SegmentDamage(offset: frame.offset, reason: "invalid seal frame", nextValidFrame: frame.offset))
                    return outcome
                }
                outcome.sealedAt = frame.offset
                offset += frame.length
                outcome.committedEnd = offset
            case .success(let frame)
            where frame.flags.contains(.commit)
                && !batchChecksumHolds(frame, batchStart: pending.first?.offset ?? frame.offset):
                // Every frame of the batch is whole, but together they are not what was written.
                let start = pending.first?.offset ?? frame.offset
                let next = FrameDecoder.nextValidFrame(
                    in: bytes, after: frame.offset, format: format, readsBodies: readsBodies)
                let damage = SegmentDamage(offset: start, reason: "batch checksum mismatch", nextValidFrame: next)
                let goesOn = next != nil && continueAfterDamage(damage, outcome)
                outcome.damages.append(damage)
                pending.removeAll(keepingCapacity: true)
                guard goesOn, let next else { return outcome }
                offset = next
            case .success(let frame):
                pending.append(frame)
                offset += frame.length
                if frame.flags.contains(.commit) {
                    for committed in pending {
                        onCommittedFrame(committed)
                        outcome.maxSequence = max(outcome.maxSequence, committed.sequence)
                        outcome.minSequence = min(outcome.minSequence, committed.sequence)
                    }
                    outcome.frames += pending.count
                    pending.removeAll(keepingCapacity: true)
                    outcome.committedEnd = offset
                }
            case .failure(let problem):
                let next = FrameDecoder.nextValidFrame(
                    in: bytes, after: offset, format: format, readsBodies: readsBodies)
                let damage = SegmentDamage(offset: offset, reason: problem.reason, nextValidFrame: next)
                let goesOn = next != nil && continueAfterDamage(damage, outcome)
                outcome.damages.append(damage)
                pending.removeAll(keepingCapacity: true)
                guard goesOn, let next else { return outcome }
                offset = next
            }
        }
        if let first = pending.first {
            outcome.damages.append(
                SegmentDamage(
                    offset: first.offset,
                    reason: "\(pending.count) frame(s) of a batch without its commit frame at the end of the segment",
                    nextValidFrame: nil))
        }
        return outcome
    }

    /// Whether a version-2 commit frame's batch checksum matches the batch from `batchStart` (always true
    /// in version 1, which has none, and when checksums are not checked).
    private func batchChecksumHolds(_ frame: DecodedFrame, batchStart: Int) -> Bool {
        guard format.isCompact, verifyChecksums else { return true }
        return CompactFrameDecoder.batchChecksumMatches(frame, batchStart: batchStart, in: bytes)
    }
}
