import Foundation
import Testing

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// How a run of `logstore-tool` ended and what it printed.
package struct ToolResult: Sendable {
    /// The exit code, or the signal number when ``signal`` is true.
    package var status: Int32
    /// Whether the process was ended by a signal.
    package var signaled: Bool
    package var stdout: String
    package var stderr: String

    /// Standard output and standard error together.
    package var output: String { stdout + "\n" + stderr }
}

/// The executables tests run: the user's tool, or the crash harness (a test-only target).
package enum ToolBinary: Sendable {
    case tool
    case crashHarness

    /// The file name of the binary.
    var name: String {
        switch self {
        case .tool: "logstore-tool"
        case .crashHarness: "logstore-crash-harness"
        }
    }

    /// Where it is: next to the test bundle (`<scratch>/debug/`), else in a `.build*/debug/` of the package;
    /// `LOGSTORE_TOOL` or `LOGSTORE_CRASH_HARNESS` names it explicitly.
    var path: String? {
        switch self {
        case .tool: ToolRunner.executable
        case .crashHarness: ToolRunner.crashHarness
        }
    }
}

/// Finds and runs the `logstore-tool` binary that the test target depends on.
package enum ToolRunner {
    /// The tool's binary (see ``ToolBinary/path``).
    package static let executable: String? = locate("logstore-tool", environment: "LOGSTORE_TOOL")
    /// The crash harness's binary.
    package static let crashHarness: String? = locate("logstore-crash-harness", environment: "LOGSTORE_CRASH_HARNESS")

    private static func locate(_ name: String, environment: String) -> String? {
        let fileManager = FileManager.default
        var candidates: [String] = []
        if let explicit = ProcessInfo.processInfo.environment[environment] { candidates.append(explicit) }
        let binaries: [String?] = [Bundle.main.executablePath, CommandLine.arguments.first, "/proc/self/exe"]
        for binary in binaries {
            guard let binary else { continue }
            let resolved = URL(fileURLWithPath: binary).resolvingSymlinksInPath()
            var directory = resolved.deletingLastPathComponent()
            // On macOS the test binary sits inside `X.xctest/Contents/MacOS/`.
            for _ in 0..<4 {
                candidates.append(directory.appendingPathComponent(name).path)
                directory = directory.deletingLastPathComponent()
            }
        }
        // The package root is three levels above this file (Tests/TestSupport/ToolRunner.swift).
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent()
        let scratches = ((try? fileManager.contentsOfDirectory(atPath: root.path)) ?? [])
            .filter { $0.hasPrefix(".build") }
            .map { root.appendingPathComponent($0).appendingPathComponent("debug/" + name).path }
            .filter { fileManager.isExecutableFile(atPath: $0) }
            .sorted { modificationDate($0) > modificationDate($1) }
        candidates += scratches
        return candidates.first { path in
            var isDirectory: ObjCBool = false
            return fileManager.fileExists(atPath: path, isDirectory: &isDirectory) && !isDirectory.boolValue
                && fileManager.isExecutableFile(atPath: path)
        }
    }

    private static func modificationDate(_ path: String) -> Date {
        let attributes = try? FileManager.default.attributesOfItem(atPath: path)
        return attributes?[.modificationDate] as? Date ?? .distantPast
    }

    /// Runs the tool to its end with `arguments`, feeding `input` on standard input (none when nil).
    ///
    /// A run that takes longer than `timeout` seconds is killed and recorded as an issue.
    ///
    /// - parameter fileSizeLimitKiB: run it under this file-size limit (`ulimit -f`, in KiB), through
    ///   `/bin/bash`, which then replaces itself with the tool.
    package static func run(
        _ arguments: [String], binary: ToolBinary = .tool, input: Data? = nil, timeout: Double = 120,
        fileSizeLimitKiB: Int? = nil
    ) throws -> ToolResult {
        let child = try RunningTool(arguments, binary: binary, input: input, fileSizeLimitKiB: fileSizeLimitKiB)
        if !child.waitForExit(timeout: timeout) {
            Issue.record("logstore-tool \(arguments.joined(separator: " ")) did not finish in \(timeout) s")
            child.killNow()
        }
        return child.finish()
    }
}

