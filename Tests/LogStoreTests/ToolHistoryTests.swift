import Foundation
import TestSupport
import Testing

@testable @_spi(Testing) import LogStore

/// `logstore-tool history`: retain, list (also in `stats`), changes since a moment, retention, release.
@Suite struct ToolHistoryTests {
    @Test func retainListCompareAndRelease() throws {
        let directory = TemporaryStore("tool-history")
        let store = try Store.open(at: directory.path, options: HistoryTests.options)
        let first = try store.put(typeTag: 1, payload: [1])
        try store.close()

        let retain = try ToolRunner.run(["history", directory.path, "--retain", "before"])
        #expect(retain.status == 0 && retain.stdout.contains("retained before at commit"), "\(retain.output)")
        let reopened = try Store.open(at: directory.path, options: HistoryTests.options)
        let second = try reopened.put(typeTag: 1, payload: [2])
        try reopened.put(first, typeTag: 1, payload: [11])
        try reopened.retain(as: "auto-1")
        try reopened.retain(as: "auto-2")
        try reopened.close()

        let list = try ToolRunner.run(["history", directory.path, "--json"])
        #expect(list.status == 0, "\(list.output)")
        let listed = try #require(try JSONSerialization.jsonObject(with: Data(list.stdout.utf8)) as? [String: Any])
        let moments = try #require(listed["moments"] as? [[String: Any]])
        #expect(moments.map { $0["name"] as? String } == ["before", "auto-1", "auto-2"], "\(list.stdout)")
        let stats = try ToolRunner.run(["stats", directory.path])
        #expect(stats.stdout.contains("history: 3 retained moments"), "\(stats.stdout)")

        let changes = try ToolRunner.run(["history", directory.path, "--changes", "before", "--json"])
        let found = try #require(try JSONSerialization.jsonObject(with: Data(changes.stdout.utf8)) as? [String: Any])
        #expect(found["added"] as? [Int] == [Int(second.rawValue)], "\(changes.stdout)")
        #expect(found["changed"] as? [Int] == [Int(first.rawValue)], "\(changes.stdout)")

        let retention = try ToolRunner.run(["history", directory.path, "--keep-last", "1", "--prefix", "auto-"])
        #expect(retention.status == 0 && retention.stdout.contains("released 1 moment: auto-1"), "\(retention.output)")
        let release = try ToolRunner.run(["history", directory.path, "--release", "before"])
        #expect(release.status == 0, "\(release.output)")
        let after = try Store.open(at: directory.path, options: HistoryTests.options)
        #expect(try after.historyUsage().moments.map(\.name) == ["auto-2"])
        try after.close()
        // A moment opens as a store of its own with every command that reads one.
        let export = try ToolRunner.run(["export", directory.path + "/history/auto-2"])
        #expect(export.status == 0 && export.stdout.split(separator: "\n").count == 2, "\(export.output)")
        let bad = try ToolRunner.run(["history", directory.path, "--release", "absent"])
        #expect(bad.status != 0 && bad.stderr.contains("no retained moment"), "\(bad.output)")
    }
}
