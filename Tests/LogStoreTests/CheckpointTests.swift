import Foundation
@_spi(Engine) import LogStoreFormat
import Synchronization
import TestSupport
import Testing

@testable @_spi(Testing) import LogStore

#if canImport(Glibc)
    import Glibc
#endif

/// Checkpoints and backups: a copy of a live store opens as the store was at one commit, however writers,
/// compaction and crashes fall around it.
@Suite struct CheckpointTests {
    /// Objects every batch overwrites: a copy at one commit finds them all from the same batch.
    static let sharedCount = 20

    /// Writes batch `number`: the shared objects `shared` all say `number`, and one new object says
    /// `new number`; the root "newest" names the new one.
    static func writeBatch(_ number: Int, shared: [ObjectID], to store: Store, salt: UInt64 = 0) throws {
        var batch = WriteBatch()
        for id in shared {
            batch.put(
                Record(
                    id: id, typeTag: 1,
                    payload: Array("batch \(number);".utf8) + payloadBytes(300, seed: UInt64(number) &+ salt)))
        }
        let new = store.newID()
        batch.put(Record(id: new, typeTag: 2, payload: Array("new \(number)".utf8)))
        batch.setRoot("newest", to: new)
        try store.write(batch)
    }

    /// Checks that the store at `path` holds exactly batches 0 ... n for one n, and returns n (-1: none).
    static func committedBatches(at path: String, shared: [ObjectID]) throws -> Int {
        let store = try Store.open(at: path, options: StoreOptions(readOnly: true))
        defer { try? store.close() }
        let texts = try shared.map { id -> String in
            let payload = try #require(try store.get(id)).payload
            return String(decoding: payload.prefix { $0 != UInt8(ascii: ";") }, as: UTF8.self)
        }
        let numbers = Set(texts.map { Int($0.dropFirst("batch ".count)) ?? -2 })
        #expect(numbers.count == 1, "the shared objects come from one batch: \(numbers.sorted())")
        let newest = try #require(numbers.first)
        let news = try store.ids(ofType: 2).map { id in
            String(decoding: try #require(try store.get(id)).payload, as: UTF8.self)
        }
        #expect(Set(news) == Set((0...max(newest, 0)).map { "new \($0)" }), "every earlier batch and none later")
        #expect(news.count == newest + 1)
        let root = try #require(try store.root(named: "newest"))
        #expect(String(decoding: try #require(try store.get(root)).payload, as: UTF8.self) == "new \(newest)")
        return newest
    }

    /// A store with the shared objects written by batch 0.
    /// A store in `DIRECTORY/store` (closed at teardown) with batches 0 ..< `batches` written;
    /// background compaction as `background` says, every 5 ms at most.
    static func seededStore(
        _ directory: TemporaryStore, background: Bool = true, faults: FaultInjector? = nil, segmentSize: Int = 1 << 16,
        batches: Int = 1
    ) throws -> (Store, [ObjectID]) {
        var options = testOptions(segmentSize: segmentSize, faults: faults)
        options.compaction.background = background
        options.compaction.minimumInterval = .milliseconds(5)
        let store = try directory.closesAtTeardown(Store.open(at: directory.path + "/store", options: options)) {
            try $0.close()
        }
        let shared = (0..<sharedCount).map { _ in store.newID() }
        for number in 0..<batches { try writeBatch(number, shared: shared, to: store) }
        return (store, shared)
    }

    @Test func aCheckpointOpensAsTheStoreWasAtOneCommitWhileAWriterCompactionAndMarkSweepGoOn() throws {
        let directory = TemporaryStore("checkpoint-live")
        let (store, shared) = try Self.seededStore(directory)
        let stop = Atomic<Bool>(false)
        let written = Atomic<Int>(0)
        let writer = Thread {
            var number = 1
            while !stop.load(ordering: .relaxed) {
                guard (try? Self.writeBatch(number, shared: shared, to: store)) != nil else { break }
                written.store(number, ordering: .relaxed)
                number += 1
            }
        }
        // Mark-sweep passes run beside the writer and the checkpoints too.
        let collector = Thread {
            while !stop.load(ordering: .relaxed) {
                _ = try? store.collectGarbage()
                usleep(2_000)
            }
        }
        writer.start()
        collector.start()
        defer { stop.store(true, ordering: .relaxed) }
        var seen: [Int] = []
        var linked = 0
        for round in 0..<8 {
            while written.load(ordering: .relaxed) < (round + 1) * 25 { usleep(1_000) }
            let destination = directory.path + "/copy-\(round)"
            let report = try store.checkpoint(to: destination)
            linked += report.linkedSegments
            #expect(report.segments == report.linkedSegments + report.copiedSegments)
            #expect(report.copiedSegments >= 1, "the segment being written is copied")
            let verified = try Store.verify(at: destination)
            #expect(verified.problems.isEmpty, "\(verified.problems)")
            let batches = try Self.committedBatches(at: destination, shared: shared)
            let opened = try Store.open(at: destination, options: StoreOptions(readOnly: true))
            #expect(try opened.snapshot().sequence == report.sequence, "the report names the copy's commit")
            try opened.close()
            seen.append(batches)
        }
        stop.store(true, ordering: .relaxed)
        while !writer.isFinished || !collector.isFinished { usleep(1_000) }
        #expect(seen == seen.sorted() && seen.first! >= 25, "each copy is at least as new as the one before: \(seen)")
        #expect(linked > 0, "sealed segments are linked, not copied")
        #expect(try store.statistics().backgroundCompactionError == nil)
    }

    @Test func aCheckpointDoesNotChangeWhenTheStoreGoesOn() throws {
        let directory = TemporaryStore("checkpoint-frozen")
        let (store, shared) = try Self.seededStore(directory, background: false, batches: 60)
        let destination = directory.path + "/copy"
        let report = try store.checkpoint(to: destination)
        #expect(report.linkedSegments > 0 && report.copiedSegments == 1)
        let before = try Self.committedBatches(at: destination, shared: shared)
        #expect(before == 59)
        // The store appends to its segment, seals it, compacts and deletes what the copy links.
        for number in 60..<120 { try Self.writeBatch(number, shared: shared, to: store) }
        try store.compact()
        #expect(try Self.committedBatches(at: destination, shared: shared) == 59)
        #expect(try Store.verify(at: destination).problems.isEmpty)
        // The copy is a store of its own: it takes writes without touching the original.
        let copy = try Store.open(at: destination, options: testOptions(segmentSize: 1 << 16))
        for number in 60..<70 { try Self.writeBatch(number, shared: shared, to: copy) }
        try copy.close()
        #expect(try Self.committedBatches(at: destination, shared: shared) == 69)
        try store.close()
        #expect(try Self.committedBatches(at: directory.path + "/store", shared: shared) == 119)
    }

    @Test func aCheckpointSealsALargeTailAndLinksEverySegment() throws {
        let directory = TemporaryStore("checkpoint-seal")
        let (store, shared) = try Self.seededStore(directory, background: false, segmentSize: 8 << 20)
        // About 6 KiB a batch: 300 batches make a segment being written of well over 1 MiB.
        for number in 1..<300 { try Self.writeBatch(number, shared: shared, to: store) }
        let before = try store.statistics().segments.count
        let report = try store.checkpoint(to: directory.path + "/copy")
        #expect(report.copiedSegments == 0 && report.bytesCopied == 0, "\(report)")
        #expect(report.linkedSegments == before)
        // The next batch goes to a new segment; the copy, which links the sealed one, stays as it was.
        for number in 300..<320 { try Self.writeBatch(number, shared: shared, to: store) }
        #expect(try store.statistics().segments.count == before + 1)
        #expect(try Self.committedBatches(at: directory.path + "/copy", shared: shared) == 299)
        // A small tail is copied, not sealed.
        let small = try store.checkpoint(to: directory.path + "/copy-2")
        #expect(small.copiedSegments == 1 && small.linkedSegments == before, "\(small)")
        #expect(try store.statistics().segments.count == before + 1)
        #expect(try Self.committedBatches(at: directory.path + "/copy-2", shared: shared) == 319)
    }

    @Test func aCheckpointOfAStoreOpenReadOnlyBesideAWriter() throws {
        let directory = TemporaryStore("checkpoint-reader")
        let (store, shared) = try Self.seededStore(directory, background: false, batches: 40)
        let reader = try Store.open(at: directory.path + "/store", options: StoreOptions(readOnly: true))
        for number in 40..<50 { try Self.writeBatch(number, shared: shared, to: store) }
        try store.compact()
        // The reader still has the segments compaction deleted open: it copies those.
        let report = try reader.checkpoint(to: directory.path + "/copy")
        #expect(report.copiedSegments > 1)
        #expect(try Self.committedBatches(at: directory.path + "/copy", shared: shared) == 39)
        try reader.close()
    }

    @Test func aDestinationThatIsNotEmptyIsRefusedAndLeftAsItWas() throws {
        let directory = TemporaryStore("checkpoint-occupied")
        let (store, _) = try Self.seededStore(directory, background: false)
        let destination = directory.path + "/occupied"
        try FileManager.default.createDirectory(atPath: destination, withIntermediateDirectories: true)
        try Data("mine".utf8).write(to: URL(fileURLWithPath: destination + "/notes.txt"))
        #expect(throws: LogStoreError.self) { try store.checkpoint(to: destination) }
        do {
            try store.checkpoint(to: destination)
        } catch {
            #expect(error.code == .invalidArgument && error.file == destination)
        }
        #expect(try FileManager.default.contentsOfDirectory(atPath: destination) == ["notes.txt"])
        // Nor does it back up into a folder that is not a backup of this store.
        #expect(throws: LogStoreError.self) { try store.backup(to: destination) }
        #expect(try FileManager.default.contentsOfDirectory(atPath: destination) == ["notes.txt"])
        // A folder in the way of the staging directory is not emptied either.
        let other = directory.path + "/fresh"
        try FileManager.default.createDirectory(
            atPath: other + ".checkpoint-partial", withIntermediateDirectories: true)
        try Data("mine".utf8).write(to: URL(fileURLWithPath: other + ".checkpoint-partial/notes.txt"))
        #expect(throws: LogStoreError.self) { try store.checkpoint(to: other) }
        #expect(!FileManager.default.fileExists(atPath: other))
    }

    @Test func aCheckpointCutShortLeavesNoDestinationAndTheNextOneSucceeds() throws {
        let directory = TemporaryStore("checkpoint-interrupted")
        let faults = FaultInjector()
        let (store, shared) = try Self.seededStore(directory, background: false, faults: faults, batches: 30)
        let destination = directory.path + "/copy"
        faults.inject(.rename, .error(EIO), pathSuffix: ".checkpoint-partial")
        #expect(throws: LogStoreError.self) { try store.checkpoint(to: destination) }
        #expect(!FileManager.default.fileExists(atPath: destination), "no destination until the copy is complete")
        #expect(FileManager.default.fileExists(atPath: destination + ".checkpoint-partial"))
        try store.checkpoint(to: destination)
        #expect(!FileManager.default.fileExists(atPath: destination + ".checkpoint-partial"))
        #expect(try Self.committedBatches(at: destination, shared: shared) == 29)
    }

    @Test func aBackupKeepsWhatItHasAndTakesWhatItLacks() throws {
        let directory = TemporaryStore("backup-incremental")
        let (store, shared) = try Self.seededStore(directory, background: false, batches: 60)
        let destination = directory.path + "/backup"
        let first = try store.backup(to: destination)
        #expect(first.keptSegments == 0 && first.segments > 3)
        for number in 60..<80 { try Self.writeBatch(number, shared: shared, to: store) }
        let second = try store.backup(to: destination)
        #expect(second.keptSegments >= first.segments - 1, "the sealed segments of the first backup are kept")
        #expect(try Self.committedBatches(at: destination, shared: shared) == 79)
        // After compaction, the backup follows: segments the store no longer has leave it.
        try store.compact()
        for number in 80..<90 { try Self.writeBatch(number, shared: shared, to: store) }
        let third = try store.backup(to: destination)
        #expect(try Self.committedBatches(at: destination, shared: shared) == 89)
        let names = try FileManager.default.contentsOfDirectory(atPath: destination)
        #expect(names.filter { $0.hasSuffix(".seg") }.count == third.segments)
        #expect(!FileManager.default.fileExists(atPath: destination + ".backup-previous"))
        #expect(!FileManager.default.fileExists(atPath: destination + ".backup-partial"))
        #expect(try Store.verify(at: destination).problems.isEmpty)
    }

    @Test func aBackupInterruptedBetweenItsRenamesIsFinishedByTheNext() throws {
        let directory = TemporaryStore("backup-swap")
        let faults = FaultInjector()
        let (store, shared) = try Self.seededStore(directory, background: false, faults: faults, batches: 30)
        let destination = directory.path + "/backup"
        try store.backup(to: destination)
        for number in 30..<40 { try Self.writeBatch(number, shared: shared, to: store) }
        // The old backup is moved aside, then renaming the new one fails: the destination is missing.
        faults.inject(.rename, .error(EIO), pathSuffix: ".backup-partial")
        #expect(throws: LogStoreError.self) { try store.backup(to: destination) }
        #expect(!FileManager.default.fileExists(atPath: destination))
        #expect(try Self.committedBatches(at: destination + ".backup-previous", shared: shared) == 29)
        #expect(try Self.committedBatches(at: destination + ".backup-partial", shared: shared) == 39)
        for number in 40..<45 { try Self.writeBatch(number, shared: shared, to: store) }
        // The next backup puts the complete new one in place first, then brings it up to date.
        let report = try store.backup(to: destination)
        #expect(report.keptSegments > 0)
        #expect(try Self.committedBatches(at: destination, shared: shared) == 44)
        #expect(!FileManager.default.fileExists(atPath: destination + ".backup-previous"))
    }

    @Test func aBackupOfAnotherStoreIsRefused() throws {
        let directory = TemporaryStore("backup-other")
        let (store, _) = try Self.seededStore(directory, background: false)
        let other = try Store.open(at: directory.path + "/other", options: testOptions())
        try other.put(typeTag: 1, payload: [1, 2, 3])
        try other.close()
        do {
            try store.backup(to: directory.path + "/other")
            Issue.record("a backup into another store's directory was made")
        } catch {
            #expect(error.code == .invalidArgument)
        }
        let reopened = try Store.open(at: directory.path + "/other", options: StoreOptions(readOnly: true))
        #expect(try reopened.ids().count == 1)
        try reopened.close()
    }
}
