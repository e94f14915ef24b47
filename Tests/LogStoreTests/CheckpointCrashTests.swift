import Foundation
import TestSupport
import Testing

@testable @_spi(Testing) import LogStore

/// A backup or restore ended at every system call it makes (a child process, `_exit` as a SIGKILL would end
/// it): the destination is a complete backup, old or new, or missing while a complete new one waits beside
/// it; the next run finishes the job and leaves nothing behind.
@Suite(.serialized) struct CheckpointCrashTests {
    /// The store (batches 0 ... 59, several sealed segments) and a backup of it as of batch 39.
    struct Pristine {
        let store: TemporaryStore
        let backup: String
        let shared: [ObjectID]
    }

    static func makePristine() throws -> Pristine {
        let directory = TemporaryStore("backup-crash-pristine")
        var options = testOptions(segmentSize: 1 << 16)
        options.compaction.background = false
        let store = try Store.open(at: directory.path + "/store", options: options)
        let shared = (0..<CheckpointTests.sharedCount).map { _ in store.newID() }
        for number in 0..<40 { try CheckpointTests.writeBatch(number, shared: shared, to: store) }
        let backup = directory.path + "/backup"
        try store.backup(to: backup, hardLinks: false)
        for number in 40..<60 { try CheckpointTests.writeBatch(number, shared: shared, to: store) }
        try store.close()
        return Pristine(store: directory, backup: backup, shared: shared)
    }

    /// Copies of the pristine store and backup into a new directory: (store, backup).
    static func copies(of pristine: Pristine, into directory: TemporaryStore, withBackup: Bool) throws -> (
        String, String
    ) {
        let store = directory.path + "/store"
        let backup = directory.path + "/backup"
        try FileManager.default.copyItem(atPath: pristine.store.path + "/store", toPath: store)
        if withBackup { try FileManager.default.copyItem(atPath: pristine.backup, toPath: backup) }
        return (store, backup)
    }

    /// How many calls of each kind a backup (or restore) of the pristine store makes.
    static func callCounts(_ pristine: Pristine, restore: Bool) throws -> [FaultInjector.Operation: Int] {
        let directory = TemporaryStore("backup-crash-count")
        let (store, backup) = try copies(of: pristine, into: directory, withBackup: !restore)
        let faults = FaultInjector()
        var options = StoreOptions(createIfMissing: false, readOnly: true)
        options.faultInjector = faults
        let opened = try Store.open(at: store, options: options)
        let operations: [FaultInjector.Operation] = [.write, .sync, .rename, .unlink, .open]
        let before = Dictionary(uniqueKeysWithValues: operations.map { ($0, faults.calls($0)) })
        if restore {
            try opened.checkpoint(to: backup, hardLinks: false)
        } else {
            try opened.backup(to: backup)
        }
        let counts = Dictionary(
            uniqueKeysWithValues: operations.map { ($0, faults.calls($0) - before[$0, default: 0]) })
        try opened.close()
        return counts
    }

    @Test(arguments: [false, true])
    func aBackupOrRestoreEndedAtAnySystemCallLeavesACompleteCopyOrNone(restore: Bool) throws {
        let pristine = try Self.makePristine()
        let counts = try Self.callCounts(pristine, restore: restore)
        #expect(counts[.rename, default: 0] >= (restore ? 1 : 3) && counts[.sync, default: 0] > 2, "\(counts)")
        var crashed = 0
        for (operation, count) in counts.sorted(by: { $0.key.rawValue < $1.key.rawValue }) {
            // Every call of the rarer kinds, and a spread of the common ones.
            let points = count <= 12 ? Array(0..<count) : Array(stride(from: 0, to: count, by: max(1, count / 12)))
            for after in points + [count] {
                let point = "\(restore ? "restore" : "backup") \(operation.rawValue) after \(after)"
                let directory = TemporaryStore("backup-crash")
                let (store, backup) = try Self.copies(of: pristine, into: directory, withBackup: !restore)
                var arguments = [
                    "crash-backup", store, backup, "--operation", operation.rawValue, "--after", "\(after)",
                ]
                if restore { arguments.append("--restore") }
                let result = try ToolRunner.run(arguments, binary: .crashHarness)
                if !result.signaled && result.status == 137 {
                    crashed += 1
                    #expect(after < count, "\(point): crashed past the end")
                } else {
                    #expect(result.status == 0 && result.stdout == "survived\n", "\(point): \(result.output)")
                    #expect(after == count, "\(point): did not reach the crash point")
                }
                try checkAfterCrash(store: store, backup: backup, restore: restore, pristine: pristine, point: point)
            }
        }
        #expect(crashed > 10)
    }

    /// What a crash may leave, and that the next run completes it.
    func checkAfterCrash(store: String, backup: String, restore: Bool, pristine: Pristine, point: String) throws {
        let fileManager = FileManager.default
        let partial = backup + (restore ? ".checkpoint-partial" : ".backup-partial")
        let previous = backup + ".backup-previous"
        if fileManager.fileExists(atPath: backup) {
            let batches = try CheckpointTests.committedBatches(at: backup, shared: pristine.shared)
            #expect(restore ? batches == 59 : (batches == 39 || batches == 59), "\(point): \(batches)")
            #expect(try Store.verify(at: backup).problems.isEmpty, "\(point)")
        } else {
            #expect(restore || fileManager.fileExists(atPath: previous), "\(point): the old backup is gone")
            if fileManager.fileExists(atPath: previous) {
                #expect(try CheckpointTests.committedBatches(at: previous, shared: pristine.shared) == 39, "\(point)")
                #expect(try CheckpointTests.committedBatches(at: partial, shared: pristine.shared) == 59, "\(point)")
            }
        }
        let opened = try Store.open(at: store, options: StoreOptions(readOnly: true))
        if restore {
            if !fileManager.fileExists(atPath: backup) { try opened.checkpoint(to: backup, hardLinks: false) }
        } else {
            try opened.backup(to: backup)
        }
        try opened.close()
        #expect(try CheckpointTests.committedBatches(at: backup, shared: pristine.shared) == 59, "\(point): rerun")
        #expect(try Store.verify(at: backup).problems.isEmpty, "\(point): rerun")
        #expect(!fileManager.fileExists(atPath: partial) && !fileManager.fileExists(atPath: previous), "\(point)")
    }
}
