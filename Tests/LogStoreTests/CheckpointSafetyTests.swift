import Foundation
import Synchronization
import TestSupport
import Testing

@testable @_spi(Testing) import LogStore

#if canImport(Glibc)
    import Glibc
#endif

/// What a checkpoint or backup must never do: report a commit other than the one it copied, keep a segment
/// that is not the store's, share a file with the store when told not to, write into or around the store,
/// run twice into one place, or lose the old backup when the new one is incomplete.
@Suite struct CheckpointSafetyTests {
    static func inode(_ path: String) -> UInt64? {
        var info = stat()
        return stat(path, &info) == 0 ? UInt64(info.st_ino) : nil
    }

    /// A leader records the segment it seals and the one it starts before it publishes its group (batches
    /// of several writers, some in each): a checkpoint must not copy such a group's bytes under the commit
    /// before it. Four writers, twenty checkpoints: the copy's newest commit is the one reported (fails
    /// when the state is taken without holding the writer slot).
    @Test func theReportedCommitIsTheCopysUnderConcurrentWriters() throws {
        let directory = TemporaryStore("checkpoint-sequence")
        let (store, _) = try CheckpointTests.seededStore(directory, background: false)
        let stop = Atomic<Bool>(false)
        var writers: [Thread] = []
        for writer in 0..<4 {
            let thread = Thread {
                var generator = SplitMix64(seed: UInt64(writer))
                while !stop.load(ordering: .relaxed) {
                    _ = try? store.put(typeTag: 3, payload: payloadBytes(900, seed: generator.next()))
                }
            }
            thread.start()
            writers.append(thread)
        }
        for round in 0..<20 {
            let destination = directory.path + "/copy-\(round)"
            let report = try store.checkpoint(to: destination)
            let opened = try Store.open(at: destination, options: StoreOptions(readOnly: true))
            #expect(try opened.snapshot().sequence == report.sequence, "round \(round)")
            try opened.close()
        }
        stop.store(true, ordering: .relaxed)
        while writers.contains(where: { !$0.isFinished }) { usleep(1_000) }
        try store.close()
    }

    @Test func aBackupNeverKeepsASegmentOfACopyThatWentOnWriting() throws {
        let directory = TemporaryStore("backup-fork")
        let (store, shared) = try CheckpointTests.seededStore(directory, background: false, batches: 40)
        let backup = directory.path + "/backup"
        try store.backup(to: backup, hardLinks: false)
        // The backup is opened and written to (as a restore would be), the store goes on too: both fill
        // segments under the same numbers, with the same sizes, and other bytes.
        let fork = try Store.open(at: backup, options: testOptions(segmentSize: 1 << 16))
        for number in 40..<100 { try CheckpointTests.writeBatch(number, shared: shared, to: fork, salt: 7_777) }
        try fork.close()
        for number in 40..<100 { try CheckpointTests.writeBatch(number, shared: shared, to: store) }
        let report = try store.backup(to: backup, hardLinks: false)
        #expect(report.keptSegments <= 6, "\(report)")
        #expect(try CheckpointTests.committedBatches(at: backup, shared: shared) == 99)
        let copy = try Store.open(at: backup, options: StoreOptions(readOnly: true))
        for id in try store.ids() {
            #expect(try copy.get(id)?.payload == store.get(id)?.payload, "object \(id)")
        }
        #expect(try copy.ids().count == store.ids().count)
        try copy.close()
        try store.close()
    }

