import Foundation
import TestSupport
import Testing

@testable @_spi(Testing) import LogStore

/// `logstore-tool`'s options and messages: `--version`, `verify --json`, `tables --json`, a file where a
/// store directory is expected, ids out of range, a command's own usage, and the README's command list.
@Suite struct ToolOptionTests {
    @Test func versionPrintsThePackageVersion() throws {
        let result = try ToolRunner.run(["--version"])
        #expect(result.status == 0, "\(result.output)")
        let line = result.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
        let parts = line.split(separator: " ")
        #expect(parts.count == 2 && parts[0] == "logstore-tool", "\(line)")
        let numbers = parts.last?.split(separator: ".").map { Int($0) } ?? []
        #expect(numbers.count == 3 && numbers.allSatisfy { $0 != nil }, "\(line)")
    }

    @Test func verifyPrintsParsableJSON() throws {
        let directory = TemporaryStore("tool-verify-json", unverifiedBecause: "a byte of a segment is flipped")
        let store = try directory.open(options: testOptions())
        for index in 0..<20 { try store.put(typeTag: 1, payload: payloadBytes(300, seed: UInt64(index))) }
        try store.close()

        let sound = try ToolRunner.run(["verify", directory.path, "--json"])
        #expect(sound.status == 0, "\(sound.output)")
        let report = try #require(try JSONSerialization.jsonObject(with: Data(sound.stdout.utf8)) as? [String: Any])
        #expect(report["sound"] as? Bool == true)
        #expect(report["store"] as? String == directory.path)
        #expect(report["liveObjects"] as? Int == 20)
        #expect(report["segments"] as? Int == 1 && report["frames"] as? Int ?? 0 > 0)
        #expect((report["problems"] as? [Any])?.isEmpty == true && report["notes"] is [Any])

        let path = try #require(directory.segmentFiles().last)
        var bytes = try [UInt8](Data(contentsOf: URL(fileURLWithPath: path)))
        bytes[bytes.count / 2] ^= 0xFF
        try Data(bytes).write(to: URL(fileURLWithPath: path))
        let damaged = try ToolRunner.run(["verify", directory.path, "--json"])
        #expect(damaged.status == 1, "\(damaged.output)")
        let object = try #require(try JSONSerialization.jsonObject(with: Data(damaged.stdout.utf8)) as? [String: Any])
        #expect(object["sound"] as? Bool == false)
        let problems = try #require(object["problems"] as? [[String: Any]])
        #expect(!problems.isEmpty)
        #expect(problems.allSatisfy { $0["file"] as? String == path && $0["message"] is String }, "\(problems)")
        #expect(problems.contains { ($0["offset"] as? Int).map { $0 > 0 && $0 <= bytes.count / 2 } == true })
    }

    @Test func tablesJSONWritesNumbersAsNumbers() throws {
        let directory = TemporaryStore("tool-tables-json")
        for (key, value, kind) in [
            ("count", "42", "int"), ("ratio", "1.5", "double"), ("whole", "2", "double"), ("huge", "1e300", "double"),
            ("flag", "true", "bool"), ("name", "x", "string"), ("when", "2026-01-02T03:04:05Z", "date"),
        ] {
            let set = try ToolRunner.run(["tables", directory.path, "prefs." + key, "--set", value, "--type", kind])
            #expect(set.status == 0, "\(set.output)")
        }
        let listed = try ToolRunner.run(["tables", directory.path, "prefs", "--json"])
        #expect(listed.status == 0, "\(listed.output)")
        let object = try #require(try JSONSerialization.jsonObject(with: Data(listed.stdout.utf8)) as? [String: Any])
        let children = try #require(object["children"] as? [[String: Any]])
        var values: [String: Any] = [:]
        for child in children { values[try #require(child["key"] as? String)] = child["value"] }
        #expect((values["count"] as? NSNumber)?.intValue == 42 && !(values["count"] is String))
        #expect((values["ratio"] as? NSNumber)?.doubleValue == 1.5)
        #expect((values["whole"] as? NSNumber)?.doubleValue == 2)
        #expect((values["huge"] as? NSNumber)?.doubleValue == 1e300)
        #expect(values["flag"] as? Bool == true)
        #expect(values["name"] as? String == "x")
        #expect(values["when"] as? String == "2026-01-02T03:04:05.000Z")
        #expect(
            listed.stdout.contains("\"value\": 42}") && listed.stdout.contains("\"value\": 1.5}"), "\(listed.stdout)")
    }

    @Test(arguments: [
        ["verify"], ["verify", "--json"], ["stats"], ["compact"], ["get", "1"], ["export"], ["import"], ["tables"],
        ["tables", "a", "--set", "1"], ["demo"], ["engine-demo"], ["stress", "--seconds", "1"],
    ])
    func aFileWhereAStoreDirectoryIsExpectedIsNamed(arguments: [String]) throws {
        let directory = TemporaryStore("tool-file-not-store")
        let file = directory.path + "/store.txt"
        try Data("not a store\n".utf8).write(to: URL(fileURLWithPath: file))
        let input = arguments[0] == "import" ? Data("{\"id\":1,\"type\":1,\"payload\":\"\"}\n".utf8) : nil
        let result = try ToolRunner.run([arguments[0], file] + arguments.dropFirst(), input: input)
        #expect(result.status != 0, "\(result.output)")
        #expect(result.stderr.contains("\(file) is a file, not a store directory"), "\(result.output)")
        #expect(!result.stderr.contains("storeMissing"), "\(result.output)")
        #expect(try Data(contentsOf: URL(fileURLWithPath: file)) == Data("not a store\n".utf8))
        #expect(directory.fileNames() == ["store.txt"])
    }

    @Test(arguments: ["-1", "0", "9223372036854775808", "18446744073709551616", "abc"])
    func getOfAnIDOutsideTheRangeSaysWhichIDsAreValid(id: String) throws {
        let directory = TemporaryStore("tool-get-range")
        let store = try directory.open(options: testOptions())
        try store.put(typeTag: 1, payload: [1])
        try store.close()
        let result = try ToolRunner.run(["get", directory.path, id])
        #expect(result.status == 64, "\(result.output)")
        #expect(
            result.stderr.contains("\(id) is not an object id: valid ids are 1 … 9223372036854775807"),
            "\(result.output)")
        #expect(result.stderr.contains("Usage: logstore-tool get"), "\(result.output)")
    }

