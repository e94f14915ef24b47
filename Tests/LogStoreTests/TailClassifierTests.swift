import Testing

@testable @_spi(Testing) import LogStore
@_spi(Engine) @testable import LogStoreFormat

/// One test per shape of a segment's end (``TailClassifier``), built in memory frame by frame, and the
/// action ``RecoveryPolicy`` takes for each in each context.
@Suite struct TailClassifierTests {
    /// A segment being built in memory: header, then frames (in the layout this code writes).
    final class SegmentBytes {
        let buffer = WriteBuffer()
        private(set) var sequence: UInt64 = 0
        /// Where the open batch (frames after the last commit frame) starts.
        private var batchStart: Int
        private let encoder = CompactFrameEncoder(compressionMinimumSize: 0)

        init(number: UInt32 = 1) {
            let header = SegmentHeader(segmentNumber: number, createdAtMilliseconds: 1).encoded()
            let start = buffer.reserve(header.count)
            header.withUnsafeBytes {
                if let base = $0.baseAddress { start.copyMemory(from: base, byteCount: $0.count) }
            }
            buffer.commit(header.count)
            batchStart = header.count
        }

        var count: Int { buffer.count }

        /// Appends a `put` frame of a fresh sequence number; returns its offset.
        @discardableResult
        func put(commit: Bool = true, payload: [UInt8] = [1, 2, 3], sequence fixed: UInt64? = nil) -> Int {
            sequence = fixed ?? sequence + 1
            let offset = buffer.count
            _ = payload.withUnsafeBytes { raw in
                encoder.append(
                    kind: .put, flags: [], sequence: sequence, baseSequence: 0, id: sequence, typeTag: 1,
                    references: .ids([]), payload: .raw(raw), batchStart: commit ? batchStart : nil, to: buffer)
            }
            if commit { batchStart = buffer.count }
            return offset
        }

        /// Appends the seal frame.
        func seal() {
            encoder.append(
                kind: .seal, flags: [], sequence: sequence, baseSequence: 0, id: UInt64(buffer.count), typeTag: 0,
                references: .ids([]), payload: .raw(UnsafeRawBufferPointer(start: nil, count: 0)),
                batchStart: buffer.count, to: buffer)
        }

        /// Offset of the first payload byte of the frame at `offset`.
        func payloadOffset(of offset: Int) -> Int {
            let frame = try? buffer.bytes.withUnsafeBytes {
                try CompactFrameDecoder.decode($0, at: offset, baseSequence: 0, verifyChecksum: false).get()
            }
            return frame?.payloadOffset ?? offset
        }

        var bytes: [UInt8] { Array(buffer.bytes) }
    }

    func classify(
        _ bytes: [UInt8], role: TailClassifier.Role, fileSize: Int? = nil, listEveryDamage: Bool = false
    ) -> (TailClassifier.Result, frames: Int) {
        var frames = 0
        let result = bytes.withUnsafeBytes { raw in
            TailClassifier(bytes: raw, fileSize: fileSize, role: role).classify(listEveryDamage: listEveryDamage) {
                _ in frames += 1
            }
        }
        return (result, frames)
    }

    @Test func aSealedSegmentIsClean() {
        let segment = SegmentBytes()
        for _ in 0..<3 { segment.put() }
        segment.seal()
        for role in [TailClassifier.Role.sealed, .append, .appendAfterCrash] {
            let (result, frames) = classify(segment.bytes, role: role)
            #expect(result.tail == .clean, "\(role)")
            #expect(frames == 3 && result.scan.sealedAt != nil)
        }
    }

    @Test func aMissingSealIsCorruptionOnlyBeforeTheAppendSegment() {
        let segment = SegmentBytes()
        for _ in 0..<3 { segment.put() }
        let (sealed, _) = classify(segment.bytes, role: .sealed)
        guard case .corrupt(let damage) = sealed.tail else {
            Issue.record("\(sealed.tail)")
            return
        }
        #expect(damage.offset == segment.count && damage.reason.contains("without its seal frame"))
        #expect(classify(segment.bytes, role: .append).0.tail == .clean)
        #expect(classify(segment.bytes, role: .appendAfterCrash).0.tail == .clean)
    }

