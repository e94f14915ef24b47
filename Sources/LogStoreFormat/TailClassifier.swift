/// Scans a segment and says how it ends: ``SegmentTail/clean``, ``SegmentTail/preallocatedZeros(committedEnd:)``,
/// ``SegmentTail/tornTail(committedEnd:damage:)``, ``SegmentTail/tornGroup(committedEnd:damage:)`` or
/// ``SegmentTail/corrupt(_:)``, with the offsets and the reason (`Documentation/Format.md`, sections 6.2
/// and 6.4).
///
/// The one place where the shapes of a crash's leftovers are told from corruption; built on
/// ``SegmentScanner`` (which finds damage) and ``TornGroup`` (the rule for a group torn out of order).
/// What is done about each is the engine's recovery policy.
///
/// For example:
/// ```swift
/// let result = TailClassifier(bytes: bytes, role: .appendAfterCrash).classify { frame in apply(frame) }
/// if case .tornTail(let end, let damage) = result.tail { print("torn at \(end): \(damage.reason)") }
/// ```
package struct TailClassifier {
    /// Which segment is classified, which decides which shapes its end may take.
    package enum Role: Equatable, Sendable {
        /// A segment other than the append segment: it must end with its seal frame, and any damage is
        /// corruption.
        case sealed
        /// The append segment of a store closed cleanly: it need not be sealed, but any damage is
        /// corruption (a clean close leaves nothing torn).
        case append
        /// The append segment of a store not closed cleanly (or beside a writer): its end may be torn, a
        /// torn group, or zeros extended ahead of the writes.
        case appendAfterCrash
    }

    /// What a classification found.
    package struct Result {
        /// The scan: committed frames, sequence numbers, seal, and where the last commit ends.
        package var scan: SegmentScanner.Outcome
        /// How the segment ends.
        package var tail: SegmentTail
        /// Corruption before the tail, in file order: only when every damage is listed (`verify`), and
        /// then every damage but the last.
        package var earlierCorruption: [SegmentDamage] = []
    }

    /// The segment from its first byte (header included) to where its data ends.
    package let bytes: UnsafeRawBufferPointer
    /// The file's size: larger than `bytes.count` when the bytes past them are known to read as zeros (a
    /// hole the writer extended the segment by, found with `SEEK_HOLE`).
    package let fileSize: Int
    package let role: Role

    /// - parameter fileSize: the file's size, when bytes past `bytes` are known to be zeros; nil when
    ///   `bytes` is the whole file.
    package init(bytes: UnsafeRawBufferPointer, fileSize: Int? = nil, role: Role) {
        self.bytes = bytes
        self.fileSize = max(fileSize ?? bytes.count, bytes.count)
        self.role = role
    }

    /// Scans the frames after the header (which the caller has checked), calling `onCommittedFrame` for
    /// each committed frame in order, and classifies the end.
    ///
    /// - parameter listEveryDamage: go on after damage that a valid frame follows (for `verify`), so
    ///   that every damaged place is found; a torn group still ends the scan (its frames are not applied).
    package func classify(listEveryDamage: Bool = false, onCommittedFrame: (DecodedFrame) -> Void) -> Result {
        var tornGroup: SegmentDamage?
        let outcome = SegmentScanner(bytes: bytes).scan(
            continueAfterDamage: { damage, before in
                if role == .appendAfterCrash, before.damages.isEmpty, isTornGroup(damage, before: before) {
                    tornGroup = damage
                    return false
                }
                return listEveryDamage
            }, onCommittedFrame: onCommittedFrame)
        let committedEnd = outcome.committedEnd
        if let damage = tornGroup {
            var described = damage
            described.reason = "a group of commits torn out of order by a crash (\(damage.reason))"
            return Result(scan: outcome, tail: .tornGroup(committedEnd: committedEnd, damage: described))
        }
        guard let last = outcome.damages.last else {
            if role == .sealed, outcome.sealedAt == nil {
                let damage = SegmentDamage(
                    offset: committedEnd,
                    reason: "segment ends without its seal frame: truncated (or frames lost) at the end",
                    nextValidFrame: nil)
                return Result(scan: outcome, tail: .corrupt(damage))
            }
            if fileSize > bytes.count, committedEnd == bytes.count {
                // The frames end exactly where the hole begins.
                return Result(scan: outcome, tail: .preallocatedZeros(committedEnd: committedEnd))
            }
            return Result(scan: outcome, tail: .clean)
        }
        let earlier = Array(outcome.damages.dropLast())
        // Only damage at the very end (nothing valid after it) can be what a crash left.
        guard role == .appendAfterCrash, last.nextValidFrame == nil, last.offset >= committedEnd,
            committedEnd <= bytes.count
        else {
            return Result(scan: outcome, tail: .corrupt(last), earlierCorruption: earlier)
        }
        if bytes[committedEnd...].allSatisfy({ $0 == 0 }) {
            return Result(
                scan: outcome, tail: .preallocatedZeros(committedEnd: committedEnd), earlierCorruption: earlier)
        }
        return Result(
            scan: outcome, tail: .tornTail(committedEnd: committedEnd, damage: last), earlierCorruption: earlier)
    }

    /// Whether `damage`, the first of the scan, is a group of commits torn out of order (``TornGroup``).
    private func isTornGroup(_ damage: SegmentDamage, before: SegmentScanner.Outcome) -> Bool {
        guard let next = damage.nextValidFrame else { return false }
        return TornGroup.isTorn(
            bytes, committedEnd: before.committedEnd, damage: damage.offset, nextValidFrame: next,
            newestSequence: before.maxSequence)
    }
}
