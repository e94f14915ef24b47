@_spi(Engine) import LogStoreFormat
@_spi(Engine) import LogStoreSystem

/// Reads the record an index entry points at, checking its frame: the one path of ``Store``'s reads
/// and of a ``Snapshot``'s.
enum RecordReader {
    /// Decodes and checks the frame `entry` points at: a put of `id`, of the indexed length, whose checksum
    /// matches.
    /// - throws: ``LogStoreError`` `corruptFrame` naming file and offset.
    static func frame(_ id: ObjectID, _ entry: IndexEntry, in file: SegmentFile) throws(LogStoreError) -> DecodedFrame {
        let bytes = file.bytes(count: Int(entry.offset) + Int(entry.length))
        switch FrameDecoder.decode(bytes, at: Int(entry.offset), format: file.format) {
        case .success(let frame) where frame.kind == .put && frame.id == id.rawValue && frame.length == entry.length:
            return frame
        case .success(let frame):
            throw LogStoreError(
                .corruptFrame, "index points at a \(frame.kind) frame of object \(frame.id), expected object \(id)",
                file: file.path, offset: UInt64(entry.offset))
        case .failure(let problem):
            throw LogStoreError(
                .corruptFrame, "object \(id): \(problem.reason)", file: file.path, offset: UInt64(entry.offset))
        }
    }

    /// The record and the sequence number of the batch that wrote it.
    static func record(
        _ id: ObjectID, _ entry: IndexEntry, in file: SegmentFile, dictionaries: CompressionDictionaries
    ) throws(LogStoreError) -> (record: Record, version: UInt64) {
        let frame = try frame(id, entry, in: file)
        let bytes = file.bytes(count: Int(entry.offset) + Int(entry.length))
        let payload = try payload(of: frame, id, entry, in: file, bytes: bytes, dictionaries: dictionaries)
        let record = Record(
            id: id, typeTag: frame.typeTag, references: FrameDecoder.references(of: frame, in: bytes),
            payload: payload, isPinned: frame.flags.contains(.pinned))
        return (record, frame.sequence)
    }

    /// ``record(_:_:in:dictionaries:)`` with the payload written into `payload` (its storage reused when
    /// nothing else holds it) and given back in the record.
    static func record(
        _ id: ObjectID, _ entry: IndexEntry, in file: SegmentFile, dictionaries: CompressionDictionaries,
        payloadBuffer payload: inout [UInt8]
    ) throws(LogStoreError) -> (record: Record, version: UInt64) {
        let frame = try frame(id, entry, in: file)
        let bytes = file.bytes(count: Int(entry.offset) + Int(entry.length))
        if let problem = FrameDecoder.payload(of: frame, in: bytes, dictionaries: dictionaries, into: &payload) {
            throw payloadError(problem, id, entry, in: file)
        }
        let record = Record(
            id: id, typeTag: frame.typeTag, references: FrameDecoder.references(of: frame, in: bytes),
            payload: payload, isPinned: frame.flags.contains(.pinned))
        return (record, frame.sequence)
    }

    /// Calls `body` with the stored payload bytes, without a copy when they are stored uncompressed.
    static func withPayload<Result>(
        of id: ObjectID, _ entry: IndexEntry, in file: SegmentFile, dictionaries: CompressionDictionaries,
        _ body: (_ typeTag: UInt32, UnsafeRawBufferPointer) throws -> Result
    ) throws -> Result {
        let frame = try frame(id, entry, in: file)
        let bytes = file.bytes(count: Int(entry.offset) + Int(entry.length))
        if frame.flags.contains(.compressed) {
            let payload = try payload(of: frame, id, entry, in: file, bytes: bytes, dictionaries: dictionaries)
            return try payload.withUnsafeBytes { try body(frame.typeTag, $0) }
        }
        let start = bytes.baseAddress.map { $0 + frame.payloadOffset }
        return try body(frame.typeTag, UnsafeRawBufferPointer(start: start, count: frame.storedLength))
    }

    /// The error for a payload of `id`'s frame that cannot be read, naming file and offset.
    private static func payloadError(
        _ problem: FrameDecoder.PayloadProblem, _ id: ObjectID, _ entry: IndexEntry, in file: SegmentFile
    ) -> LogStoreError {
        let code: LogStoreError.Code = problem == .malformed ? .corruptFrame : .missingDictionary
        return LogStoreError(code, "object \(id): \(problem.reason)", file: file.path, offset: UInt64(entry.offset))
    }

    /// The payload of a checked frame, decompressed.
    /// - throws: ``LogStoreError`` `corruptFrame` when it does not decompress, `missingDictionary` when it
    ///   names a dictionary the store does not have; both naming file and offset.
    private static func payload(
        of frame: DecodedFrame, _ id: ObjectID, _ entry: IndexEntry, in file: SegmentFile,
        bytes: UnsafeRawBufferPointer, dictionaries: CompressionDictionaries
    ) throws(LogStoreError) -> [UInt8] {
        switch FrameDecoder.payload(of: frame, in: bytes, dictionaries: dictionaries) {
        case .success(let payload): return payload
        case .failure(let problem): throw payloadError(problem, id, entry, in: file)
        }
    }

    /// The type tag and references of the record, without its payload.
    static func header(of id: ObjectID, _ entry: IndexEntry, in file: SegmentFile) throws(LogStoreError) -> (
        typeTag: UInt32, references: [ObjectID]
    ) {
        let frame = try frame(id, entry, in: file)
        let bytes = file.bytes(count: Int(entry.offset) + Int(entry.length))
        return (frame.typeTag, FrameDecoder.references(of: frame, in: bytes))
    }

    /// The sequence number of the batch that wrote the frame `entry` points at (its version), read without
    /// checking the frame's checksum; nil when the bytes there are not a frame.
    static func sequence(of entry: IndexEntry, in file: SegmentFile) -> UInt64? {
        guard Int(entry.offset) + Int(entry.length) <= file.mappedLength else { return nil }
        let bytes = file.bytes(count: Int(entry.offset) + Int(entry.length))
        guard
            case .success(let frame) = FrameDecoder.decode(
                bytes, at: Int(entry.offset), format: file.format, verifyChecksum: false)
        else { return nil }
        return frame.sequence
    }

    /// The ids of the live objects of a durable view, in increasing order; only those of `typeTag` when it
    /// is given.
    static func ids(
        typeTag: UInt32?, typeCounts: [UInt32: Int], liveCount: Int,
        forEach: ((UInt64, IndexEntry) -> Void) -> Void
    ) -> [ObjectID] {
        var result: [ObjectID] = []
        result.reserveCapacity(typeTag.map { typeCounts[$0] ?? 0 } ?? liveCount)
        forEach { id, entry in
            if typeTag == nil || entry.typeTag == typeTag { result.append(ObjectID(id)) }
        }
        return result
    }
}