    @Test func aCutFrameIsATornTailOnlyInTheAppendSegmentAfterACrash() {
        let segment = SegmentBytes()
        segment.put()
        let end = segment.count
        segment.put(payload: Array(repeating: 7, count: 100))
        let bytes = Array(segment.bytes.dropLast(30))
        let (result, frames) = classify(bytes, role: .appendAfterCrash)
        #expect(frames == 1)
        guard case .tornTail(let committedEnd, let damage) = result.tail else {
            Issue.record("\(result.tail)")
            return
        }
        #expect(committedEnd == end && damage.offset == end && damage.nextValidFrame == nil)
        #expect(result.tail.validEnd == end)
        for role in [TailClassifier.Role.sealed, .append] {
            #expect(classify(bytes, role: role).0.tail == .corrupt(damage), "\(role)")
        }
    }

    @Test func aBatchWithoutItsCommitFrameIsATornTail() {
        let segment = SegmentBytes()
        segment.put()
        let end = segment.count
        segment.put(commit: false)
        segment.put(commit: false)
        let (result, frames) = classify(segment.bytes, role: .appendAfterCrash)
        #expect(frames == 1)
        guard case .tornTail(end, let damage) = result.tail else {
            Issue.record("\(result.tail)")
            return
        }
        #expect(damage.reason.contains("without its commit frame"))
    }

    @Test func zerosAfterTheLastCommitAreExtendedSpace() {
        let segment = SegmentBytes()
        segment.put()
        let end = segment.count
        let bytes = segment.bytes + [UInt8](repeating: 0, count: 4096)
        #expect(classify(bytes, role: .appendAfterCrash).0.tail == .preallocatedZeros(committedEnd: end))
        // Beyond the append segment after a crash, zeros are damage like any other.
        if case .corrupt = classify(bytes, role: .append).0.tail {} else { Issue.record("zeros accepted") }
        // A hole past the bytes (the file is longer than its data), right where the frames end.
        #expect(
            classify(segment.bytes, role: .appendAfterCrash, fileSize: end + 8192).0.tail
                == .preallocatedZeros(committedEnd: end))
    }

    @Test func damageThatValidFramesFollowIsCorruption() {
        let segment = SegmentBytes()
        let first = segment.put()
        segment.put()
        let second = segment.put()
        segment.put()
        var bytes = segment.bytes
        bytes[segment.payloadOffset(of: first)] ^= 0xFF
        let (result, frames) = classify(bytes, role: .appendAfterCrash)
        #expect(frames == 0)
        guard case .corrupt(let damage) = result.tail else {
            Issue.record("\(result.tail)")
            return
        }
        #expect(damage.offset == first && damage.reason.contains("checksum mismatch"))
        #expect(result.earlierCorruption.isEmpty)

        // Listing every damage goes on after it: two corruptions, the last of them the tail.
        bytes[segment.payloadOffset(of: second)] ^= 0xFF
        let (listed, listedFrames) = classify(bytes, role: .appendAfterCrash, listEveryDamage: true)
        #expect(listed.earlierCorruption.map(\.offset) == [first])
        #expect(listedFrames == 2)
        if case .corrupt(let last) = listed.tail {
            #expect(last.offset == second)
        } else {
            Issue.record("\(listed.tail)")
        }
        // With the last frame cut, nothing valid follows the second damage: a corruption, then a torn tail.
        bytes.removeLast(10)
        let (torn, tornFrames) = classify(bytes, role: .appendAfterCrash, listEveryDamage: true)
        #expect(torn.earlierCorruption.map(\.offset) == [first])
        #expect(tornFrames == 1)
        #expect(torn.tail.validEnd == second)
    }

    /// A group of two batches whose first sector the disk lost while it kept the second batch.
    @Test func aGroupTornOutOfOrderIsCutOnlyInTheAppendSegmentAfterACrash() {
        let segment = SegmentBytes()
        segment.put()
        let end = segment.count
        let first = segment.put(payload: [UInt8](repeating: 0, count: 600))
        #expect(first == end && first + 600 > 512)
        segment.put()
        var bytes = segment.bytes
        for index in end..<512 { bytes[index] = 0 }
        let (result, frames) = classify(bytes, role: .appendAfterCrash, listEveryDamage: true)
        #expect(frames == 1, "the frames of the torn group are not applied")
        guard case .tornGroup(end, let damage) = result.tail else {
            Issue.record("\(result.tail)")
            return
        }
        #expect(damage.offset == end && damage.reason.hasPrefix("a group of commits torn out of order by a crash"))
        // Closed cleanly, the same bytes are corruption, and listing goes on past it.
        let cause = SegmentDamage(
            offset: end, reason: damage.reason.tornGroupCause, nextValidFrame: damage.nextValidFrame)
        let (clean, cleanFrames) = classify(bytes, role: .append, listEveryDamage: true)
        #expect(cleanFrames == 2)
        #expect(clean.tail == .corrupt(cause) && clean.earlierCorruption.isEmpty)
        #expect(classify(bytes, role: .sealed).0.tail == .corrupt(cause))
    }

    /// When the lost sector held the start of the batch whose commit frame survived, nothing valid
    /// follows the damage (the commit frame's batch checksum names the bytes that were lost): a torn tail.
    @Test func aBatchWhoseStartWasLostIsATornTail() {
        let segment = SegmentBytes()
        segment.put()
        let end = segment.count
        segment.put(commit: false, payload: [UInt8](repeating: 0, count: 600))
        segment.put()
        var bytes = segment.bytes
        for index in end..<512 { bytes[index] = 0 }
        let (result, frames) = classify(bytes, role: .appendAfterCrash)
        #expect(frames == 1)
        guard case .tornTail(end, let damage) = result.tail else {
            Issue.record("\(result.tail)")
            return
        }
        #expect(damage.offset == end && damage.nextValidFrame == nil)
    }

    /// The same shape, but the frame after the damage is older than the last commit: corruption.
    @Test func damageFollowedByAnOlderFrameIsCorruption() {
        let segment = SegmentBytes()
        segment.put(sequence: 5)
        let end = segment.count
        segment.put(payload: [UInt8](repeating: 0, count: 600), sequence: 6)
        segment.put(sequence: 3)
        var bytes = segment.bytes
        for index in end..<512 { bytes[index] = 0 }
        guard case .corrupt(let damage) = classify(bytes, role: .appendAfterCrash).0.tail else {
            Issue.record("not corruption")
            return
        }
        #expect(damage.offset == end)
    }
}

