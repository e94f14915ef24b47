import Foundation
import TestSupport
import Testing

@testable @_spi(Testing) import LogStore

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Ctrl-C (SIGINT) sent to a running `logstore-tool`: commands that write in steps stop at a safe point,
/// say what they did, and exit 130.
@Suite struct ToolInterruptTests {
    /// 50 object lines in 5 batches of 10 (each object refers to the one before; every other one
    /// unpinned) and a root line.
    private func importInput() -> String {
        let objects = (1...50).map { id in
            let references = id > 1 ? "\(id - 1)" : ""
            let payload = Data("object \(id)".utf8).base64EncodedString()
            return
                "{\"id\":\(id),\"type\":1,\"refs\":[\(references)],\"pinned\":\(id % 2 == 0),\"payload\":\"\(payload)\"}"
        }
        return (objects + ["{\"root\":\"main\",\"id\":50}"]).joined(separator: "\n") + "\n"
    }

    @Test func ctrlCDuringImportStopsAtABatchBoundaryAndTheImportResumes() throws {
        let directory = TemporaryStore("tool-import-interrupt")
        let inputFolder = TemporaryStore("tool-import-interrupt-input")
        let input = inputFolder.path + "/input.jsonl"
        let text = importInput()
        try Data(text.utf8).write(to: URL(fileURLWithPath: input))

        let child = try RunningTool([
            "import", directory.path, "--input", input, "--batch-size", "10", "--test-pause-after-batch", "400",
        ])
        #expect(child.waitForError(containing: "test: batch 2 of 5 written", timeout: 60))
        child.interrupt()
        if !child.waitForExit(timeout: 60) { child.killNow() }
        let result = child.finish()
        #expect(!result.signaled && result.status == 130, "\(result.output)")
        #expect(
            result.stderr.contains(
                "import interrupted (Ctrl-C): 2 of 5 batches written, 20 of 50 objects; no root set (the 1 root go"),
            "\(result.stderr)")
        #expect(result.stderr.contains("the objects of lines 1 … 20 are written"), "\(result.stderr)")
        #expect(result.stderr.contains("--resume-after-line 20"), "\(result.stderr)")
        #expect(
            result.stderr.contains("(10 unpinned objects written); the 10 pinned objects written stay live"),
            "\(result.stderr)")
        #expect(result.stdout.isEmpty, "\(result.stdout)")

        // The store holds exactly the two batches, and no root; it is sound.
        do {
            let store = try Store.open(at: directory.path, options: StoreOptions(readOnly: true))
            #expect(try store.ids() == (1...20).map { ObjectID($0) })
            #expect(try store.roots().isEmpty)
            try store.close()
        }
        #expect(try Store.verify(at: directory.path).isSound)

        // Resuming writes the rest and the root; the store then exports the input exactly.
        let resumed = try ToolRunner.run([
            "import", directory.path, "--input", input, "--batch-size", "10", "--resume-after-line", "20",
        ])
        #expect(resumed.status == 0, "\(resumed.output)")
        #expect(
            resumed.stdout.contains(
                "imported 30 objects and 1 root from 51 lines in 3 batches (20 objects of lines 1 … 20 were written before)"
            ),
            "\(resumed.stdout)")
        let exported = try ToolRunner.run(["export", directory.path])
        #expect(exported.stdout == text)
    }

    @Test func resumingAfterLinesWhoseObjectsAreNotInTheStoreIsRefused() throws {
        let directory = TemporaryStore("tool-import-resume-missing")
        let result = try ToolRunner.run(
            ["import", directory.path, "--resume-after-line", "3"], input: Data(importInput().utf8))
        #expect(result.status == 1, "\(result.output)")
        #expect(
            result.stderr.contains(
                "line 1: object 1 is not in the store, so the import cannot resume after line 3 "
                    + "(import without --resume-after-line)"),
            "\(result.stderr)")
        #expect(result.stderr.contains("import stopped: 4 bad lines of 51; nothing was written"), "\(result.stderr)")
    }

    @Test func ctrlCDuringStressPrintsThePartialSummary() throws {
        let directory = TemporaryStore("tool-stress-interrupt")
        let path = directory.path + "/soak"
        let child = try RunningTool(["stress", path, "--seconds", "60", "--threads", "2", "--seed", "3"])
        #expect(child.waitForError(containing: "stress: ", timeout: 60))
        usleep(300_000)
        child.interrupt()
        if !child.waitForExit(timeout: 30) { child.killNow() }
        let result = child.finish()
        #expect(!result.signaled && result.status == 130, "\(result.output)")
        #expect(result.stdout.contains("interrupted (Ctrl-C) after "), "\(result.stdout)")
        #expect(result.stdout.contains("errors: 0"), "\(result.stdout)")
        #expect(result.stdout.contains("\nput "), "\(result.stdout)")
        #expect(result.stdout.contains("verify: sound"), "\(result.stdout)")
        #expect(try Store.verify(at: path).isSound)
    }
}
