/// Damage found while scanning a segment: where, why, and whether a valid frame follows it.
package struct SegmentDamage: Equatable, Sendable {
    /// Offset of the first byte that is not part of a committed, valid frame sequence.
    package var offset: Int
    /// What is wrong there.
    package var reason: String
    /// Offset of the next valid frame after the damage, or nil when none follows (a torn tail,
    /// if this is the newest segment).
    package var nextValidFrame: Int?
    /// The damage is a group of commits a crash tore out of order (``TornGroup``): a torn tail, not
    /// corruption, though valid frames follow it.
    package var isTornGroup = false
}

/// Walks the frames of one segment in order and hands out committed batches.
///
/// A batch is the frames from one commit-flagged frame (exclusive) to the next (inclusive); the
/// scanner calls `onCommittedFrame` for its frames only once the commit frame was read, so an
/// unfinished batch at the end is never applied.
package struct SegmentScanner {
    /// The whole segment, header included, up to the end of the file.
    package let bytes: UnsafeRawBufferPointer
    /// Check every frame's checksum (off only for the compactor, which checks what it copies).
    package var verifyChecksums = true

    package init(bytes: UnsafeRawBufferPointer, verifyChecksums: Bool = true) {
        self.bytes = bytes
        self.verifyChecksums = verifyChecksums
    }

    /// The result of a scan.
    package struct Outcome {
        /// Offset just after the last committed frame (the header size when there is none).
        package var committedEnd: Int
        /// Problems met, in file order: at most one unless `continueAfterDamage` was set.
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
    /// - parameter continueAfterDamage: go on from the next valid frame after damage (for `verify`)
    ///   instead of stopping at the first.
    /// - parameter tellsTornGroups: the segment is the newest: damage after the last commit that is a
    ///   group torn out of order (``TornGroup``) ends the scan, flagged, even when valid frames follow.
    package func scan(
        continueAfterDamage: Bool = false, tellsTornGroups: Bool = false, onCommittedFrame: (DecodedFrame) -> Void
    ) -> Outcome {
        var outcome = Outcome(committedEnd: LogFormat.segmentHeaderSize)
        var pending: [DecodedFrame] = []
        var offset = LogFormat.segmentHeaderSize
        while offset < bytes.count {
            switch FrameDecoder.decode(bytes, at: offset, verifyChecksum: verifyChecksums) {
            case .success(let frame) where outcome.sealedAt != nil:
                // Nothing is ever written after a seal: this is damage, never a torn tail.
                outcome.damages.append(
                    SegmentDamage(
                        offset: frame.offset, reason: "frame after the segment's seal", nextValidFrame: frame.offset))
                return outcome
            case .success(let frame) where FrameDecoder.rangeProblem(of: frame) != nil:
                // Written like this (its checksum holds): corruption, never a torn tail.
                let reason = FrameDecoder.rangeProblem(of: frame) ?? ""
                outcome.damages.append(
                    SegmentDamage(offset: frame.offset, reason: reason, nextValidFrame: frame.offset))
                pending.removeAll(keepingCapacity: true)
                guard continueAfterDamage else { return outcome }
                offset += frame.length
            case .success(let frame) where frame.kind == .seal:
                guard frame.id == UInt64(frame.offset), frame.flags.contains(.commit), pending.isEmpty else {
                    outcome.damages.append(
                        SegmentDamage(offset: frame.offset, reason: "invalid seal frame", nextValidFrame: frame.offset))
                    return outcome
                }
                outcome.sealedAt = frame.offset
                offset += frame.length
                outcome.committedEnd = offset
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
                let next = FrameDecoder.nextValidFrame(in: bytes, after: offset)
                if tellsTornGroups, outcome.damages.isEmpty, let next,
                    TornGroup.isTorn(
                        bytes, committedEnd: outcome.committedEnd, damage: offset, nextValidFrame: next,
                        newestSequence: outcome.maxSequence)
                {
                    outcome.damages.append(
                        SegmentDamage(
                            offset: offset,
                            reason: "a group of commits torn out of order by a crash (\(problem.reason))",
                            nextValidFrame: next, isTornGroup: true))
                    return outcome
                }
                outcome.damages.append(SegmentDamage(offset: offset, reason: problem.reason, nextValidFrame: next))
                pending.removeAll(keepingCapacity: true)
                guard continueAfterDamage, let next else { return outcome }
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
}
