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
/// say what they did, and end by SIGINT (so that a shell loop stops too).
@Suite struct ToolInterruptTests {
    /// 50 object lines in 5 batches of 10 (each object refers to the one before, or with `reversed` to
    /// the one after, so that the lines are in reverse dependency order; every other one unpinned) and a
    /// root line naming the object nothing refers to.
    private func importInput(reversed: Bool = false) -> String {
        let objects = (1...50).map { id in
            let references = reversed ? (id < 50 ? "\(id + 1)" : "") : (id > 1 ? "\(id - 1)" : "")
            let payload = Data("object \(id)".utf8).base64EncodedString()
            return
                "{\"id\":\(id),\"type\":1,\"refs\":[\(references)],\"pinned\":\(id % 2 == 0),\"payload\":\"\(payload)\"}"
        }
        return (objects + ["{\"root\":\"main\",\"id\":\(reversed ? 1 : 50)}"]).joined(separator: "\n") + "\n"
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
        #expect(result.signaled && result.status == SIGINT, "\(result.output)")
        #expect(
            result.stderr.contains(
                "import interrupted (Ctrl-C): 2 of 5 batches written, 20 of 50 objects; no root set (the root goes "
                    + "in the last batch)"),
            "\(result.stderr)")
        #expect(result.stderr.contains("the objects of lines 1 … 20 are written"), "\(result.stderr)")
        #expect(result.stderr.contains("--resume-after-line 20"), "\(result.stderr)")
        #expect(
            result.stderr.contains(
                "frees what nothing reaches (at most 10 unpinned objects written: one that a root or a pinned "
                    + "object refers to stays); the 10 pinned objects written stay live until deleted\n"),
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

    /// Lines in reverse dependency order (object i refers to object i + 1): the batches write the last
    /// lines first, so after two of them no line from the first on is written completely, and the import
    /// resumes after line 0; the store then exports the input exactly.
    @Test func anImportOfLinesInReverseDependencyOrderResumesFromTheRightLine() throws {
        let directory = TemporaryStore("tool-import-interrupt-reversed")
        let inputFolder = TemporaryStore("tool-import-interrupt-reversed-input")
        let input = inputFolder.path + "/input.jsonl"
        let text = importInput(reversed: true)
        try Data(text.utf8).write(to: URL(fileURLWithPath: input))

        let child = try RunningTool([
            "import", directory.path, "--input", input, "--batch-size", "10", "--test-pause-after-batch", "400",
        ])
        #expect(child.waitForError(containing: "test: batch 2 of 5 written", timeout: 60))
        child.interrupt()
        if !child.waitForExit(timeout: 60) { child.killNow() }
        let result = child.finish()
        #expect(result.signaled && result.status == SIGINT, "\(result.output)")
        #expect(result.stderr.contains("2 of 5 batches written, 20 of 50 objects"), "\(result.stderr)")
        #expect(result.stderr.contains("no line is written completely"), "\(result.stderr)")
        #expect(result.stderr.contains("--resume-after-line 0 "), "\(result.stderr)")
        do {
            let store = try Store.open(at: directory.path, options: StoreOptions(readOnly: true))
            #expect(try store.ids() == (31...50).map { ObjectID($0) })
            try store.close()
        }

        let resumed = try ToolRunner.run([
            "import", directory.path, "--input", input, "--batch-size", "10", "--resume-after-line", "0",
        ])
        #expect(resumed.status == 0, "\(resumed.output)")
        #expect(resumed.stdout.contains("imported 50 objects and 1 root from 51 lines"), "\(resumed.stdout)")
        let exported = try ToolRunner.run(["export", directory.path])
        #expect(exported.stdout == text)
    }

