import Foundation
@_spi(Engine) import LogStoreFormat
import TestSupport
import Testing

@testable @_spi(Testing) import LogStore

/// `logstore-tool` on what is not a sound store: a foreign folder is refused by every command and left
/// untouched; damage after a clean close and a damaged manifest make `verify` exit 1 and `export` fail.
@Suite struct ToolSafetyTests {
    /// Every name in `directory` with its bytes.
    func listing(_ directory: TemporaryStore) throws -> [String: Data] {
        var files: [String: Data] = [:]
        for name in directory.fileNames() {
            files[name] = try Data(contentsOf: URL(fileURLWithPath: directory.path + "/" + name))
        }
        return files
    }

    @Test(arguments: ["verify", "stats", "compact", "import", "export", "get"])
    func everyCommandRefusesAForeignFolderAndLeavesItUntouched(command: String) throws {
        let directory = TemporaryStore("tool-foreign")
        try Data("hello\n".utf8).write(to: URL(fileURLWithPath: directory.path + "/notes.txt"))
        let before = try listing(directory)
        var arguments = [command, directory.path]
        if command == "get" { arguments.append("1") }
        let input = command == "import" ? Data("{\"id\":1,\"type\":1,\"refs\":[],\"payload\":\"AA==\"}\n".utf8) : nil
        let result = try ToolRunner.run(arguments, input: input)
        #expect(result.status != 0, "\(result.output)")
        #expect(result.stderr.contains("notAStore"), "\(result.output)")
        #expect(try listing(directory) == before)
    }

    /// A cleanly closed store of one segment, and the offsets where its batches end.
    func closedStore(_ label: String) throws -> (TemporaryStore, String, [Int]) {
        let directory = TemporaryStore(
            label, unverifiedBecause: "each test changes the last segment after the clean close")
        let store = try directory.open(options: testOptions(segmentSize: 1 << 20))
        for index in 0..<20 { try store.put(typeTag: 1, payload: payloadBytes(200, seed: UInt64(index))) }
        try store.close()
        let path = try #require(directory.segmentFiles().last)
        let data = [UInt8](try Data(contentsOf: URL(fileURLWithPath: path)))
        var ends: [Int] = []
        data.withUnsafeBytes { raw in
            _ = SegmentScanner(bytes: raw).scan { frame in
                if frame.flags.contains(.commit) { ends.append(frame.offset + frame.length) }
            }
        }
        return (directory, path, ends)
    }

    /// `verify` exits 1 naming `file @ offset`, and `export` fails.
    func expectDamageReported(_ directory: TemporaryStore, file: String, offset: Int?) throws {
        let verify = try ToolRunner.run(["verify", directory.path])
        #expect(verify.status == 1, "\(verify.output)")
        let place = file + (offset.map { " @ \($0)" } ?? "")
        #expect(verify.stdout.contains("problem: \(place)"), "\(verify.output)")
        let export = try ToolRunner.run(["export", directory.path])
        #expect(export.status != 0, "\(export.output)")
        #expect(export.stdout.isEmpty, "nothing exported")
    }

    @Test func aChangedLastBatchAfterACleanCloseIsReported() throws {
        let (directory, path, ends) = try closedStore("tool-clean-flip")
        var data = [UInt8](try Data(contentsOf: URL(fileURLWithPath: path)))
        data[ends[ends.count - 2] + 60] ^= 0x01
        try Data(data).write(to: URL(fileURLWithPath: path))
        try expectDamageReported(directory, file: path, offset: ends[ends.count - 2])
    }

    @Test func aTruncationAtABatchBoundaryAfterACleanCloseIsReported() throws {
        let (directory, path, ends) = try closedStore("tool-clean-truncated")
        let data = try Data(contentsOf: URL(fileURLWithPath: path))
        try data.prefix(ends[ends.count - 4]).write(to: URL(fileURLWithPath: path))
        try expectDamageReported(directory, file: path, offset: ends[ends.count - 4])
    }

    @Test func aDamagedManifestIsReported() throws {
        let directory = TemporaryStore("tool-manifest", unverifiedBecause: "the manifest is overwritten")
        let store = try directory.open(options: testOptions())
        for index in 0..<300 { try store.put(typeTag: 1, payload: payloadBytes(600, seed: UInt64(index))) }
        try store.close()
        let manifest = directory.path + "/SEGMENTS"
        try Data("garbage".utf8).write(to: URL(fileURLWithPath: manifest))
        try FileManager.default.removeItem(atPath: directory.segmentFiles()[1])
        try expectDamageReported(directory, file: manifest, offset: 0)
        #expect(try Data(contentsOf: URL(fileURLWithPath: manifest)) == Data("garbage".utf8))
    }
}
