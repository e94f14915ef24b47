@_spi(Engine) import LogStoreFormat
@_spi(Engine) import LogStoreSystem

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Telling an interrupted segment creation from a stray file named like a segment.
///
/// The writer seals a segment (durably) before it creates the next one, so a newest segment whose
/// header is incomplete or zero is an interrupted creation only when the writer segment before it is
/// sealed. When that one is not sealed, it is where writing stopped, and the newest "segment" is a
/// file that does not belong there: it is reported for what it is, instead of blaming the healthy
/// segment before it for lacking its seal.
extension StoreLoader {
    /// When segment `candidate` (the highest-numbered one that is not a compaction output) cannot be an
    /// interrupted creation although its header is incomplete or zero, why; else nil.
    func strayProblem(_ candidate: UInt32, previous: UInt32?) -> String? {
        guard let previous else { return nil }
        let path = directory + "/" + LogFormat.segmentFileName(candidate)
        let bytes: [UInt8]
        do {
            bytes = try headOf(candidate, path: path, count: LogFormat.segmentHeaderSize)
        } catch {
            // Not a regular file, or unreadable: loading it reports that, unless the one before it is the
            // append segment, which would then be blamed for lacking its seal.
            guard !endsWithSeal(previous) else { return nil }
            return "cannot be read as a segment: \(error)"
        }
        let what: String
        if bytes.count < LogFormat.segmentHeaderSize {
            what =
                "only \(bytes.count) bytes: too short to be a segment (a segment header alone is"
                + " \(LogFormat.segmentHeaderSize) bytes)"
        } else if bytes.allSatisfy({ $0 == 0 }) {
            what = "its header is all zeros"
        } else {
            return nil
        }
        guard !endsWithSeal(previous) else { return nil }
        return "\(what); nor is it a segment whose creation was interrupted: the segment before it, "
            + "\(LogFormat.segmentFileName(previous)), is not sealed (the writer seals a segment before it "
            + "creates the next). Move this file out of the store directory."
    }

    /// The first `count` bytes of segment `number` at `path` (fewer when it is shorter), read through its
    /// pinned descriptor when the load holds one (``PinnedSegments``).
    private func headOf(_ number: UInt32, path: String, count: Int) throws(SystemError) -> [UInt8] {
        if let fd = pinned?.descriptor(number) { return try io.read(fd, count: count, at: 0, path: path) }
        let fd = try io.open(path, flags: O_RDONLY | O_CLOEXEC)
        defer { io.close(fd) }
        return try io.read(fd, count: count, at: 0, path: path)
    }

    /// Whether segment `number` ends with a valid seal frame (read through its pinned descriptor when the
    /// load holds one).
    private func endsWithSeal(_ number: UInt32) -> Bool {
        let path = directory + "/" + LogFormat.segmentFileName(number)
        if let fd = pinned?.descriptor(number) { return Self.endsWithSeal(fd, path: path, io: io) }
        guard let fd = try? io.open(path, flags: O_RDONLY | O_CLOEXEC) else { return false }
        defer { io.close(fd) }
        return Self.endsWithSeal(fd, path: path, io: io)
    }

    /// Whether the segment open at `fd` ends with its seal frame (its last bytes read, not the whole file).
    static func endsWithSeal(_ fd: Int32, path: String, io: SystemIO) -> Bool {
        let header = UInt64(LogFormat.segmentHeaderSize)
        guard let size = try? io.size(fd, path: path), size > header,
            let head = try? io.read(fd, count: Int(header), at: 0, path: path)
        else { return false }
        let format = head.withUnsafeBytes { FrameFormat(segment: $0) }
        // A seal frame is at most this long (exactly this long in version 1; an encrypted segment's carries
        // its nonce and tag too).
        let longest = min(UInt64(LogFormat.sealRoom), size - header)
        guard let tail = try? io.read(fd, count: Int(longest), at: size - longest, path: path) else { return false }
        return tail.withUnsafeBytes { raw in
            for start in 0..<raw.count {
                guard case .success(let frame) = FrameDecoder.decode(raw, at: start, format: format),
                    frame.length == raw.count - start
                else { continue }
                let offset = size - UInt64(frame.length)
                let batchHolds =
                    !format.isCompact || CompactFrameDecoder.batchChecksumMatches(frame, batchStart: start, in: raw)
                return frame.kind == .seal && frame.flags.contains(.commit) && frame.id == offset && batchHolds
            }
            return false
        }
    }
}
