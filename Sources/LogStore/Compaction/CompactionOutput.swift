@_spi(Engine) import LogStoreFormat
@_spi(Engine) import LogStoreSystem

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// A new segment being written by the compactor: under a temporary name until it is complete and
/// synced, then renamed into place (and the directory synced), so a crash never leaves half of one.
///
/// Frames are written in the layout of version 2 whatever their source's. Consecutive copies of one
/// sequence number (frames of one batch of the source) form one batch of the output, of at most
/// ``batchLimit`` bytes, so that the output pays one batch checksum per such run rather than per frame:
/// each copy is encoded when the next one arrives, which tells whether it ends its batch.
///
/// Payloads are copied as they are stored, but for puts that ``Recompression`` names: those compressed
/// against an older dictionary than the store's newest, and small ones stored raw before the store had a
/// dictionary. Those are decompressed and compressed against the newest (or copied as they are when that
/// fails: compaction never changes what a record reads as).
final class CompactionOutput {
    /// What compaction recompresses, and with what.
    struct Recompression {
        /// The dictionary copies are recompressed against.
        let newest: CompressionDictionary
        /// What the sources were compressed against.
        let dictionaries: CompressionDictionaries
        /// Raw payloads from this length on were already offered to LZ4 alone (0: compression is off).
        let compressionMinimumSize: Int

        /// Whether the copy of `frame` is recompressed.
        func applies(to frame: DecodedFrame) -> Bool {
            guard frame.kind == .put, frame.dictionary != newest.id else { return false }
            if frame.dictionary != 0 { return true }
            return !frame.flags.contains(.compressed) && frame.storedLength >= CompactFrameEncoder.dictionaryMinimumSize
                && frame.storedLength < compressionMinimumSize
        }
    }

    let number: UInt32
    let path: String
    let temporaryPath: String
    private let fd: Int32
    private let io: SystemIO
    /// Bytes gathered before each write (written once a batch ends past it).
    static let chunkSize = 1 << 20
    /// The most bytes one batch of the output takes before a new one starts.
    static let batchLimit = 1 << 20
    private let buffer = WriteBuffer(capacity: chunkSize + batchLimit)
    /// Bytes gathered and not yet written.
    var bufferedBytes: Int { buffer.count }
    /// Bytes in the file, header included, plus what is buffered, plus at most what the copy not yet
    /// encoded takes.
    var size: UInt64 { encodedSize + UInt64(held.map { Self.bound(of: $0.frame, recompression) } ?? 0) }

