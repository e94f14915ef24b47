/// The frame layout of format version 2 (`Documentation/Format.md`, section 11):
///
/// ```
/// frame     := head id type_tag reference_count stored_length [dictionary extra_length]
///              reference* payload [sequence batch_checksum] crc
/// head      := u8: bits 0–2 kind, bit 3 compressed, bit 4 commit, bit 5 pinned, bit 6 collected, bit 7 zero
/// id, type_tag, reference_count, stored_length, dictionary, sequence := varint
/// extra_length := varint original_length − stored_length (compressed frames only, ≥ 1)
/// reference := varint zigzag(reference − previous); previous is the frame's id for the first
/// batch_checksum := u64 XXH3-64 of the batch's bytes, from its first frame's head to this field
/// crc       := u32 CRC-32C of the frame's bytes before it
/// ```
/// `dictionary` and `extra_length` are present when the compressed bit is set; `sequence` and
/// `batch_checksum` when the commit bit is set. Integers in fixed width are little-endian.
package enum CompactFrame {
    /// Bits of the head byte that hold the kind.
    package static let kindMask: UInt8 = 0x07
    /// The flags sit above the kind: head = kind | flags << 3.
    package static let flagsShift: UInt8 = 3
    /// Size of the trailing CRC-32C.
    package static let crcSize = 4
    /// The smallest frame: the head, four one-byte varints and the CRC.
    package static let minimumSize = 1 + 4 + crcSize
    /// Size of a commit frame's batch checksum.
    package static let batchChecksumSize = 8
    /// The most bytes of a frame before its references: the head and six varints.
    package static let maximumHeaderSize = 1 + 6 * VarInt.maximumSize
    /// The most bytes a commit frame adds: its sequence number and the batch checksum.
    package static let maximumCommitSize = VarInt.maximumSize + batchChecksumSize

    /// The head byte of a frame of `kind` with `flags`.
    package static func head(_ kind: FrameKind, _ flags: FrameFlags) -> UInt8 {
        kind.rawValue | flags.rawValue << flagsShift
    }

    /// An upper bound of the size of a frame with `referenceCount` references and `payloadRoom` bytes of
    /// stored payload, a commit frame included.
    package static func bound(referenceCount: Int, payloadRoom: Int) -> Int {
        maximumHeaderSize + referenceCount * VarInt.maximumSize + payloadRoom + maximumCommitSize + crcSize
    }
}

