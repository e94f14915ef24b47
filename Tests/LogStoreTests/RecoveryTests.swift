import Foundation
@_spi(Engine) import LogStoreFormat
import Synchronization
import TestSupport
import Testing

@testable @_spi(Testing) import LogStore

@Suite struct RecoveryTests {
    /// Appends `bytes` to a file.
    func append(_ bytes: [UInt8], to path: String) throws {
        let handle = try #require(FileHandle(forWritingAtPath: path))
        handle.seekToEndOfFile()
        handle.write(Data(bytes))
        handle.closeFile()
    }

    /// The code of the error opening the store at `path` throws, or nil when it opens.
    func openFailure(at path: String, segmentSize: Int) -> LogStoreError.Code? {
        do {
            try Store.open(at: path, options: testOptions(segmentSize: segmentSize)).close()
            return nil
        } catch {
            return error.code
        }
    }

    func fileSize(_ path: String) throws -> Int {
        try #require(FileManager.default.attributesOfItem(atPath: path)[.size] as? Int)
    }

    /// The segment being written is extended ahead of its writes: a crash leaves zeros after the last
    /// frame, which the open trims (with a note, no side file, no recovery report); a seal and a clean
    /// close cut segments back to their frames.
    @Test func spaceExtendedAheadOfTheWritesIsTrimmed() throws {
        let directory = TemporaryStore("prefill")
        let copy = TemporaryStore("prefill-crashed")
        var expected: [Record] = []
        let store = try directory.open(options: testOptions(segmentSize: 1 << 20))
        for index in 0..<400 {  // ~1.6 segments of 1 MiB
            let id = try store.put(typeTag: 1, payload: payloadBytes(4000, seed: UInt64(index)))
            expected.append(try #require(try store.get(id)))
        }
        let stats = try store.statistics()
        let segments = directory.segmentFiles()
        #expect(segments.count >= 2)
        for (segment, file) in zip(stats.segments, segments) {
            let size = UInt64(try fileSize(file))
            if segment.isActive {
                #expect(size > segment.bytes, "the segment being written is extended ahead")
            } else {
                #expect(size == segment.bytes, "a sealed segment is cut back to its frames")
            }
        }
        // What a crash now would leave: the files as they are, extension included.
        for name in directory.fileNames() where !name.hasSuffix(".lock") && name != "LOCK" {
            try FileManager.default.copyItem(atPath: directory.path + "/" + name, toPath: copy.path + "/" + name)
        }
        try store.close()
        for (segment, file) in zip(stats.segments, directory.segmentFiles()) {
            #expect(UInt64(try fileSize(file)) == segment.bytes, "closed: cut back to its frames")
        }
        let reopened = try copy.open(options: testOptions(segmentSize: 1 << 20))
        #expect(reopened.recovery == nil)
        #expect(reopened.openNotes.contains { $0.contains("zero bytes after the last frame") }, "\(reopened.openNotes)")
        #expect(!copy.fileNames().contains { $0.contains("torn") })
        for record in expected { #expect(try reopened.get(record.id) == record) }
        let trimmed = try reopened.statistics()
        try reopened.close()
        for (segment, file) in zip(trimmed.segments, copy.segmentFiles()) {
            #expect(UInt64(try fileSize(file)) == segment.bytes)
        }
    }

    /// After a crash the extension can hold zeros a writer of small commits wrote ahead of itself, after
    /// a hole: they are trimmed like the hole, not taken for data after a hole inside the log.
    @Test func zerosAfterAHoleAreTrimmedToo() throws {
        let directory = TemporaryStore("zeros-after-hole")
        var expected: [Record] = []
        do {
            let store = try directory.open(options: testOptions(segmentSize: 4 << 20))
            for index in 0..<200 {
                let id = try store.put(typeTag: 1, payload: payloadBytes(300, seed: UInt64(index)))
                expected.append(try #require(try store.get(id)))
            }
            try store.close()
            try forgetCleanClose(directory.path)  // as a crash would leave it
        }
        // The file as a crash could leave it: the frames, a hole, 128 KiB of zeros, a hole to 4 MiB.
        let path = try #require(directory.segmentFiles().last)
        let frames = UInt64(try fileSize(path))
        let io = SystemIO(faults: nil)
        let fd = try io.open(path, flags: O_RDWR)
        let zerosAt = (frames + (256 << 10)) / 4096 * 4096
        try io.truncate(fd, to: 4 << 20, path: path)
        try [UInt8](repeating: 0, count: 128 << 10).withUnsafeBytes { try io.writeAll(fd, $0, at: zerosAt, path: path) }
        try io.syncData(fd, path: path)
        let regions = io.dataRegions(fd, after: io.dataEnd(fd, size: 4 << 20), size: 4 << 20)
        io.close(fd)
        try #require(regions?.isEmpty == false, "the filesystem reports holes")

        #expect(try Store.verify(at: directory.path).isSound)
        let reopened = try directory.open(options: testOptions(segmentSize: 4 << 20))
        #expect(reopened.recovery == nil)
        #expect(reopened.openNotes.contains { $0.contains("zero bytes after the last frame") }, "\(reopened.openNotes)")
        for record in expected { #expect(try reopened.get(record.id) == record) }
        try reopened.close()
        #expect(UInt64(try fileSize(path)) == frames)
    }

    /// Writes 200 acknowledged records, then `later` more, closes, and zeroes `zeroed` (offsets relative to
    /// the end of the 200) as a lost write would: returns the store's directory, the 200 and the file.
    /// `unverifiedBecause` is for a test whose damage no open repairs (``TemporaryStore``).
    func storeWithLostSectors(
        later: Int, unverifiedBecause reason: String? = nil, zeroed: (Int) -> Range<Int>
    ) throws -> (TemporaryStore, [Record], String, committedEnd: Int) {
        let directory = TemporaryStore("torn-group", unverifiedBecause: reason)
        var acknowledged: [Record] = []
        let store = try directory.open(options: testOptions(segmentSize: 8 << 20))
        for index in 0..<200 {
            let id = try store.put(typeTag: 1, payload: payloadBytes(300, seed: UInt64(index)))
            acknowledged.append(try #require(try store.get(id)))
        }
        let committedEnd = Int(try #require(try store.statistics().segments.last).bytes)
        for index in 0..<later { try store.put(typeTag: 2, payload: payloadBytes(300, seed: UInt64(1000 + index))) }
        try store.close()
        try forgetCleanClose(directory.path)  // as a crash would leave it
        let path = try #require(directory.segmentFiles().last)
        var data = [UInt8](try Data(contentsOf: URL(fileURLWithPath: path)))
        let range = zeroed(committedEnd)
        data.replaceSubrange(range, with: [UInt8](repeating: 0, count: range.count))
        try Data(data).write(to: URL(fileURLWithPath: path))
        return (directory, acknowledged, path, committedEnd)
    }

    /// A power cut during a group's sync, where zeros written ahead made the group an overwrite, can keep
    /// a later sector of the group and lose an earlier one: valid frames after damage, but only frames of
    /// the unacknowledged group. That is a torn tail (cut, kept in a side file), not corruption.
    @Test func aGroupTornOutOfOrderIsCutLikeATornTail() throws {
        // The rest of the sector the last commit ends in and the next two are lost; 40 records follow.
        let (directory, acknowledged, path, committedEnd) = try storeWithLostSectors(later: 40) { end in
            end..<((end / 512 + 3) * 512)
        }
        #expect(try Store.verify(at: directory.path).isSound)
        let reopened = try directory.open(options: testOptions(segmentSize: 8 << 20))
        let recovery = try #require(reopened.recovery)
        #expect(recovery.cutOffset == UInt64(committedEnd))
        #expect(recovery.reason.contains("torn out of order"), "\(recovery.reason)")
        #expect(try reopened.count() == acknowledged.count)
        for record in acknowledged { #expect(try reopened.get(record.id) == record) }
        try reopened.close()
        #expect(UInt64(try fileSize(path)) == UInt64(committedEnd))
        #expect(directory.fileNames().contains { $0.contains("torn") })
    }

    /// The same lost sectors with frames further than a group can reach after them (or damage that is not
    /// a lost sector) are corruption: the open refuses, naming the file and offset.
    @Test func lostSectorsFollowedByMoreThanAGroupAreCorruption() throws {
        // 4,000 records (~1.3 MiB) after the lost sectors: more than zeros written ahead can cover.
        let (far, _, _, _) = try storeWithLostSectors(later: 4000, unverifiedBecause: "corruption, left as it is") {
            end in end..<((end / 512 + 3) * 512)
        }
        #expect(try !Store.verify(at: far.path).isSound)
        #expect(openFailure(at: far.path, segmentSize: 8 << 20) == .corruptFrame)
        // A damaged byte (not a zeroed sector) in the first of 40 later records.
        let (flipped, _, path, end) = try storeWithLostSectors(
            later: 40, unverifiedBecause: "a byte after the lost sectors is flipped"
        ) { end in end..<end }
        var data = [UInt8](try Data(contentsOf: URL(fileURLWithPath: path)))
        data[end + 40] ^= 0x5A
        try Data(data).write(to: URL(fileURLWithPath: path))
        #expect(openFailure(at: flipped.path, segmentSize: 8 << 20) == .corruptFrame)
    }

    /// A hole inside the log (damage, or a filesystem that reports data as a hole) is not taken for the
    /// end of it: the frames after it are found, and the open refuses the damage instead of trimming them.
    /// (Here 1.4 MB of frames follow the hole: more than a group torn out of order could leave, see
    /// `aGroupTornOutOfOrderIsCutLikeATornTail`.)
    @Test func dataAfterAHoleIsNeverTrimmed() throws {
        let directory = TemporaryStore("hole-inside", unverifiedBecause: "a hole is punched inside the log")
        do {
            let store = try directory.open(options: testOptions(segmentSize: 4 << 20))
            for index in 0..<1400 { try store.put(typeTag: 1, payload: payloadBytes(1000, seed: UInt64(index))) }
            try store.close()
            try forgetCleanClose(directory.path)  // as a crash would leave it
        }
        let path = try #require(directory.segmentFiles().last)
        let data = [UInt8](try Data(contentsOf: URL(fileURLWithPath: path)))
        var boundaries: [Int] = []
        data.withUnsafeBytes { raw in
            _ = SegmentScanner(bytes: raw).scan { frame in
                if frame.flags.contains(.commit) { boundaries.append(frame.offset + frame.length) }
            }
        }
        // Rewrite the file with zeros from a commit boundary up to a page boundary, then a 4 KiB hole, then
        // the rest of the log, and an extension after it.
        let boundary = try #require(boundaries.first { $0 > 8192 && $0 % 4096 != 0 })
        let holeStart = (boundary + 4095) / 4096 * 4096
        let holeEnd = holeStart + 4096
        let io = SystemIO(faults: nil)
        let fd = try io.open(path, flags: O_RDWR | O_TRUNC)
        defer { io.close(fd) }
        try io.truncate(fd, to: 4 << 20, path: path)
        try data.withUnsafeBytes {
            try io.writeAll(fd, UnsafeRawBufferPointer(rebasing: $0[..<boundary]), at: 0, path: path)
        }
        try [UInt8](repeating: 0, count: holeStart - boundary).withUnsafeBytes {
            try io.writeAll(fd, $0, at: UInt64(boundary), path: path)
        }
        try data.withUnsafeBytes {
            try io.writeAll(fd, UnsafeRawBufferPointer(rebasing: $0[holeEnd...]), at: UInt64(holeEnd), path: path)
        }
        try io.syncData(fd, path: path)
        #expect(try !Store.verify(at: directory.path).isSound)
        #expect(openFailure(at: directory.path, segmentSize: 4 << 20) == .corruptFrame)
    }

    /// A side file already holding the name a recovery picks (one an interrupted recovery left, or a
    /// clock set back) does not stop the open: the tail goes to the next free name.
    @Test func aTakenSideFileNameDoesNotStopTheRecovery() throws {
        let directory = TemporaryStore("torn-taken")
        let store = try directory.open(options: testOptions())
        let id = try store.put(typeTag: 1, payload: payloadBytes(100, seed: 1))
        try store.close()
        try forgetCleanClose(directory.path)
        let segment = try #require(directory.segmentFiles().last)
        try append([1, 2, 0, 0, 9, 9, 9], to: segment)

        // Just before the recovery creates its side file, a file of that name appears.
        let faults = FaultInjector()
        let squatted = Mutex<String?>(nil)
        faults.perform(before: .open, pathSuffix: "", times: 1_000) { path in
            guard path.contains(".torn-"), squatted.withLock({ $0 == nil }) else { return }
            squatted.withLock { $0 = path }
            _ = FileManager.default.createFile(atPath: path, contents: Data([0xEE]))
        }
        let reopened = try directory.open(options: testOptions(faults: faults))
        let taken = try #require(squatted.withLock { $0 })
        let saved = try #require(reopened.recovery?.savedTo)
        #expect(saved == taken + "-1")
        #expect(try Data(contentsOf: URL(fileURLWithPath: taken)) == Data([0xEE]))
        #expect(try Data(contentsOf: URL(fileURLWithPath: saved)) == Data([1, 2, 0, 0, 9, 9, 9]))
        #expect(try reopened.get(id)?.payload == payloadBytes(100, seed: 1))
        try reopened.close()
    }

    @Test func tornTailIsCutAndKeptInASideFile() throws {
        let directory = TemporaryStore("torn")
        var ids: [ObjectID] = []
        do {
            let store = try directory.open(options: testOptions())
            for index in 0..<10 {
                ids.append(try store.put(typeTag: 1, payload: payloadBytes(100, seed: UInt64(index))))
            }
            try store.close()
            try forgetCleanClose(directory.path)  // as a crash would leave it
        }
        let segment = try #require(directory.segmentFiles().last)
        let validSize = try fileSize(segment)
        let garbage: [UInt8] = [1, 2, 0, 0, 9, 9, 9]  // a frame header cut short
        try append(garbage, to: segment)

        let store = try directory.open(options: testOptions())
        let recovery = try #require(store.recovery)
        #expect(recovery.bytesCut == UInt64(garbage.count))
        #expect(recovery.cutOffset == UInt64(validSize))
        let saved = try #require(recovery.savedTo)
        #expect(try Data(contentsOf: URL(fileURLWithPath: saved)) == Data(garbage))
        #expect(try fileSize(segment) == validSize)
        for (index, id) in ids.enumerated() {
            #expect(try store.get(id)?.payload == payloadBytes(100, seed: UInt64(index)))
        }
        // Writing goes on after the cut.
        let next = try store.put(typeTag: 1, payload: [7])
        try store.close()
        let again = try directory.open(options: testOptions())
        #expect(again.recovery == nil)
        #expect(try again.get(next)?.payload == [7])
        try again.close()
    }

    @Test func halfWrittenBatchIsInvisibleAfterRecovery() throws {
        let directory = TemporaryStore("batch")
        let before: ObjectID
        var batchIDs: [ObjectID] = []
        let segment: String
        let sizeBeforeBatch: Int
        do {
            let store = try directory.open(options: testOptions(segmentSize: 1 << 20))
            before = try store.put(typeTag: 1, payload: [1])
            segment = try #require(directory.segmentFiles().last)
            sizeBeforeBatch = try fileSize(segment)
            var batch = WriteBatch()
            for _ in 0..<20 {
                let id = store.newID()
                batchIDs.append(id)
                batch.put(id, typeTag: 2, payload: payloadBytes(300, seed: id.rawValue))
            }
            batch.setRoot("batch", to: batchIDs[0])
            try store.write(batch)
            try store.close()
        }
        let fullSize = try fileSize(segment)
        // Every cut inside the batch leaves none of it visible; the record before it survives.
        for cut in stride(from: sizeBeforeBatch + 1, to: fullSize, by: 97) {
            let copy = TemporaryStore("batch-cut")
            let bytes = try Data(contentsOf: URL(fileURLWithPath: segment)).prefix(cut)
            try bytes.write(to: URL(fileURLWithPath: copy.path + "/" + (segment as NSString).lastPathComponent))
            let store = try copy.open(options: testOptions())
            #expect(store.recovery?.cutOffset == UInt64(sizeBeforeBatch), "cut at \(cut)")
            #expect(try store.get(before)?.payload == [1])
            for id in batchIDs { #expect(try store.get(id) == nil, "cut at \(cut)") }
            #expect(try store.root(named: "batch") == nil)
            try store.close()
        }
    }

    @Test func interruptedSegmentCreationIsRemoved() throws {
        let directory = TemporaryStore("creation")
        let id: ObjectID
        do {
            let store = try directory.open(options: testOptions())
            id = try store.put(typeTag: 1, payload: [5])
            try store.close()
            try forgetCleanClose(directory.path)  // as a crash would leave it
        }
        // The writer seals a full segment before it creates the next one.
        try sealSegmentFile(try #require(directory.segmentFiles().last))
        let partial = directory.path + "/" + LogFormat.segmentFileName(2)
        try Data(SegmentHeader(segmentNumber: 2, createdAtMilliseconds: 1).encoded().prefix(20)).write(
            to: URL(fileURLWithPath: partial))
        let store = try directory.open(options: testOptions())
        #expect(store.recovery?.bytesCut == 20)
        #expect(!FileManager.default.fileExists(atPath: partial))
        #expect(try store.get(id)?.payload == [5])
        try store.close()
    }

    @Test func readOnlyOpenReportsButDoesNotCut() throws {
        let directory = TemporaryStore("readonly")
        do {
            let store = try directory.open(options: testOptions())
            try store.put(typeTag: 1, payload: [1])
            try store.close()
            try forgetCleanClose(directory.path)  // as a crash would leave it
        }
        let segment = try #require(directory.segmentFiles().last)
        try append([1, 2, 3], to: segment)
        let size = try fileSize(segment)
        var options = testOptions()
        options.readOnly = true
        let store = try directory.open(options: options)
        #expect(store.recovery?.bytesCut == 3)
        #expect(store.recovery?.savedTo == nil)
        #expect(try fileSize(segment) == size)
        #expect(throws: LogStoreError.self) { try store.put(typeTag: 1, payload: []) }
        let report = try Store.verify(at: directory.path)
        #expect(report.isSound)
        #expect(report.notes.count == 1)
    }
}

extension RecoveryTests {
    @Test func writingWorksAfterAnInterruptedCreationOfALaterSegment() throws {
        let directory = TemporaryStore("creation-later")
        var ids: [ObjectID] = []
        do {
            let store = try directory.open(options: testOptions())
            for index in 0..<200 {
                ids.append(try store.put(typeTag: 1, payload: payloadBytes(600, seed: UInt64(index))))
            }
            try store.close()
            try forgetCleanClose(directory.path)  // as a crash would leave it
        }
        let count = directory.segmentFiles().count
        #expect(count >= 2)
        try sealSegmentFile(try #require(directory.segmentFiles().last))
        let partial = directory.path + "/" + LogFormat.segmentFileName(UInt32(count + 1))
        try Data(repeating: 0, count: 48).write(to: URL(fileURLWithPath: partial))  // a zero-filled header
        let store = try directory.open(options: testOptions())
        #expect(store.recovery != nil)
        let next = try store.put(typeTag: 1, payload: [42])
        #expect(try store.get(next)?.payload == [42])
        try store.close()
        let reopened = try directory.open(options: testOptions())
        #expect(try reopened.get(next)?.payload == [42])
        for (index, id) in ids.enumerated() {
            #expect(try reopened.get(id)?.payload == payloadBytes(600, seed: UInt64(index)))
        }
        try reopened.close()
    }

    @Test func aBatchLargerThanASegmentGetsItsOwnSegment() throws {
        let directory = TemporaryStore("oversized")
        let store = try directory.open(options: testOptions(segmentSize: 1 << 16))
        var batch = WriteBatch()
        var expected: [ObjectID: [UInt8]] = [:]
        for index in 0..<40 {
            let id = store.newID()
            expected[id] = payloadBytes(4000, seed: UInt64(index))
            batch.put(id, typeTag: 1, payload: expected[id] ?? [])
        }
        try store.write(batch)  // about 160 KB into an empty store of 64 KiB segments
        try store.write(batch)  // and again, into a full one
        for (id, payload) in expected { #expect(try store.get(id)?.payload == payload) }
        try store.close()
        let reopened = try directory.open(options: testOptions(segmentSize: 1 << 16))
        for (id, payload) in expected { #expect(try reopened.get(id)?.payload == payload) }
        try reopened.close()
    }
}

extension RecoveryTests {
    @Test func aMissingSegmentIsATypedErrorNotSilentLoss() throws {
        let directory = TemporaryStore("missing", unverifiedBecause: "a segment the manifest lists is removed")
        do {
            let store = try directory.open(options: testOptions())
            for index in 0..<300 { try store.put(typeTag: 1, payload: payloadBytes(600, seed: UInt64(index))) }
            try store.close()
        }
        let segments = directory.segmentFiles()
        #expect(segments.count >= 3)
        try FileManager.default.removeItem(atPath: segments[1])
        #expect {
            try directory.open(options: testOptions())
        } throws: { error in
            (error as? LogStoreError)?.code == .missingSegment
        }
        let report = try Store.verify(at: directory.path)
        #expect(report.problems.contains { $0.message.contains((segments[1] as NSString).lastPathComponent) })
    }
}