    @Test(arguments: [
        (["--seconds", "0"], "--seconds must be positive"), (["--threads", "0"], "--threads must be 1 … 256"),
        (["--seconds", "1"], "holds a store already"),
    ])
    func stressMisusePrintsItsOwnUsage(arguments: [String], message: String) throws {
        let directory = TemporaryStore("tool-stress-usage")
        let store = try directory.open(options: testOptions())
        try store.close()
        let result = try ToolRunner.run(["stress", directory.path] + arguments)
        #expect(result.status == 64, "\(result.output)")
        #expect(result.stderr.contains(message), "\(result.output)")
        #expect(result.stderr.contains("Usage: logstore-tool stress <directory>"), "\(result.output)")
    }

    /// Durations that would overflow a deadline in nanoseconds are refused as usage errors.
    @Test(arguments: [
        (["stress", "DIR", "--seconds", "1e11"], "--seconds must be positive and at most 10000000"),
        (["stress", "DIR", "--seconds", "inf"], "--seconds must be positive and at most 10000000"),
        (
            ["import", "DIR", "--test-pause-after-batch", "99999999999999"],
            "--test-pause-after-batch must be 0 … 60000"
        ),
    ])
    func durationsOutOfRangeAreRefused(arguments: [String], message: String) throws {
        let parent = TemporaryStore("tool-duration-range")
        let path = parent.path + "/new"
        let result = try ToolRunner.run(arguments.map { $0 == "DIR" ? path : $0 }, input: Data())
        #expect(!result.signaled && result.status == 64, "\(result.output)")
        #expect(result.stderr.contains(message), "\(result.output)")
        #expect(!FileManager.default.fileExists(atPath: path))
    }

    /// `stress` writes only into a missing or empty folder: one with any entry (a hidden file, or a store
    /// of the oldest layout, without `STORE` or `SEGMENTS`) is refused, and left as it was.
    @Test(arguments: [false, true])
    func stressRefusesAFolderThatIsNotEmpty(oldStore: Bool) throws {
        let directory = TemporaryStore("tool-stress-not-empty")
        if oldStore {
            let store = try directory.open(options: testOptions())
            try store.put(typeTag: 1, payload: [1, 2, 3])
            try store.close()
            for name in ["STORE", "SEGMENTS"] {
                try FileManager.default.removeItem(atPath: directory.path + "/" + name)
            }
        } else {
            #expect(FileManager.default.createFile(atPath: directory.path + "/.hidden", contents: Data([1, 2])))
        }
        let before = try directory.fileNames().map {
            try Data(contentsOf: URL(fileURLWithPath: directory.path + "/" + $0))
        }
        let result = try ToolRunner.run(["stress", directory.path, "--seconds", "1"])
        #expect(result.status == 64, "\(result.output)")
        #expect(result.stderr.contains("stress needs a missing or empty directory"), "\(result.output)")
        let after = try directory.fileNames().map {
            try Data(contentsOf: URL(fileURLWithPath: directory.path + "/" + $0))
        }
        #expect(before == after)
    }

    /// `verify --json` of a folder it cannot check prints JSON too, with the error, and exits 1.
    @Test func verifyJSONOfAFolderThatIsNotAStorePrintsTheError() throws {
        let directory = TemporaryStore("tool-verify-json-not-a-store")
        #expect(FileManager.default.createFile(atPath: directory.path + "/notes.txt", contents: Data("x".utf8)))
        let result = try ToolRunner.run(["verify", directory.path, "--json"])
        #expect(result.status == 1, "\(result.output)")
        let object = try #require(
            try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String: Any], "\(result.output)")
        #expect(object["sound"] as? Bool == false)
        #expect(object["store"] as? String == directory.path)
        let error = try #require(object["error"] as? [String: Any])
        #expect(error["code"] as? String == "notAStore", "\(error)")
        #expect(error["file"] as? String == directory.path, "\(error)")
        #expect((error["message"] as? String)?.contains("not a LogStore store") == true, "\(error)")
    }

    @Test func theREADMEListsEveryCommand() throws {
        let help = try ToolRunner.run(["--help"])
        #expect(help.status == 0, "\(help.output)")
        let section = try #require(help.stdout.components(separatedBy: "SUBCOMMANDS:").last)
        // A command's line starts with two spaces and its name (then `, alias`); wrapped text is indented more.
        let commands = section.split(separator: "\n").compactMap { line -> String? in
            guard line.hasPrefix("  "), !line.hasPrefix("   "), !line.hasPrefix("  See ") else { return nil }
            return line.split(separator: " ").first.map { String($0.trimmingCharacters(in: [","])) }
        }
        #expect(commands.count == 18, "\(commands)")
        let readme = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().appendingPathComponent("README.md")
        let text = try String(contentsOf: readme, encoding: .utf8)
        let row = try #require(text.split(separator: "\n").first { $0.hasPrefix("| `logstore-tool` |") })
        for command in commands where command != "help" {
            #expect(row.contains("`\(command)`"), "the README's command table lacks \(command)")
        }
    }
}