    @Test func aCopyMadeWithoutHardLinksSharesNoFileWithTheStore() throws {
        let directory = TemporaryStore("backup-copy-mode")
        let (store, shared) = try CheckpointTests.seededStore(directory, background: false, batches: 40)
        let backup = directory.path + "/backup"
        let linked = try store.backup(to: backup)
        #expect(linked.linkedSegments > 0)
        for number in 40..<50 { try CheckpointTests.writeBatch(number, shared: shared, to: store) }
        let copied = try store.backup(to: backup, hardLinks: false)
        #expect(copied.linkedSegments == 0 && copied.keptSegments == 0, "\(copied)")
        let storeInodes = Set(
            try FileManager.default.contentsOfDirectory(atPath: directory.path + "/store").compactMap {
                Self.inode(directory.path + "/store/" + $0)
            })
        for name in try FileManager.default.contentsOfDirectory(atPath: backup) {
            #expect(!storeInodes.contains(Self.inode(backup + "/" + name) ?? 0), "\(name) is the store's file")
        }
        try store.close()
    }

    @Test func aDestinationInOrAroundTheStoreOrThroughALinkIsRefused() throws {
        let directory = TemporaryStore("checkpoint-paths")
        let (store, shared) = try CheckpointTests.seededStore(directory, background: false)
        try store.close()
        let path = directory.path + "/store"
        try Data("mine".utf8).write(to: URL(fileURLWithPath: path + "/notes.txt"))
        let reader = try Store.open(at: path, options: StoreOptions(readOnly: true))
        let before = try FileManager.default.contentsOfDirectory(atPath: path).sorted()
        try FileManager.default.createSymbolicLink(atPath: directory.path + "/link", withDestinationPath: path)
        for destination in [
            path, path + "/", path + "/inside", path + "/SEGMENTS.writing", directory.path, directory.path + "/link",
            directory.path + "/new/.", "", directory.path + "/..",
        ] {
            for backup in [false, true] {
                do {
                    if backup { try reader.backup(to: destination) } else { try reader.checkpoint(to: destination) }
                    Issue.record("a copy into \(destination) was made")
                } catch {
                    #expect(error.code == .invalidArgument, "\(destination): \(error)")
                }
            }
        }
        #expect(try FileManager.default.contentsOfDirectory(atPath: path).sorted() == before)
        try reader.close()
        #expect(try CheckpointTests.committedBatches(at: path, shared: shared) == 0)
    }

    @Test func twoRunsIntoOneFolderDoNotOverlap() throws {
        let directory = TemporaryStore("backup-concurrent")
        let (store, shared) = try CheckpointTests.seededStore(directory, background: false, batches: 40)
        let backup = directory.path + "/backup"
        let outcomes = Mutex<[String]>([])
        var threads: [Thread] = []
        for _ in 0..<3 {
            let thread = Thread {
                do {
                    try store.backup(to: backup, hardLinks: false)
                    outcomes.withLock { $0.append("done") }
                } catch {
                    let text = (error as? LogStoreError)?.code == .locked ? "locked" : "\(error)"
                    outcomes.withLock { $0.append(text) }
                }
            }
            thread.start()
            threads.append(thread)
        }
        while threads.contains(where: { !$0.isFinished }) { usleep(1_000) }
        let results = outcomes.withLock { $0 }
        #expect(results.allSatisfy { $0 == "done" || $0 == "locked" } && results.contains("done"), "\(results)")
        #expect(try CheckpointTests.committedBatches(at: backup, shared: shared) == 39)
        try store.backup(to: backup)
        #expect(try Store.verify(at: backup).problems.isEmpty)
        try store.close()
    }

    @Test func anIncompleteNewBackupNeverReplacesTheOldOne() throws {
        let directory = TemporaryStore("backup-incomplete-swap")
        let (store, shared) = try CheckpointTests.seededStore(directory, background: false, batches: 30)
        let backup = directory.path + "/backup"
        try store.backup(to: backup)
        // As a crash between the renames would leave it, but with the new copy incomplete (its manifest
        // gone, as if it had never been written).
        try FileManager.default.moveItem(atPath: backup, toPath: backup + ".backup-previous")
        try FileManager.default.copyItem(atPath: backup + ".backup-previous", toPath: backup + ".backup-partial")
        try FileManager.default.removeItem(atPath: backup + ".backup-partial/SEGMENTS")
        // A checkpoint there is refused: the old backup waits to be put back.
        #expect(throws: LogStoreError.self) { try store.checkpoint(to: backup) }
        for number in 30..<40 { try CheckpointTests.writeBatch(number, shared: shared, to: store) }
        try store.backup(to: backup)
        #expect(try CheckpointTests.committedBatches(at: backup, shared: shared) == 39)
        for leftover in [".backup-previous", ".backup-partial"] {
            #expect(!FileManager.default.fileExists(atPath: backup + leftover), "\(leftover)")
        }
        try store.close()
    }

