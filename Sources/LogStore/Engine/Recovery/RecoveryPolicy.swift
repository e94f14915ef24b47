@_spi(Engine) import LogStoreFormat

/// What an open for writing, a read-only open and `verify` do about what they find at the start and
/// the end of a segment: the one place that maps a classification (``TailClassifier``, or a segment
/// header that is not valid) and the context to an action (`Documentation/Format.md`, sections 6.4,
/// 6.5 and 6.7).
///
/// - An open for writing cuts a torn tail (or removes an interrupted segment) after keeping its bytes
///   in a side file, trims zeros extended ahead of the writes, and refuses corruption.
/// - A read-only open changes nothing: it reports a torn tail in `Store.recovery`, ignores the zeros,
///   and refuses corruption.
/// - `verify` changes nothing and refuses nothing: it notes what an open would repair and lists every
///   corruption as a problem.
///
/// Only the append segment of a store that was not closed cleanly may have a torn tail, a torn group,
/// zeros after its frames or an interrupted creation; anywhere else every damage is corruption.
struct RecoveryPolicy: Sendable {
    /// Who loads the store.
    enum Context: Equatable, Sendable {
        /// `Store.open` for writing: holds the lock, may repair.
        case openForWriting
        /// `Store.open` read-only: takes no lock, changes nothing.
        case readOnlyOpen
        /// `Store.verify`: takes no lock, changes nothing, lists every problem.
        case verify
    }

    /// The facts about one segment that the policy weighs.
    struct Segment: Sendable {
        var path: String
        /// The file's size.
        var size: UInt64
        /// Where its data ends: past it lie zeros and holes (checked when it was found), which a side
        /// file does not keep.
        var dataEnd: UInt64
        /// Whether it is the append segment (the highest-numbered one that is not a compaction output).
        var isAppendSegment: Bool
        /// Whether the manifest records a clean close (one that still holds).
        var closedCleanly: Bool
    }

    /// What to do about a finding.
    enum Action: Equatable, Sendable {
        /// Nothing: the segment is valid as it is.
        case accept
        /// Change nothing; add the note (to `Store.openNotes`, or to the verification report).
        case note(String)
        /// Change nothing; report the torn tail (or interrupted creation) in `Store.recovery`.
        case report(RecoveryReport)
        /// Cut the segment back to `end` (only zeros follow: nothing is kept, nothing reported), sync it,
        /// then add the note.
        case trim(to: UInt64, note: String)
        /// Keep bytes `report.cutOffset ..< keepingThrough` in a side file, then cut the segment back to
        /// `report.cutOffset` and sync it; report it (with the side file) in `Store.recovery`.
        case cutAndKeep(RecoveryReport, keepingThrough: UInt64)
        /// Keep the whole file in a side file, then remove the segment and sync the directory; report it
        /// (with the side file) in `Store.recovery`.
        case removeAndKeep(RecoveryReport)
        /// Corruption at `offset`: an open fails with it (code `code`); `verify` lists it and goes on.
        case refuse(LogStoreError.Code, offset: UInt64, reason: String)
    }

    let context: Context

    /// Whether corruption is listed as a problem (and the load goes on) rather than thrown.
    var listsProblems: Bool { context == .verify }

    /// How the classifier is to read a segment: only the append segment of a store not closed cleanly
    /// may end torn.
    static func role(isAppendSegment: Bool, closedCleanly: Bool) -> TailClassifier.Role {
        guard isAppendSegment else { return .sealed }
        return closedCleanly ? .append : .appendAfterCrash
    }

    /// What to do about how a segment ends.
    func action(for tail: SegmentTail, of segment: Segment) -> Action {
        switch tail {
        case .clean:
            return .accept
        case .corrupt(let damage):
            return refusal(damage)
        case .preallocatedZeros(let end):
            let end = UInt64(end)
            guard segment.isAppendSegment, end <= segment.size else {
                return .refuse(.corruptFrame, offset: end, reason: "zero bytes after the last frame")
            }
            let what =
                "\(segment.path): \(segment.size - end) zero bytes after the last frame (space extended ahead of the writes)"
            switch context {
            case .verify: return .note(what + "; opening for writing trims them")
            case .readOnlyOpen: return .note(what + "; ignored")
            case .openForWriting: return .trim(to: end, note: what + "; trimmed")
            }
        case .tornTail(let end, let damage), .tornGroup(let end, let damage):
            let end = UInt64(end)
            guard segment.isAppendSegment, !segment.closedCleanly, end <= segment.size else { return refusal(damage) }
            let report = RecoveryReport(
                segmentFile: segment.path, cutOffset: end, bytesCut: segment.size - end, savedTo: nil,
                reason: damage.reason)
            switch context {
            case .verify:
                return .note(
                    "\(segment.path): torn tail of \(segment.size - end) bytes at offset \(end) (\(damage.reason)); "
                        + "opening for writing cuts it")
            case .readOnlyOpen:
                return .report(report)
            case .openForWriting:
                return .cutAndKeep(report, keepingThrough: max(end, min(segment.dataEnd, segment.size)))
            }
        }
    }

    /// What to do about corruption found before a segment's tail (`verify` goes on after damage).
    func action(forCorruption damage: SegmentDamage) -> Action { refusal(damage) }

    /// What to do about a segment whose header is not valid.
    ///
    /// - parameter allZeros: every byte of the file is zero.
    /// - parameter isListed: the manifest lists the segment (it was complete when it was listed).
    func action(
        forHeader problem: SegmentHeader.Problem, allZeros: Bool, isListed: Bool, of segment: Segment
    ) -> Action {
        let unfinished = segment.size < UInt64(LogFormat.segmentHeaderSize) || allZeros
        if segment.isAppendSegment, isListed, unfinished {
            let reason = problem.reason + "; the segment manifest lists this segment, so its data is lost"
            return .refuse(.corruptSegmentHeader, offset: 0, reason: reason)
        }
        var truncated = false
        if case .truncated = problem { truncated = true }
        // A crash between creating the file and syncing its header can leave it short, or zeros.
        if segment.isAppendSegment, !segment.closedCleanly, truncated || allZeros {
            return interruptedCreation(segment)
        }
        if case .unsupportedVersion = problem { return .refuse(.unsupportedVersion, offset: 0, reason: problem.reason) }
        return .refuse(.corruptSegmentHeader, offset: 0, reason: problem.reason)
    }

    /// The append segment's header is incomplete or zero: its creation was cut short by a crash.
    private func interruptedCreation(_ segment: Segment) -> Action {
        let reason = "segment header incomplete or zero (\(segment.size) bytes): creation interrupted"
        let report = RecoveryReport(
            segmentFile: segment.path, cutOffset: 0, bytesCut: segment.size, savedTo: nil, reason: reason)
        switch context {
        case .verify: return .note("\(segment.path): \(reason); opening for writing removes it")
        case .readOnlyOpen: return .report(report)
        case .openForWriting: return .removeAndKeep(report)
        }
    }

    private func refusal(_ damage: SegmentDamage) -> Action {
        .refuse(.corruptFrame, offset: UInt64(damage.offset), reason: damage.reason)
    }
}