/// Appends frames to a ``WriteBuffer`` in the layout of format version 2. The one encoder of that layout:
/// the commit pipeline encodes new batches with it and compaction copies frames with it.
package struct CompactFrameEncoder {
    /// Compress raw payloads at least this long; 0 turns compression off.
    package var compressionMinimumSize: Int

    package init(compressionMinimumSize: Int) { self.compressionMinimumSize = compressionMinimumSize }

    /// Where a frame's references come from.
    package enum References {
        /// Object ids, encoded as deltas.
        case ids([ObjectID])
        /// A version-2 reference list copied as it is, of a frame with the same id.
        case encoded(UnsafeRawBufferPointer, count: Int)
        /// A version-1 reference list: `8 × count` bytes of little-endian `u64`s.
        case fixed64(UnsafeRawBufferPointer)
    }

    /// A frame's payload.
    package enum Payload {
        /// Bytes as the application gave them, compressed when long enough and smaller.
        case raw(UnsafeRawBufferPointer)
        /// A compressed payload copied as it is: `originalLength` bytes once decompressed with `dictionary`.
        case compressed(UnsafeRawBufferPointer, originalLength: Int, dictionary: UInt32)
    }

    /// The end of a batch: the frame being appended is its commit frame.
    package struct BatchEnd {
        /// The batch's sequence number.
        package var sequence: UInt64
        /// Where the batch's first frame starts in the buffer the frame is appended to.
        package var batchStart: Int

        package init(sequence: UInt64, batchStart: Int) {
            self.sequence = sequence
            self.batchStart = batchStart
        }
    }

    /// Appends one frame and returns its size in bytes. `flags` other than `pinned` and `collected` are
    /// set by the encoder (compressed from the payload, commit from `commit`).
    ///
    /// The caller has checked the limits (payload size, reference count, id and sequence ranges).
    @discardableResult
    package func append(
        kind: FrameKind, flags: FrameFlags, id: UInt64, typeTag: UInt32, references: References,
        payload: Payload, commit: BatchEnd?, to buffer: WriteBuffer
    ) -> Int {
        let referenceCount: Int
        switch references {
        case .ids(let ids): referenceCount = ids.count
        case .encoded(_, let count): referenceCount = count
        case .fixed64(let bytes): referenceCount = bytes.count / LogFormat.referenceSize
        }
        var payloadRoom: Int
        var wantsCompression = false
        switch payload {
        case .raw(let bytes):
            wantsCompression = compressionMinimumSize > 0 && bytes.count >= compressionMinimumSize
            payloadRoom = wantsCompression ? max(bytes.count, Compression.bound(bytes.count)) : bytes.count
        case .compressed(let bytes, _, _): payloadRoom = bytes.count
        }
        let start = buffer.reserve(CompactFrame.bound(referenceCount: referenceCount, payloadRoom: payloadRoom))

        // The fields before the references take their exact size but for a payload compressed here, whose
        // stored and extra lengths are first given the room of the original length (never smaller); when
        // they come out shorter, the references and payload move down to meet them.
        var dictionary: UInt32 = 0
        var originalLength: Int
        switch payload {
        case .raw(let bytes): originalLength = bytes.count
        case .compressed(_, let original, let name):
            originalLength = original
            dictionary = name
        }
        let fixedFieldsSize =
            1 + VarInt.size(of: id) + VarInt.size(of: UInt64(typeTag)) + VarInt.size(of: UInt64(referenceCount))
        var storedLength = payloadRoom
        var predictedSize: Int
        switch payload {
        case .raw(let bytes):
            predictedSize = fixedFieldsSize + VarInt.size(of: UInt64(bytes.count))
            if wantsCompression {
                // No dictionary (one byte) and room for the extra length.
                predictedSize += 1 + VarInt.size(of: UInt64(bytes.count))
            }
        case .compressed(let bytes, let original, _):
            storedLength = bytes.count
            predictedSize =
                fixedFieldsSize + VarInt.size(of: UInt64(bytes.count)) + VarInt.size(of: UInt64(dictionary))
                + VarInt.size(of: UInt64(original - bytes.count))
        }

        var cursor = predictedSize
        switch references {
        case .ids(let ids):
            var previous = id
            for reference in ids {
                cursor += VarInt.write(VarInt.delta(reference.rawValue, from: previous), to: start + cursor)
                previous = reference.rawValue
            }
        case .encoded(let bytes, _):
            if let source = bytes.baseAddress { (start + cursor).copyMemory(from: source, byteCount: bytes.count) }
            cursor += bytes.count
        case .fixed64(let bytes):
            var previous = id
            if let source = bytes.baseAddress {
                for index in 0..<referenceCount {
                    let reference = source.readLE(UInt64.self, at: index * LogFormat.referenceSize)
                    cursor += VarInt.write(VarInt.delta(reference, from: previous), to: start + cursor)
                    previous = reference
                }
            }
        }

        var frameFlags = flags.intersection([.pinned, .collected])
        switch payload {
        case .raw(let bytes):
            storedLength = bytes.count
            if wantsCompression,
                let compressed = Compression.compress(bytes, into: start + cursor, capacity: payloadRoom)
            {
                storedLength = compressed
                frameFlags.insert(.compressed)
            } else if bytes.count > 0, let source = bytes.baseAddress {
                (start + cursor).copyMemory(from: source, byteCount: bytes.count)
            }
        case .compressed(let bytes, _, _):
            frameFlags.insert(.compressed)
            if let source = bytes.baseAddress { (start + cursor).copyMemory(from: source, byteCount: bytes.count) }
        }
        cursor += storedLength
        if commit != nil { frameFlags.insert(.commit) }

        let isCompressed = frameFlags.contains(.compressed)
        var headerSize = fixedFieldsSize + VarInt.size(of: UInt64(storedLength))
        if isCompressed {
            headerSize += VarInt.size(of: UInt64(dictionary)) + VarInt.size(of: UInt64(originalLength - storedLength))
        }
        if headerSize < predictedSize {
            (start + headerSize).copyMemory(from: start + predictedSize, byteCount: cursor - predictedSize)
            cursor -= predictedSize - headerSize
        }
        start.storeBytes(of: CompactFrame.head(kind, frameFlags), as: UInt8.self)
        var field = 1
        field += VarInt.write(id, to: start + field)
        field += VarInt.write(UInt64(typeTag), to: start + field)
        field += VarInt.write(UInt64(referenceCount), to: start + field)
        field += VarInt.write(UInt64(storedLength), to: start + field)
        if isCompressed {
            field += VarInt.write(UInt64(dictionary), to: start + field)
            field += VarInt.write(UInt64(originalLength - storedLength), to: start + field)
        }

        if let commit {
            cursor += VarInt.write(commit.sequence, to: start + cursor)
            let frameStart = buffer.count
            let batchBytes = frameStart - commit.batchStart + cursor
            let checksum = Checksum.xxh3(UnsafeRawPointer(buffer.base + commit.batchStart), count: batchBytes)
            start.writeLE(checksum, at: cursor)
            cursor += CompactFrame.batchChecksumSize
        }
        start.writeLE(Checksum.crc32c(UnsafeRawPointer(start), count: cursor), at: cursor)
        cursor += CompactFrame.crcSize
        buffer.commit(cursor)
        return cursor
    }
}
