/// Appends frames to a ``WriteBuffer`` in the on-disk format of `Documentation/Format.md`.
package struct FrameEncoder {
    /// Compress payloads at least this long; 0 turns compression off.
    package var compressionMinimumSize: Int

    package init(compressionMinimumSize: Int) { self.compressionMinimumSize = compressionMinimumSize }

    /// Appends one frame and returns its total size in bytes.
    ///
    /// The caller has validated the limits (payload size, reference count).
    @discardableResult
    package func append(
        kind: FrameKind,
        flags: FrameFlags,
        sequence: UInt64,
        id: UInt64,
        typeTag: UInt32,
        references: [ObjectID],
        payload: UnsafeRawBufferPointer,
        to buffer: WriteBuffer
    ) -> Int {
        let referenceBytes = references.count * LogFormat.referenceSize
        let wantsCompression = compressionMinimumSize > 0 && payload.count >= compressionMinimumSize
        let payloadRoom = wantsCompression ? max(payload.count, Compression.bound(payload.count)) : payload.count
        let room = LogFormat.frameHeaderSize + referenceBytes + payloadRoom + LogFormat.frameChecksumSize
        let start = buffer.reserve(room)

        var cursor = LogFormat.frameHeaderSize
        for reference in references {
            start.writeLE(reference.rawValue, at: cursor)
            cursor += LogFormat.referenceSize
        }
        var frameFlags = flags
        frameFlags.remove(.compressed)
        let stored = Compression.store(
            payload, method: wantsCompression ? .plain : .none, into: start + cursor, capacity: payloadRoom)
        let storedLength = stored.length
        if stored.compressed { frameFlags.insert(.compressed) }
        cursor += storedLength

        start.storeBytes(of: kind.rawValue, toByteOffset: 0, as: UInt8.self)
        start.storeBytes(of: frameFlags.rawValue, toByteOffset: 1, as: UInt8.self)
        start.writeLE(LogFormat.noDictionary, at: 2)
        start.writeLE(UInt32(references.count), at: 4)
        start.writeLE(sequence, at: 8)
        start.writeLE(id, at: 16)
        start.writeLE(typeTag, at: 24)
        start.writeLE(UInt32(storedLength), at: 28)
        start.writeLE(UInt32(payload.count), at: 32)
        let checksum = Checksum.xxh3(UnsafeRawPointer(start), count: cursor)
        start.writeLE(checksum, at: cursor)
        cursor += LogFormat.frameChecksumSize
        buffer.commit(cursor)
        return cursor
    }

    /// Sets the commit flag of the frame at `frameStart` of `buffer` and recomputes its checksum: the
    /// last frame of a batch (the commit pipeline) and a frame copied as a batch of its own (compaction).
    /// Does nothing when the range is not a frame's worth of bytes inside the buffer.
    package static func markCommit(in buffer: WriteBuffer, frameStart: Int, length: Int) {
        guard length >= LogFormat.minimumFrameSize, frameStart + length <= buffer.count else { return }
        let start = buffer.base + frameStart
        let flags = start.load(fromByteOffset: 1, as: UInt8.self) | FrameFlags.commit.rawValue
        start.storeBytes(of: flags, toByteOffset: 1, as: UInt8.self)
        let checked = length - LogFormat.frameChecksumSize
        start.writeLE(Checksum.xxh3(UnsafeRawPointer(start), count: checked), at: checked)
    }
}