    /// The most bytes the copy of `frame` takes in an output recompressing with `recompression` (re-encoded,
    /// its references may take more bytes than in a version-1 source, and it may end a batch).
    static func bound(of frame: DecodedFrame, _ recompression: Recompression?) -> Int {
        let room =
            recompression?.applies(to: frame) == true
            ? max(frame.originalLength, Compression.bound(frame.originalLength)) : frame.storedLength
        return CompactFrame.bound(referenceCount: frame.referenceCount, payloadRoom: room)
    }
    /// What is recompressed (nil: nothing).
    private let recompression: Recompression?
    /// The working stream of recompression.
    private let work: Compression.WorkStream?
    /// Bytes in the file, header included, plus what is buffered.
    private var encodedSize = UInt64(LogFormat.segmentHeaderSize)
    /// The frames' sequence numbers are deltas from this (the header's base sequence).
    private let baseSequence: UInt64
    private let encoder: CompactFrameEncoder
    /// The store's encryption: the output's batches are sealed as they are written.
    private let encryption: StoreEncryption?
    /// Where the output's open batch starts in `buffer`.
    private var batchStart = 0
    /// The last copy, encoded when the next arrives (or at the end).
    private var held: (frame: DecodedFrame, bytes: UnsafeRawBufferPointer, move: (id: UInt64, from: IndexEntry)?)?
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
    /// - parameter baseSequence: the sequence number the frames' are written against (near them is smaller).
    init(
        number: UInt32, directory: String, io: SystemIO, expectedSize: UInt64 = 0, baseSequence: UInt64,
        recompression: Recompression? = nil, encryption: StoreEncryption? = nil
    ) throws(SystemError) {
        self.number = number
        self.encryption = encryption
        self.encoder = CompactFrameEncoder(compressionMinimumSize: 0, sealed: encryption != nil)
        self.recompression = recompression
        self.work = recompression == nil ? nil : Compression.WorkStream()
        self.baseSequence = baseSequence
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
            flags: LogFormat.compactedSegmentFlag | (encryption == nil ? 0 : LogFormat.encryptedSegmentFlag),
            baseSequence: baseSequence
        ).encoded()
        let start = buffer.reserve(header.count)
        header.withUnsafeBytes { if let base = $0.baseAddress { start.copyMemory(from: base, byteCount: $0.count) } }
        buffer.commit(header.count)
        written = 0
        encodedSize = UInt64(header.count)
        batchStart = buffer.count
    }

    deinit {
        filler?.stop()
        io.close(fd)
    }

    /// Appends a copy of `frame` (from `bytes`, a segment of either version, mapped until the output is
    /// finished); `move` names the live record it is, nil for a tombstone or root frame.
    func append(_ frame: DecodedFrame, from bytes: UnsafeRawBufferPointer, move: (id: UInt64, from: IndexEntry)?)
        throws(SystemError)
    {
        if let held {
            let endsBatch =
                held.frame.sequence != frame.sequence
                || buffer.count - batchStart + held.frame.length + frame.length > Self.batchLimit
            try encode(held, endsBatch: endsBatch)
        }
        held = (frame, bytes, move)
        minSequence = min(minSequence, frame.sequence)
        maxSequence = max(maxSequence, frame.sequence)
    }

    /// Encodes a held copy: references as stored, the payload as stored or recompressed (``Recompression``),
    /// the flags it had.
    private func encode(
        _ copy: (frame: DecodedFrame, bytes: UnsafeRawBufferPointer, move: (id: UInt64, from: IndexEntry)?),
        endsBatch: Bool
    ) throws(SystemError) {
        let frame = copy.frame
        guard let source = copy.bytes.baseAddress else { return }
        let offset = encodedSize
        let referenceBytes = UnsafeRawBufferPointer(
            start: source + frame.referencesOffset, count: frame.referencesLength)
        let stored = UnsafeRawBufferPointer(start: source + frame.payloadOffset, count: frame.storedLength)
        let references: CompactFrameEncoder.References =
            frame.format.isCompact
            ? .encoded(referenceBytes, count: frame.referenceCount) : .fixed64(referenceBytes)
        let payload: CompactFrameEncoder.Payload =
            frame.flags.contains(.compressed)
            ? .compressed(stored, originalLength: frame.originalLength, dictionary: frame.dictionary) : .raw(stored)
        var encoder = self.encoder
        var recompressed: [UInt8]?
        if let recompression, let work, recompression.applies(to: frame),
            case .success(let original) = FrameDecoder.payload(
                of: frame, in: copy.bytes, dictionaries: recompression.dictionaries)
        {
            encoder.compressionMinimumSize = recompression.compressionMinimumSize
            encoder.dictionary = (recompression.newest, work)
            recompressed = original
        }
        let length = recompressed.withUnsafeBytesIfPresent { original in
            encoder.append(
                kind: frame.kind, flags: frame.flags, sequence: frame.sequence, baseSequence: baseSequence,
                id: frame.id, typeTag: frame.typeTag, references: references,
                payload: original.map { .raw($0) } ?? payload,
                batchStart: endsBatch ? batchStart : nil, to: buffer)
        }
        encodedSize += UInt64(length)
        if let move = copy.move {
            let entry = IndexEntry(
                segment: number, offset: UInt32(offset), length: UInt32(length), typeTag: move.from.typeTag)
            moves.append((move.id, move.from, entry))
        } else {
            retainedBytes += UInt64(length)
            controlFrames += 1
        }
        if endsBatch {
            if buffer.count >= Self.chunkSize { try flushBuffer() }
            batchStart = buffer.count
        }
    }

    /// Encodes the held copy as the end of its batch.
    private func endBatch() throws(SystemError) {
        guard let last = held else { return }
        held = nil
        try encode(last, endsBatch: true)
    }

    /// Makes room for `count` moves at once (a growing array touches fresh memory at every doubling).
    func reserveMoves(_ count: Int) { moves.reserveCapacity(count) }

    /// Appends a `reserveIDs` frame, so the id reservation survives the segments it came from.
    func appendReservation(through id: UInt64, sequence: UInt64) throws(SystemError) {
        try endBatch()
        let length = encoder.append(
            kind: .reserveIDs, flags: [], sequence: sequence, baseSequence: baseSequence, id: id, typeTag: 0,
            references: .ids([]), payload: .raw(UnsafeRawBufferPointer(start: nil, count: 0)),
            batchStart: batchStart, to: buffer)
        batchStart = buffer.count
        encodedSize += UInt64(length)
        retainedBytes += UInt64(length)
        minSequence = min(minSequence, sequence)
        maxSequence = max(maxSequence, sequence)
    }

    private func flushBuffer() throws(SystemError) {
        filler?.claim(through: written + UInt64(buffer.count))  // before the write, as the filler asks
        if let encryption {
            // The header (in the first chunk) as it is, the batches sealed.
            let header = written == 0 ? LogFormat.segmentHeaderSize : 0
            let batches = UnsafeRawBufferPointer(rebasing: buffer.bytes[header...])
            guard
                let sealed = BatchSealing.seal(
                    batches, at: Int(written) + header, segment: number, baseSequence: baseSequence,
                    encryption: encryption)
            else { throw SystemError(call: "encrypt", errno: EIO, path: temporaryPath) }
            if header > 0 {
                try io.writeAll(
                    fd, UnsafeRawBufferPointer(rebasing: buffer.bytes[..<header]), at: 0, path: temporaryPath)
            }
            let done = sealed.withUnsafeBytes { bytes in
                Result { () throws(SystemError) in
                    try io.writeAll(fd, bytes, at: written + UInt64(header), path: temporaryPath)
                }
            }
            try done.get()
        } else {
            try io.writeAll(fd, buffer.bytes, at: written, path: temporaryPath)
        }
        // The disk writes this while the next chunk is gathered, so the sync in `finish` waits less.
        io.startWriteback(fd, offset: written, length: buffer.count)
        written += UInt64(buffer.count)
        buffer.removeAll()
    }

    /// Writes what is buffered, syncs, renames into place, syncs the directory, and maps the segment.
    func finish(directory: String) throws(SystemError) -> SegmentFile {
        try endBatch()
        let sealLength = encoder.append(
            kind: .seal, flags: [], sequence: maxSequence, baseSequence: baseSequence, id: encodedSize, typeTag: 0,
            references: .ids([]), payload: .raw(UnsafeRawBufferPointer(start: nil, count: 0)),
            batchStart: batchStart, to: buffer)
        encodedSize += UInt64(sealLength)
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
            number: number, path: path, writable: false, capacity: Int(size), populate: encryption == nil,
            encryption: encryption, io: io)
    }

    /// Removes the unfinished temporary file after a failure.
    func abandon() {
        filler?.stop()
        filler = nil
        try? io.unlink(temporaryPath)
    }
}

extension Optional where Wrapped == [UInt8] {
    /// Calls `body` with the array's bytes, or with nil.
    fileprivate func withUnsafeBytesIfPresent<Result>(_ body: (UnsafeRawBufferPointer?) -> Result) -> Result {
        switch self {
        case .some(let bytes): return bytes.withUnsafeBytes { body($0) }
        case .none: return body(nil)
        }
    }
}