    @Test func aStoreNamedLikeAFolderBesideTheDestinationIsNeverTouched() throws {
        let directory = TemporaryStore("backup-sibling-store")
        var options = testOptions(segmentSize: 1 << 16)
        options.compaction.background = false
        for suffix in [".backup-previous", ".backup-partial", ".checkpoint-partial"] {
            let path = directory.path + "/app" + suffix
            let store = try Store.open(at: path, options: options)
            let shared = (0..<CheckpointTests.sharedCount).map { _ in store.newID() }
            for number in 0..<10 { try CheckpointTests.writeBatch(number, shared: shared, to: store) }
            let before = try FileManager.default.contentsOfDirectory(atPath: path).sorted()
            for backup in [false, true] {
                do {
                    if backup {
                        try store.backup(to: directory.path + "/app")
                    } else {
                        try store.checkpoint(to: directory.path + "/app")
                    }
                    Issue.record("\(suffix): a copy was made beside the store's own folder")
                } catch {
                    #expect(error.code == .invalidArgument, "\(suffix): \(error)")
                }
            }
            #expect(try FileManager.default.contentsOfDirectory(atPath: path).sorted() == before, "\(suffix)")
            try store.close()
            #expect(try CheckpointTests.committedBatches(at: path, shared: shared) == 9, "\(suffix)")
            try FileManager.default.removeItem(atPath: path)
        }
    }

    @Test func aBackupHoldingOtherFilesOrOpenForWritingIsNotReplaced() throws {
        let directory = TemporaryStore("backup-busy")
        let (store, _) = try CheckpointTests.seededStore(directory, background: false, batches: 20)
        let backup = directory.path + "/backup"
        try store.backup(to: backup)
        // Open for writing: refused with `locked`, and the backup stays where it is.
        let writer = try Store.open(at: backup, options: testOptions(segmentSize: 1 << 16))
        do {
            try store.backup(to: backup)
            Issue.record("a backup open for writing was replaced")
        } catch {
            #expect(error.code == .locked, "\(error)")
        }
        try writer.close()
        // Files that are not a store's: refused, left as they are.
        try Data("mine".utf8).write(to: URL(fileURLWithPath: backup + "/notes.txt"))
        do {
            try store.backup(to: backup)
            Issue.record("a backup holding other files was replaced")
        } catch {
            #expect(error.code == .invalidArgument, "\(error)")
        }
        #expect(FileManager.default.fileExists(atPath: backup + "/notes.txt"))
        try store.close()
    }

    @Test func aFailedStoreIsNotCopied() throws {
        let directory = TemporaryStore("checkpoint-failed", unverifiedBecause: "its last write failed on purpose")
        let faults = FaultInjector()
        let (store, shared) = try CheckpointTests.seededStore(directory, background: false, faults: faults)
        faults.inject(.sync, .error(EIO))
        #expect(throws: LogStoreError.self) { try CheckpointTests.writeBatch(1, shared: shared, to: store) }
        do {
            try store.checkpoint(to: directory.path + "/copy")
            Issue.record("a failed store was copied")
        } catch {
            #expect(error.code == .storeFailed, "\(error)")
        }
        #expect(!FileManager.default.fileExists(atPath: directory.path + "/copy"))
        try? store.close()
    }
}