    /// A Ctrl-C after the input was read and checked, before anything was written: no store is created.
    @Test func ctrlCAfterReadingCreatesNoStore() throws {
        let parent = TemporaryStore("tool-import-interrupt-after-reading")
        let path = parent.path + "/new"
        let inputFile = parent.path + "/input.jsonl"
        try Data(importInput().utf8).write(to: URL(fileURLWithPath: inputFile))
        let child = try RunningTool(["import", path, "--input", inputFile, "--test-pause-after-reading", "400"])
        #expect(child.waitForError(containing: "test: input read", timeout: 60))
        child.interrupt()
        if !child.waitForExit(timeout: 60) { child.killNow() }
        let result = child.finish()
        #expect(result.signaled && result.status == SIGINT, "\(result.output)")
        #expect(
            result.stderr.contains(
                "import interrupted (Ctrl-C) after reading the input: nothing was written (no store was created)"),
            "\(result.stderr)")
        #expect(!FileManager.default.fileExists(atPath: path))
    }

    /// A Ctrl-C while the import waits for more input (a FIFO that stays open) stops it at once.
    @Test func ctrlCWhileWaitingForInputStopsAtOnce() throws {
        let parent = TemporaryStore("tool-import-interrupt-waiting")
        let path = parent.path + "/new"
        let fifo = parent.path + "/input"
        #expect(mkfifo(fifo, 0o600) == 0)
        // Opened for reading and writing, so the open does not wait for the tool, and the FIFO never ends.
        let writer = open(fifo, O_RDWR)
        #expect(writer >= 0)
        defer { close(writer) }
        let child = try RunningTool(["import", path, "--input", fifo])
        let line = Array(importInput().split(separator: "\n")[0].utf8) + [UInt8(ascii: "\n")]
        #expect(write(writer, line, line.count) == line.count)
        // Once the tool has read the line (the FIFO is empty again) it has its handler and waits for the next.
        var unread: Int32 = 1
        for _ in 0..<600 where unread > 0 {
            usleep(50_000)
            if ioctl(writer, UInt(FIONREAD), &unread) != 0 { break }
        }
        #expect(unread == 0, "the tool did not read the first line")
        usleep(200_000)
        child.interrupt()
        let ended = child.waitForExit(timeout: 10)
        if !ended { child.killNow() }
        let result = child.finish()
        #expect(ended, "the import went on waiting for input after Ctrl-C")
        #expect(result.signaled && result.status == SIGINT, "\(result.output)")
        #expect(
            result.stderr.contains("import interrupted (Ctrl-C) while reading line 2: nothing was written"),
            "\(result.stderr)")
        #expect(!FileManager.default.fileExists(atPath: path))
    }

    /// A SIGINT ignored when the tool starts (a background job of a non-interactive shell) stays ignored:
    /// the import runs to its end.
    @Test func anIgnoredSIGINTStaysIgnored() throws {
        let directory = TemporaryStore("tool-import-sigint-ignored")
        let inputFolder = TemporaryStore("tool-import-sigint-ignored-input")
        let input = inputFolder.path + "/input.jsonl"
        try Data(importInput().utf8).write(to: URL(fileURLWithPath: input))
        let tool = try #require(ToolRunner.executable)
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/bin/bash")
        let arguments = [
            "import", directory.path, "--input", input, "--batch-size", "10", "--test-pause-after-batch", "300",
        ]
        process.arguments = ["-c", "trap '' INT && exec \"$0\" \"$@\"", tool] + arguments
        let errors = Pipe()
        process.standardError = errors
        process.standardOutput = FileHandle.nullDevice
        try process.run()
        // Once the first batch is written, the tool runs with SIGINT as it found it.
        var seen = Data()
        while !seen.contains(Array("batch 1 of 5 written".utf8)) {
            let chunk = errors.fileHandleForReading.availableData
            if chunk.isEmpty { break }
            seen += chunk
        }
        _ = kill(process.processIdentifier, SIGINT)
        let rest = errors.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        let stderr = String(decoding: seen + rest, as: UTF8.self)
        #expect(process.terminationReason == .exit && process.terminationStatus == 0, "\(stderr)")
        #expect(stderr.contains("test: batch 5 of 5 written") && !stderr.contains("interrupted"), "\(stderr)")
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
        #expect(result.signaled && result.status == SIGINT, "\(result.output)")
        #expect(result.stdout.contains("interrupted (Ctrl-C) after "), "\(result.stdout)")
        #expect(result.stdout.contains("errors: 0"), "\(result.stdout)")
        #expect(result.stdout.contains("\nput "), "\(result.stdout)")
        #expect(result.stdout.contains("verify: sound"), "\(result.stdout)")
        #expect(try Store.verify(at: path).isSound)
    }
}