extension String {
    /// The reason of the damage a torn group was found at, without the words that call it one.
    fileprivate var tornGroupCause: String {
        let prefix = "a group of commits torn out of order by a crash ("
        guard hasPrefix(prefix), hasSuffix(")") else { return self }
        return String(dropFirst(prefix.count).dropLast())
    }
}

/// What ``RecoveryPolicy`` does with each classification in each context.
@Suite struct RecoveryPolicyTests {
    let damage = SegmentDamage(offset: 120, reason: "frame needs 80 bytes but only 20 remain", nextValidFrame: nil)

    func segment(append: Bool = true, closedCleanly: Bool = false) -> RecoveryPolicy.Segment {
        RecoveryPolicy.Segment(
            path: "/s/0000000002.seg", size: 1000, dataEnd: 600, isAppendSegment: append,
            closedCleanly: closedCleanly)
    }

    @Test func onlyTheAppendSegmentAfterACrashMayEndTorn() {
        #expect(RecoveryPolicy.role(isAppendSegment: false, closedCleanly: false) == .sealed)
        #expect(RecoveryPolicy.role(isAppendSegment: false, closedCleanly: true) == .sealed)
        #expect(RecoveryPolicy.role(isAppendSegment: true, closedCleanly: true) == .append)
        #expect(RecoveryPolicy.role(isAppendSegment: true, closedCleanly: false) == .appendAfterCrash)
    }

