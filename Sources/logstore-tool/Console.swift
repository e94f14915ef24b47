import Foundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// An error that ends a command with a message on standard error and exit code 1.
struct ToolError: Error, CustomStringConvertible {
    /// What went wrong, in words.
    var description: String

    init(_ description: String) { self.description = description }
}

/// Unbuffered writes to the standard streams.
enum Console {
    /// Writes `line` and a newline to standard error at once.
    static func error(_ line: String) {
        try? writeAll(Array((line + "\n").utf8), to: STDERR_FILENO)
    }

    /// Writes `line` and a newline to standard output at once (one `write`, no buffering), so a parent
    /// reading a pipe sees the whole line as soon as this returns.
    static func acknowledge(_ line: String) throws {
        try writeAll(Array((line + "\n").utf8), to: STDOUT_FILENO)
    }

    /// Writes every byte of `bytes` to `fd`, retrying short writes and interrupted calls.
    static func writeAll(_ bytes: [UInt8], to fd: Int32) throws {
        try bytes.withUnsafeBytes { buffer in
            var done = 0
            while done < buffer.count {
                let written = write(fd, buffer.baseAddress.map { $0 + done }, buffer.count - done)
                if written < 0 {
                    if errno == EINTR { continue }
                    throw ToolError("cannot write output: \(String(cString: strerror(errno)))")
                }
                done += written
            }
        }
    }
}

/// Output in large writes: to standard output or to a new file.
final class OutputSink {
    private let fd: Int32
    private let ownsDescriptor: Bool
    private let name: String
    private var buffer: [UInt8] = []

    /// Writes to standard output.
    init() {
        fd = STDOUT_FILENO
        ownsDescriptor = false
        name = "standard output"
    }

    /// Writes to the file at `path`, created or truncated.
    init(path: String) throws {
        let descriptor = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644)
        guard descriptor >= 0 else {
            throw ToolError("cannot create \(path): \(String(cString: strerror(errno)))")
        }
        fd = descriptor
        ownsDescriptor = true
        name = path
    }

    deinit {
        if ownsDescriptor { close(fd) }
    }

    /// Adds `line` and a newline.
    func writeLine(_ line: String) throws {
        buffer.append(contentsOf: line.utf8)
        buffer.append(UInt8(ascii: "\n"))
        if buffer.count >= 1 << 16 { try flush() }
    }

    /// Writes out what is buffered; for a regular file, also makes it durable (a pipe or a device such
    /// as `/dev/null` has nothing to sync).
    func finish() throws {
        try flush()
        var info = stat()
        let isRegularFile = fstat(fd, &info) == 0 && (info.st_mode & S_IFMT) == S_IFREG
        if isRegularFile, fsync(fd) != 0 {
            throw ToolError("cannot sync \(name): \(String(cString: strerror(errno)))")
        }
    }

    private func flush() throws {
        guard !buffer.isEmpty else { return }
        do {
            try Console.writeAll(buffer, to: fd)
        } catch {
            throw ToolError("cannot write \(name): \(error)")
        }
        buffer.removeAll(keepingCapacity: true)
    }
}

/// Sizes for people: `1.5 MiB`.
func formatBytes(_ count: UInt64) -> String {
    let units = ["bytes", "KiB", "MiB", "GiB", "TiB"]
    var value = Double(count)
    var unit = 0
    while value >= 1024, unit < units.count - 1 {
        value /= 1024
        unit += 1
    }
    return unit == 0 ? "\(count) bytes" : String(format: "%.1f", value) + " " + units[unit]
}

/// `count` and `noun`, with an `s` unless `count` is 1 (`batch` takes `es`).
func plural(_ count: Int, _ noun: String) -> String {
    guard count != 1 else { return "1 \(noun)" }
    return "\(count) \(noun)" + (noun.hasSuffix("ch") ? "es" : "s")
}

/// `text` as a JSON string literal, quotes included.
func jsonString(_ text: String) -> String {
    var result = "\""
    for scalar in text.unicodeScalars {
        switch scalar {
        case "\"": result += "\\\""
        case "\\": result += "\\\\"
        case "\n": result += "\\n"
        case "\r": result += "\\r"
        case "\t": result += "\\t"
        case _ where scalar.value < 0x20:
            result += String(format: "\\u%04x", scalar.value)
        default: result.unicodeScalars.append(scalar)
        }
    }
    return result + "\""
}
