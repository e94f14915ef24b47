import Foundation
import TestSupport
import Testing

@testable @_spi(Testing) import LogStore

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Files a store does not expect: FIFOs named like store files, output to a device, a file-size
/// limit. Each is an error (or harmless), never a hang or a signal. Run through the tool, under a
/// timeout, so a regression cannot hang the suite.
@Suite struct SpecialFileTests {
    /// A closed store of two sealed segments and an append segment, without hint files; `unverifiedBecause`
    /// is for a test that leaves a special file where a store file should be.
    func makeStore(unverifiedBecause reason: String? = nil) throws -> TemporaryStore {
        let directory = TemporaryStore("special-files", unverifiedBecause: reason)
        var options = testOptions()
        options.compaction.background = false
        let store = try directory.open(options: options)
        while directory.segmentFiles().count < 3 { try store.put(typeTag: 1, payload: payloadBytes(2000, seed: 2)) }
        try store.close()
        return directory
    }

    @Test(arguments: ["0000000009.seg", "SEGMENTS"])
    func aFIFONamedLikeAStoreFileIsAnErrorNamingIt(name: String) throws {
        let directory = try makeStore(unverifiedBecause: "a FIFO replaces a segment or the manifest")
        let path = directory.path + "/" + name
        try? FileManager.default.removeItem(atPath: path)
        #expect(mkfifo(path, 0o644) == 0)
        for command in ["verify", "export", "compact"] {
            let result = try ToolRunner.run([command, directory.path], timeout: 30)
            #expect(!result.signaled, "\(command): \(result.output)")
            #expect(result.status != 0, "\(command): \(result.output)")
            #expect(result.output.contains(path), "\(command): \(result.output)")
            #expect(result.output.contains("not a regular file (a FIFO)"), "\(command): \(result.output)")
        }
    }

    @Test func aFIFONamedLikeAHintIsNotUsed() throws {
        let directory = try makeStore()
        let path = directory.path + "/" + HintFile.fileName(1)
        try? FileManager.default.removeItem(atPath: path)  // the hint the close wrote
        #expect(mkfifo(path, 0o644) == 0)
        let verify = try ToolRunner.run(["verify", directory.path], timeout: 30)
        #expect(!verify.signaled && verify.status == 1, "\(verify.output)")
        #expect(verify.stdout.contains("problem: \(path)"), "\(verify.output)")
        #expect(verify.stdout.contains("not a regular file (a FIFO)"), "\(verify.output)")
        for command in ["export", "compact"] {
            let result = try ToolRunner.run([command, directory.path], timeout: 30)
            #expect(!result.signaled && result.status == 0, "\(command): \(result.output)")
        }
    }

    @Test func exportToADeviceSucceeds() throws {
        let directory = try makeStore()
        let result = try ToolRunner.run(["export", directory.path, "--output", "/dev/null"], timeout: 60)
        #expect(result.status == 0, "\(result.output)")
        #expect(result.stdout.contains("exported"), "\(result.output)")
    }

    @Test func aFileSizeLimitAboveTheDataLetsAnImportSucceed() throws {
        let directory = TemporaryStore("fsize-small")
        let input = Data(#"{"id":1,"type":1,"refs":[],"payload":"AAEC"}"#.utf8 + [0x0A])
        let result = try ToolRunner.run(["import", directory.path], input: input, timeout: 60, fileSizeLimitKiB: 1024)
        #expect(!result.signaled, "killed by signal \(result.status): \(result.output)")
        #expect(result.status == 0, "\(result.output)")
        let store = try directory.open(options: testOptions())
        #expect(try store.get(ObjectID(1))?.payload == [0, 1, 2])
        try store.close()
    }

    @Test func writingBeyondAFileSizeLimitIsAnIOError() throws {
        let directory = TemporaryStore("fsize-large")
        let payload = Data(payloadBytes(8192, seed: 3)).base64EncodedString()
        let lines = (1...400).map { #"{"id":\#($0),"type":1,"refs":[],"payload":"\#(payload)"}"# }
        let input = Data((lines.joined(separator: "\n") + "\n").utf8)
        let result = try ToolRunner.run(
            ["import", directory.path, "--batch-size", "10"], input: input, timeout: 60, fileSizeLimitKiB: 1024)
        #expect(!result.signaled, "killed by signal \(result.status): \(result.output)")
        #expect(result.status == 1, "\(result.output)")
        #expect(result.stderr.contains("File too large"), "\(result.output)")
    }
}