    @Test func aTornTailIsCutKeptReportedOrNoted() {
        let report = RecoveryReport(
            segmentFile: "/s/0000000002.seg", cutOffset: 100, bytesCut: 900, savedTo: nil, reason: damage.reason)
        for tail in [
            SegmentTail.tornTail(committedEnd: 100, damage: damage), .tornGroup(committedEnd: 100, damage: damage),
        ] {
            #expect(
                RecoveryPolicy(context: .openForWriting).action(for: tail, of: segment())
                    == .cutAndKeep(report, keepingThrough: 600))
            #expect(RecoveryPolicy(context: .readOnlyOpen).action(for: tail, of: segment()) == .report(report))
            guard case .note(let note) = RecoveryPolicy(context: .verify).action(for: tail, of: segment()) else {
                Issue.record("verify does not note a torn tail")
                continue
            }
            #expect(
                note.contains("torn tail of 900 bytes at offset 100") && note.hasSuffix("opening for writing cuts it"))
            // Anywhere else, or after a clean close, it is corruption.
            for other in [segment(append: false), segment(closedCleanly: true)] {
                for context in [RecoveryPolicy.Context.openForWriting, .readOnlyOpen, .verify] {
                    #expect(
                        RecoveryPolicy(context: context).action(for: tail, of: other)
                            == .refuse(.corruptFrame, offset: 120, reason: damage.reason))
                }
            }
        }
    }

    @Test func zerosAreTrimmedIgnoredOrNoted() {
        let tail = SegmentTail.preallocatedZeros(committedEnd: 100)
        let what = "/s/0000000002.seg: 900 zero bytes after the last frame (space extended ahead of the writes)"
        #expect(
            RecoveryPolicy(context: .openForWriting).action(for: tail, of: segment())
                == .trim(to: 100, note: what + "; trimmed"))
        #expect(RecoveryPolicy(context: .readOnlyOpen).action(for: tail, of: segment()) == .note(what + "; ignored"))
        #expect(
            RecoveryPolicy(context: .verify).action(for: tail, of: segment())
                == .note(what + "; opening for writing trims them"))
    }

    @Test func corruptionIsRefusedAndCleanIsAccepted() {
        for context in [RecoveryPolicy.Context.openForWriting, .readOnlyOpen, .verify] {
            let policy = RecoveryPolicy(context: context)
            #expect(policy.action(for: .clean, of: segment()) == .accept)
            #expect(
                policy.action(for: .corrupt(damage), of: segment())
                    == .refuse(.corruptFrame, offset: 120, reason: damage.reason))
            #expect(policy.listsProblems == (context == .verify))
        }
    }

    @Test func anIncompleteHeaderOfTheAppendSegmentAfterACrashIsAnInterruptedCreation() {
        let short = RecoveryPolicy.Segment(
            path: "/s/0000000002.seg", size: 20, dataEnd: 20, isAppendSegment: true, closedCleanly: false)
        let problem = SegmentHeader.Problem.truncated(20)
        let reason = "segment header incomplete or zero (20 bytes): creation interrupted"
        let report = RecoveryReport(segmentFile: short.path, cutOffset: 0, bytesCut: 20, savedTo: nil, reason: reason)
        #expect(
            RecoveryPolicy(context: .openForWriting).action(
                forHeader: problem, allZeros: false, isListed: false, of: short) == .removeAndKeep(report))
        #expect(
            RecoveryPolicy(context: .readOnlyOpen).action(
                forHeader: problem, allZeros: false, isListed: false, of: short)
                == .report(report))
        #expect(
            RecoveryPolicy(context: .verify).action(forHeader: problem, allZeros: false, isListed: false, of: short)
                == .note(short.path + ": " + reason + "; opening for writing removes it"))
        // Listed in the manifest: its data is lost.
        #expect(
            RecoveryPolicy(context: .openForWriting).action(
                forHeader: problem, allZeros: false, isListed: true, of: short)
                == .refuse(
                    .corruptSegmentHeader, offset: 0,
                    reason: problem.reason + "; the segment manifest lists this segment, so its data is lost"))
        // After a clean close, or in another segment: corruption.
        var closed = short
        closed.closedCleanly = true
        var sealed = short
        sealed.isAppendSegment = false
        for facts in [closed, sealed] {
            #expect(
                RecoveryPolicy(context: .openForWriting).action(
                    forHeader: problem, allZeros: false, isListed: false, of: facts)
                    == .refuse(.corruptSegmentHeader, offset: 0, reason: problem.reason))
        }
        #expect(
            RecoveryPolicy(context: .verify).action(
                forHeader: .unsupportedVersion(9), allZeros: false, isListed: false, of: segment())
                == .refuse(.unsupportedVersion, offset: 0, reason: "unsupported segment format version 9"))
    }
}

extension TailClassifierTests {
    /// A valid frame after the seal is corruption even at the end of the append segment after a crash
    /// (the scanner gives it a next valid frame: itself), as before the classifier. Format.md 6.4 says
    /// such seal damage counts as having no next valid frame and is cut as a torn tail: the two disagree.
    @Test func aFrameAfterTheSealIsCorruption() {
        let segment = SegmentBytes()
        segment.put()
        segment.seal()
        let after = segment.put()
        guard case .corrupt(let damage) = classify(segment.bytes, role: .appendAfterCrash).0.tail else {
            Issue.record("not corruption")
            return
        }
        #expect(damage.offset == after && damage.reason == "frame after the segment's seal")
    }
}