/// A running `logstore-tool` process whose standard output and error are read as they come.
package final class RunningTool {
    private let process = Process()
    private let stdout: PipeReader
    private let stderr: PipeReader
    private let exited = DispatchSemaphore(value: 0)
    private var hasExited = false
    private let pipes: [Pipe]

    /// Starts the tool (or the crash harness) with `arguments`, under a file-size limit (KiB, `ulimit -f` of
    /// bash) when one is given.
    package init(
        _ arguments: [String], binary: ToolBinary = .tool, input: Data? = nil, fileSizeLimitKiB: Int? = nil
    ) throws {
        guard let executable = binary.path else {
            throw ToolRunnerError("\(binary.name) binary not found; build it (swift build --build-tests)")
        }
        let outputPipe = Pipe()
        let errorPipe = Pipe()
        let inputPipe = Pipe()
        pipes = [outputPipe, errorPipe, inputPipe]
        if let fileSizeLimitKiB {
            process.executableURL = URL(fileURLWithPath: "/bin/bash")
            process.arguments = ["-c", "ulimit -f \(fileSizeLimitKiB) && exec \"$0\" \"$@\"", executable] + arguments
        } else {
            process.executableURL = URL(fileURLWithPath: executable)
            process.arguments = arguments
        }
        process.standardOutput = outputPipe
        process.standardError = errorPipe
        process.standardInput = input == nil ? FileHandle.nullDevice : inputPipe
        let exited = exited
        process.terminationHandler = { _ in exited.signal() }
        try process.run()
        stdout = PipeReader(outputPipe.fileHandleForReading)
        stderr = PipeReader(errorPipe.fileHandleForReading)
        if let input {
            // A child that stops reading would otherwise end this process with SIGPIPE.
            _ = signal(SIGPIPE, SIG_IGN)
            let writer = inputPipe.fileHandleForWriting
            Thread.detachNewThread {
                // The child may stop reading (a bad line ends an import): a failed write is fine.
                try? writer.write(contentsOf: input)
                try? writer.close()
            }
        }
    }

    /// The process id.
    package var pid: Int32 { process.processIdentifier }

    /// Waits until standard output holds a complete line or is closed, at most `timeout` seconds.
    package func waitForFirstLine(timeout: Double) -> Bool {
        stdout.wait(timeout: timeout) { data, closed in closed || data.contains(UInt8(ascii: "\n")) }
    }

    /// Waits until standard output holds `text` or is closed, at most `timeout` seconds; whether it holds it.
    package func waitForOutput(containing text: String, timeout: Double) -> Bool {
        let bytes = Data(text.utf8)
        _ = stdout.wait(timeout: timeout) { data, closed in closed || data.range(of: bytes) != nil }
        return stdout.wait(timeout: 0) { data, _ in data.range(of: bytes) != nil }
    }

    /// Waits until standard error holds `text` or is closed, at most `timeout` seconds; whether it holds it.
    package func waitForError(containing text: String, timeout: Double) -> Bool {
        let bytes = Data(text.utf8)
        _ = stderr.wait(timeout: timeout) { data, closed in closed || data.range(of: bytes) != nil }
        return stderr.wait(timeout: 0) { data, _ in data.range(of: bytes) != nil }
    }

    /// Sends SIGINT, as Ctrl-C in a terminal does.
    package func interrupt() {
        _ = kill(process.processIdentifier, SIGINT)
    }

    /// Sends SIGKILL.
    package func killNow() {
        _ = kill(process.processIdentifier, SIGKILL)
    }

    /// Waits for the process to end, at most `timeout` seconds; false when it is still running.
    package func waitForExit(timeout: Double) -> Bool {
        if hasExited { return true }
        hasExited = exited.wait(timeout: .now() + timeout) == .success
        return hasExited
    }

    /// Waits for the end of the process and of its output, and returns how it ended.
    package func finish() -> ToolResult {
        if !hasExited {
            exited.wait()
            hasExited = true
        }
        let output = stdout.readToEnd()
        let errors = stderr.readToEnd()
        return ToolResult(
            status: process.terminationStatus, signaled: process.terminationReason == .uncaughtSignal,
            stdout: String(decoding: output, as: UTF8.self), stderr: String(decoding: errors, as: UTF8.self))
    }
}

package struct ToolRunnerError: Error, CustomStringConvertible {
    package var description: String
    package init(_ description: String) { self.description = description }
}

/// Reads a pipe on its own thread until end of file, so the writer never blocks on a full pipe.
private final class PipeReader: @unchecked Sendable {
    private let condition = NSCondition()
    private var data = Data()
    private var closed = false
    private let handle: FileHandle

    init(_ handle: FileHandle) {
        self.handle = handle
        Thread.detachNewThread { [self] in self.readLoop() }
    }

    private func readLoop() {
        let fd = handle.fileDescriptor
        var buffer = [UInt8](repeating: 0, count: 1 << 16)
        while true {
            let count = buffer.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
            if count < 0, errno == EINTR { continue }
            condition.lock()
            if count > 0 {
                data.append(contentsOf: buffer[0..<count])
            } else {
                closed = true
            }
            condition.broadcast()
            condition.unlock()
            if count <= 0 { return }
        }
    }

    /// Waits until `predicate` holds for the data so far and whether the pipe is closed, at most `timeout` seconds.
    func wait(timeout: Double, until predicate: (Data, Bool) -> Bool) -> Bool {
        let deadline = Date(timeIntervalSinceNow: timeout)
        condition.lock()
        defer { condition.unlock() }
        while !predicate(data, closed) {
            if !condition.wait(until: deadline) { return predicate(data, closed) }
        }
        return true
    }

    /// Everything read once the pipe is closed.
    func readToEnd() -> Data {
        condition.lock()
        defer { condition.unlock() }
        while !closed { condition.wait() }
        return data
    }
}
