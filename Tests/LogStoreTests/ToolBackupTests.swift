import Foundation
import TestSupport
import Testing

@testable @_spi(Testing) import LogStore

/// `logstore-tool backup` and `restore`: a backup made beside a writer, brought up to date, restored into
/// a store of its own.
@Suite struct ToolBackupTests {
    @Test func backUpBesideAWriterBringUpToDateAndRestore() throws {
        let directory = TemporaryStore("tool-backup")
        let (store, shared) = try CheckpointTests.seededStore(directory, background: false, batches: 40)
        let backup = directory.path + "/backup"

        // The store stays open for writing in this process: the tool reads it without its lock.
        let first = try ToolRunner.run(["backup", directory.path + "/store", backup, "--verify"])
        #expect(first.status == 0, "\(first.output)")
        #expect(first.stdout.contains("as of commit"), "\(first.stdout)")
        #expect(first.stdout.contains("verify: no problems"), "\(first.stdout)")
        #expect(first.stdout.contains("backing up: 100%"), "\(first.stdout)")
        #expect(try CheckpointTests.committedBatches(at: backup, shared: shared) == 39)

        for number in 40..<60 { try CheckpointTests.writeBatch(number, shared: shared, to: store) }
        let second = try ToolRunner.run(["backup", directory.path + "/store", backup, "--json"])
        #expect(second.status == 0, "\(second.output)")
        let summary = try #require(try JSONSerialization.jsonObject(with: Data(second.stdout.utf8)) as? [String: Any])
        #expect(summary["keptSegments"] as? Int ?? 0 > 0, "\(second.stdout)")
        #expect(try CheckpointTests.committedBatches(at: backup, shared: shared) == 59)
        try store.close()

        let restored = directory.path + "/restored"
        let restore = try ToolRunner.run(["restore", backup, restored, "--verify", "--json"])
        #expect(restore.status == 0, "\(restore.output)")
        let restoreSummary = try #require(
            try JSONSerialization.jsonObject(with: Data(restore.stdout.utf8)) as? [String: Any])
        #expect(restoreSummary["linkedSegments"] as? Int == 0 && restoreSummary["verifyProblems"] as? [String] == [])
        #expect(try CheckpointTests.committedBatches(at: restored, shared: shared) == 59)

        // Restoring over something is refused, and changes nothing.
        let again = try ToolRunner.run(["restore", backup, directory.path + "/store"])
        #expect(again.status != 0)
        #expect(again.stderr.contains("not an empty folder"), "\(again.stderr)")
        #expect(try CheckpointTests.committedBatches(at: directory.path + "/store", shared: shared) == 59)
    }
}
