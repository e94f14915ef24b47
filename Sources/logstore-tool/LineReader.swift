#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Reads lines from standard input or a file, without holding the whole input in memory.
///
/// It reads with `read(2)` into a buffer of its own, so a read interrupted by a signal (`EINTR`) loses
/// nothing: after a Ctrl-C (``Interruption/requested``) ``next()`` returns nil with ``interrupted`` set,
/// and after any other signal it reads again. A line is returned only once its line break (or the end
/// of the input) was read.
final class LineReader {
    /// The file descriptor the lines are read from.
    let fileDescriptor: Int32
    private let ownsDescriptor: Bool
    /// Bytes read and not yet returned as lines: `buffer[start...]`.
    private var buffer: [UInt8] = []
    private var start = 0
    /// Where in `buffer[start...]` no line break is, from the last search (so a long line is searched once).
    private var searched = 0
    private var atEnd = false

    /// Bytes returned so far, line breaks included.
    private var consumed: Int64 = 0

    /// Where the line that ``next()`` returned last starts: bytes read before it, from where reading began.
    private(set) var lineOffset: Int64 = 0

    /// The `errno` of the read that failed, when reading stopped on an error rather than at the end.
    private(set) var readError: Int32?

    /// Whether ``next()`` returned nil because a Ctrl-C interrupted a read (the input is not at its end).
    private(set) var interrupted = false

    /// The size of one read.
    private static let chunk = 1 << 16

    private init(descriptor: Int32, ownsDescriptor: Bool) {
        fileDescriptor = descriptor
        self.ownsDescriptor = ownsDescriptor
    }

    /// Reads standard input.
    static func standardInput() -> LineReader {
        LineReader(descriptor: STDIN_FILENO, ownsDescriptor: false)
    }

    /// Reads the file at `path`.
    convenience init(path: String) throws {
        let descriptor = open(path, O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else {
            throw ToolError("cannot open \(path): \(String(cString: strerror(errno)))")
        }
        self.init(descriptor: descriptor, ownsDescriptor: true)
    }

    deinit {
        if ownsDescriptor { close(fileDescriptor) }
    }

    /// The next line without its line break (and any carriage returns before it), or nil at the end of
    /// the input, on a read error (``failed``), or after a Ctrl-C (``interrupted``).
    func next() -> [UInt8]? {
        while true {
            if let newline = buffer[(start + searched)...].firstIndex(of: UInt8(ascii: "\n")) {
                return take(through: newline + 1)
            }
            searched = buffer.count - start
            if atEnd {
                return start < buffer.count ? take(through: buffer.count) : nil
            }
            guard fill() else { return nil }
        }
    }

    /// Reads more bytes into the buffer; false when reading must stop (an error or a Ctrl-C).
    private func fill() -> Bool {
        if start > 0, start >= buffer.count / 2 {
            buffer.removeFirst(start)
            start = 0
        }
        // A Ctrl-C that came while the last line was being handled: stop before waiting for more input.
        if Interruption.requested {
            interrupted = true
            return false
        }
        let old = buffer.count
        buffer.append(contentsOf: repeatElement(0, count: Self.chunk))
        while true {
            let count = buffer.withUnsafeMutableBytes { raw in
                read(fileDescriptor, raw.baseAddress.map { $0 + old }, Self.chunk)
            }
            if count >= 0 {
                buffer.removeLast(Self.chunk - count)
                if count == 0 { atEnd = true }
                return true
            }
            let code = errno
            if code == EINTR {
                guard Interruption.requested else { continue }
                interrupted = true
            } else {
                readError = code
            }
            buffer.removeLast(Self.chunk)
            return false
        }
    }

    /// Returns `buffer[start..<end]` as a line (without trailing line breaks) and consumes it.
    private func take(through end: Int) -> [UInt8] {
        lineOffset = consumed
        consumed += Int64(end - start)
        var last = end
        while last > start, buffer[last - 1] == UInt8(ascii: "\n") || buffer[last - 1] == UInt8(ascii: "\r") {
            last -= 1
        }
        let line = Array(buffer[start..<last])
        start = end
        searched = 0
        return line
    }

    /// Whether reading stopped on an error rather than at the end of the input.
    var failed: Bool { readError != nil }
}
