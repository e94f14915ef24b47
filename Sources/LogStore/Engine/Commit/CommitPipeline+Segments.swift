@_spi(Engine) import LogStoreFormat
@_spi(Engine) import LogStoreSystem

/// The segments the pipeline writes: it creates them (header, file and directory synced), and seals
/// each full one with its seal frame before the next is written.
extension CommitPipeline {
    /// Ends a full segment with its seal frame and syncs it: it is never written again.
    func seal(_ file: SegmentFile, at size: UInt64, sequence: UInt64) throws(LogStoreError) {
        let buffer = WriteBuffer(capacity: 64)
        let empty = UnsafeRawBufferPointer(start: nil, count: 0)
        switch file.format {
        case .v1:
            // A version-1 segment (of a store written by an older version) ends in a version-1 seal.
            FrameEncoder(compressionMinimumSize: 0).append(
                kind: .seal, flags: .commit, sequence: sequence, id: size, typeTag: 0, references: [],
                payload: empty, to: buffer)
        case .v2(let base, let sealed):
            CompactFrameEncoder(compressionMinimumSize: 0, sealed: sealed).append(
                kind: .seal, flags: [], sequence: sequence, baseSequence: base, id: size, typeTag: 0,
                references: .ids([]), payload: .raw(empty), batchStart: 0, to: buffer)
        }
        // A segment extended ahead of its writes is cut back to its frames before the sync makes it final.
        let extended = prefill.end(of: file)
        try file.writeFrames(buffer.bytes, at: size, io: io)
        try ioStep(file.path, size) { () throws(SystemError) in
            if extended { try io.truncate(file.fd, to: size + UInt64(buffer.count), path: file.path) }
            try io.syncData(file.fd, path: file.path)
        }
        index.withLock { state in
            state.segments.recordSeal(file.number, bytes: UInt64(buffer.count), size: size + UInt64(buffer.count))
        }
    }

    func ioStep(_ path: String, _ offset: UInt64, _ body: () throws(SystemError) -> Void) throws(LogStoreError) {
        do {
            try body()
        } catch {
            throw LogStoreError(.ioError, "write failed", file: path, offset: offset, underlying: error)
        }
    }

    /// Creates segment `number` with its header (frames' sequence numbers written against
    /// `baseSequence`), durably (file and directory synced), and maps it.
    func createSegment(_ number: UInt32, capacity: Int, baseSequence: UInt64) throws(LogStoreError) -> SegmentFile {
        let path = directory + "/" + LogFormat.segmentFileName(number)
        let header = SegmentHeader(
            segmentNumber: number, createdAtMilliseconds: SystemClock.milliseconds(),
            flags: options.encryption == nil ? 0 : LogFormat.encryptedSegmentFlag, baseSequence: baseSequence
        ).encoded()
        do {
            try io.writeNewFile(path, header)
            try io.syncDirectory(directory)
            return try SegmentFile.open(
                number: number, path: path, writable: true, capacity: capacity, encryption: options.encryption, io: io)
        } catch {
            throw LogStoreError(.ioError, "cannot create segment", file: path, underlying: error)
        }
    }
}
