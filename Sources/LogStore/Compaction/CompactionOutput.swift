@_spi(Engine) import LogStoreFormat
@_spi(Engine) import LogStoreSystem

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// A new segment being written by the compactor: under a temporary name until it is complete and
/// synced, then renamed into place (and the directory synced), so a crash never leaves half of one.
final class CompactionOutput {
    let number: UInt32
    let path: String
    let temporaryPath: String
    private let fd: Int32
    private let io: SystemIO
    /// Bytes gathered before each write.
    static let chunkSize = 1 << 20
    private let buffer = WriteBuffer(capacity: chunkSize)
    /// Bytes gathered and not yet written.
    var bufferedBytes: Int { buffer.count }
    /// Bytes in the file, header included, plus what is buffered.
    private(set) var size = UInt64(LogFormat.segmentHeaderSize)
    private var written = UInt64(LogFormat.segmentHeaderSize)
    /// Lowest sequence number of a frame in it.
    private(set) var minSequence: UInt64 = .max
    /// Highest sequence number of a frame in it.
    private var maxSequence: UInt64 = 0
    /// Tombstones and root frames copied.
    private(set) var controlFrames = 0
    /// Bytes of frames that are not live records (header, tombstones, roots, reservation, seal).
    private(set) var retainedBytes = UInt64(LogFormat.segmentHeaderSize)
    /// Live records copied: id, the entry it had, the entry it has here.
    private(set) var moves: [(id: UInt64, from: IndexEntry, to: IndexEntry)] = []
    /// Fills the page cache ahead of the writes (the file is extended over `expectedSize` first, a hole
    /// that `finish` cuts back to what was written); nil when no size was expected.
    private var filler: PageCacheFiller?

    /// - parameter expectedSize: at most how many bytes the output will hold (0: unknown). The page cache
    ///   for them is made ahead of the writes, on another thread (``PageCacheFiller``).
    init(number: UInt32, directory: String, io: SystemIO, expectedSize: UInt64 = 0) throws(SystemError) {
        self.number = number
        self.io = io
        path = directory + "/" + LogFormat.segmentFileName(number)
        temporaryPath = path + LogFormat.compactingSuffix
        fd = try io.open(temporaryPath, flags: O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC)
        if expectedSize > 0 {
            do {
                try io.truncate(fd, to: expectedSize, path: temporaryPath)
                filler = PageCacheFiller(fd: fd, io: io, window: 8 << 20, limit: expectedSize)
            } catch {
                io.close(fd)
                try? io.unlink(temporaryPath)
                throw error
            }
        }
        let header = SegmentHeader(
            segmentNumber: number, createdAtMilliseconds: SystemClock.milliseconds(),
            flags: LogFormat.compactedSegmentFlag
        ).encoded()
        let start = buffer.reserve(header.count)
        header.withUnsafeBytes { if let base = $0.baseAddress { start.copyMemory(from: base, byteCount: $0.count) } }
        buffer.commit(header.count)
        written = 0
        size = UInt64(header.count)
    }

    deinit {
        filler?.stop()
        io.close(fd)
    }

    /// Appends a copy of `frame` (from `bytes`) as a batch of its own: commit flag set, checksum redone.
    /// - returns: the copy's offset in this segment.
    @discardableResult
    func append(_ frame: DecodedFrame, from bytes: UnsafeRawBufferPointer, move: (id: UInt64, from: IndexEntry)?)
        throws(SystemError) -> UInt64
    {
        let offset = size
        let target = buffer.reserve(frame.length)
        guard let source = bytes.baseAddress else { return offset }
        target.copyMemory(from: source + frame.offset, byteCount: frame.length)
        buffer.commit(frame.length)
        FrameEncoder.markCommit(in: buffer, frameStart: buffer.count - frame.length, length: frame.length)
        size += UInt64(frame.length)
        minSequence = min(minSequence, frame.sequence)
        maxSequence = max(maxSequence, frame.sequence)
        if move == nil {
            retainedBytes += UInt64(frame.length)
            controlFrames += 1
        }
        if let move {
            let entry = IndexEntry(
                segment: number, offset: UInt32(offset), length: UInt32(frame.length), typeTag: move.from.typeTag)
            moves.append((move.id, move.from, entry))
        }
        if buffer.count >= Self.chunkSize { try flushBuffer() }
        return offset
    }

    /// Makes room for `count` moves at once (a growing array touches fresh memory at every doubling).
    func reserveMoves(_ count: Int) { moves.reserveCapacity(count) }

    /// Appends a `reserveIDs` frame, so the id reservation survives the segments it came from.
    func appendReservation(through id: UInt64, sequence: UInt64) throws(SystemError) {
        let encoder = FrameEncoder(compressionMinimumSize: 0)
        let length = encoder.append(
            kind: .reserveIDs, flags: .commit, sequence: sequence, id: id, typeTag: 0, references: [],
            payload: UnsafeRawBufferPointer(start: nil, count: 0), to: buffer)
        size += UInt64(length)
        retainedBytes += UInt64(length)
        minSequence = min(minSequence, sequence)
        maxSequence = max(maxSequence, sequence)
    }

    private func flushBuffer() throws(SystemError) {
        filler?.claim(through: written + UInt64(buffer.count))  // before the write, as the filler asks
        try io.writeAll(fd, buffer.bytes, at: written, path: temporaryPath)
        // The disk writes this while the next chunk is gathered, so the sync in `finish` waits less.
        io.startWriteback(fd, offset: written, length: buffer.count)
        written += UInt64(buffer.count)
        buffer.removeAll()
    }

    /// Writes what is buffered, syncs, renames into place, syncs the directory, and maps the segment.
    func finish(directory: String) throws(SystemError) -> SegmentFile {
        let encoder = FrameEncoder(compressionMinimumSize: 0)
        let sequence = maxSequence
        let sealLength = encoder.append(
            kind: .seal, flags: .commit, sequence: sequence, id: size, typeTag: 0, references: [],
            payload: UnsafeRawBufferPointer(start: nil, count: 0), to: buffer)
        size += UInt64(sealLength)
        retainedBytes += UInt64(sealLength)
        try flushBuffer()
        if let filler {
            // The file was extended ahead of the writes: cut it back to them before making it durable.
            filler.stop()
            self.filler = nil
            try io.truncate(fd, to: size, path: temporaryPath)
        }
        try io.syncData(fd, path: temporaryPath)
        try io.rename(temporaryPath, to: path)
        try io.syncDirectory(directory)
        // Populated: readers move to it as soon as the index switches, and should not fault on it then.
        return try SegmentFile.open(
            number: number, path: path, writable: false, capacity: Int(size), populate: true, io: io)
    }

    /// Removes the unfinished temporary file after a failure.
    func abandon() {
        filler?.stop()
        filler = nil
        try? io.unlink(temporaryPath)
    }
}
