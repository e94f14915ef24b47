/// The frame layout of format version 2 (`Documentation/Format.md`, section 11):
///
/// ```
/// frame     := head sequence_delta id type_tag reference_count stored_length [dictionary] [extra_length]
///              reference* payload [batch_checksum] crc
/// head      := u8: bits 0–2 kind, bit 3 compressed, bit 4 commit, bit 5 pinned, bit 6 collected,
///              bit 7 dictionary follows (compressed frames only)
/// sequence_delta := varint zigzag(sequence − the segment header's base sequence)
/// id, type_tag, reference_count, stored_length, dictionary := varint
/// extra_length := varint original_length − stored_length (compressed frames only, ≥ 1)
/// reference := varint zigzag(reference − previous); previous is the frame's id for the first
/// batch_checksum := u64 XXH3-64 of the batch's bytes, from its first frame's head to this field
/// crc       := u32 CRC-32C of the frame's bytes before it
/// ```
/// `batch_checksum` is present when the commit bit is set. Integers in fixed width are little-endian.
package enum CompactFrame {
    /// Bits of the head byte that hold the kind.
    package static let kindMask: UInt8 = 0x07
    /// The flags sit above the kind: head = kind | flags << 3.
    package static let flagsShift: UInt8 = 3
    /// Size of the trailing CRC-32C.
    package static let crcSize = 4
    /// The smallest frame: the head, five one-byte varints and the CRC.
    package static let minimumSize = 1 + 5 + crcSize
    /// Size of a commit frame's batch checksum.
    package static let batchChecksumSize = 8
    /// Head bit: a dictionary id follows the stored length (compressed frames only).
    package static let dictionaryBit: UInt8 = 0x80
    /// The most bytes of a frame before its references: the head and seven varints.
    package static let maximumHeaderSize = 1 + 7 * VarInt.maximumSize
    /// Room the length field of the sealed layout may take beyond the stored length's: it counts the
    /// references too (at most 655,360 bytes, 65,536 of ten bytes each), which adds at most three bytes.
    package static let bodyLengthRoom = 3
    /// Sealed layout: the batch's nonce and tag that follow a commit frame's batch checksum.
    package static let nonceSize = 12
    package static let tagSize = 16
    package static let sealSize = nonceSize + tagSize
    /// The most bytes a commit frame adds: the batch checksum, and in the sealed layout the nonce and tag.
    package static let maximumCommitSize = batchChecksumSize + sealSize

    /// The head byte of a frame of `kind` with `flags`.
    package static func head(_ kind: FrameKind, _ flags: FrameFlags) -> UInt8 {
        kind.rawValue | flags.rawValue << flagsShift
    }

    /// An upper bound of the size of a frame with `referenceCount` references and `payloadRoom` bytes of
    /// stored payload, a commit frame included.
    package static func bound(referenceCount: Int, payloadRoom: Int) -> Int {
        maximumHeaderSize + bodyLengthRoom + referenceCount * VarInt.maximumSize + payloadRoom + maximumCommitSize
            + crcSize
    }
}

/// Appends frames to a ``WriteBuffer`` in the layout of format version 2. The one encoder of that layout:
/// the commit pipeline encodes new batches with it and compaction copies frames with it.
package struct CompactFrameEncoder {
    /// Compress raw payloads at least this long; 0 turns compression off.
    package var compressionMinimumSize: Int
    /// The shared dictionary raw put payloads are compressed against (whatever their length, from
    /// ``dictionaryMinimumSize`` on), and the working stream to do it with; nil: none.
    package var dictionary: (dictionary: CompressionDictionary, work: Compression.WorkStream)?
    /// Shorter payloads are not worth compressing even against a dictionary.
    package static let dictionaryMinimumSize = 16

    /// Whether frames are written in the sealed layout of an encrypted segment (the length field counts
    /// the references and the stored payload; room for the batch's nonce and tag in a commit frame, left
    /// zero: ``BatchSealing`` fills it in the bytes it writes).
    package var sealed: Bool

    package init(compressionMinimumSize: Int, sealed: Bool = false) {
        self.compressionMinimumSize = compressionMinimumSize
        self.sealed = sealed
    }

    /// How a raw payload of `count` bytes of a `kind` frame is compressed: against the dictionary (puts
    /// only, so control frames read without dictionaries), or alone from the minimum size, or not.
    private func method(_ kind: FrameKind, _ count: Int) -> Compression.Method {
        guard compressionMinimumSize > 0 else { return .none }
        if let dictionary, Self.compressesAgainstDictionary(kind, count, compressionMinimumSize: compressionMinimumSize)
        {
            return .dictionary(dictionary.dictionary, dictionary.work)
        }
        return count >= compressionMinimumSize ? .plain : .none
    }

    /// Whether a frame of `kind` with a `count`-byte payload is compressed against the dictionary, when
    /// the encoder has one (compression on: `compressionMinimumSize > 0`).
    package static func compressesAgainstDictionary(_ kind: FrameKind, _ count: Int, compressionMinimumSize: Int)
        -> Bool
    {
        compressionMinimumSize > 0 && kind == .put && count >= dictionaryMinimumSize
    }

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
        /// Bytes stored as they are, never compressed (found incompressible before).
        case stored(UnsafeRawBufferPointer)
    }

    /// Appends one frame and returns its size in bytes. `flags` other than `pinned` and `collected` are
    /// set by the encoder (compressed from the payload, commit from `batchStart`).
    ///
    /// The caller has checked the limits (payload size, reference count, id and sequence ranges).
    /// - parameter baseSequence: the base sequence number of the segment the frame is for (its header's).
    /// - parameter batchStart: for the last frame of a batch, where the batch's first frame starts in
    ///   `buffer` (the frame then gets the commit flag and the batch checksum); nil for the others.
    @discardableResult
    package func append(
        kind: FrameKind, flags: FrameFlags, sequence: UInt64, baseSequence: UInt64, id: UInt64, typeTag: UInt32,
        references: References, payload: Payload, batchStart: Int?, to buffer: WriteBuffer
    ) -> Int {
        let referenceCount: Int
        switch references {
        case .ids(let ids): referenceCount = ids.count
        case .encoded(_, let count): referenceCount = count
        case .fixed64(let bytes): referenceCount = bytes.count / LogFormat.referenceSize
        }
        var payloadRoom: Int
        var wantsCompression = false
        var compression = Compression.Method.none
        switch payload {
        case .raw(let bytes):
            compression = method(kind, bytes.count)
            if case .none = compression {} else { wantsCompression = true }
            payloadRoom = wantsCompression ? max(bytes.count, Compression.bound(bytes.count)) : bytes.count
        case .compressed(let bytes, _, _), .stored(let bytes): payloadRoom = bytes.count
        }
        let start = buffer.reserve(CompactFrame.bound(referenceCount: referenceCount, payloadRoom: payloadRoom))

        // The fields before the references take their exact size but for a payload compressed here, whose
        // stored and extra lengths are first given the room of the original length (never smaller); when
        // they come out shorter, the references and payload move down to meet them.
        var dictionary: UInt32 = 0
        var originalLength: Int
        switch payload {
        case .raw(let bytes), .stored(let bytes): originalLength = bytes.count
        case .compressed(_, let original, let name):
            originalLength = original
            dictionary = name
        }
        let sequenceDelta = VarInt.delta(sequence, from: baseSequence)
        let fixedFieldsSize =
            1 + VarInt.size(of: sequenceDelta) + VarInt.size(of: id) + VarInt.size(of: UInt64(typeTag))
            + VarInt.size(of: UInt64(referenceCount))
        var storedLength = payloadRoom
        var predictedSize: Int
        switch payload {
        case .raw(let bytes), .stored(let bytes):
            predictedSize = fixedFieldsSize + VarInt.size(of: UInt64(bytes.count))
            if sealed { predictedSize += CompactFrame.bodyLengthRoom }
            if wantsCompression {
                // Room for the extra length, and the dictionary id.
                predictedSize += VarInt.size(of: UInt64(bytes.count))
                if case .dictionary(let shared, _) = compression { predictedSize += VarInt.size(of: UInt64(shared.id)) }
            }
        case .compressed(let bytes, let original, _):
            storedLength = bytes.count
            predictedSize =
                fixedFieldsSize + VarInt.size(of: UInt64(bytes.count)) + VarInt.size(of: UInt64(original - bytes.count))
            if dictionary != 0 { predictedSize += VarInt.size(of: UInt64(dictionary)) }
            if sealed { predictedSize += CompactFrame.bodyLengthRoom }
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

        let referencesLength = cursor - predictedSize
        var frameFlags = flags.intersection([.pinned, .collected])
        switch payload {
        case .raw(let bytes), .stored(let bytes):
            let stored = Compression.store(bytes, method: compression, into: start + cursor, capacity: payloadRoom)
            storedLength = stored.length
            dictionary = stored.dictionary
            if stored.compressed { frameFlags.insert(.compressed) }
        case .compressed(let bytes, _, _):
            frameFlags.insert(.compressed)
            if let source = bytes.baseAddress { (start + cursor).copyMemory(from: source, byteCount: bytes.count) }
        }
        cursor += storedLength
        if batchStart != nil { frameFlags.insert(.commit) }

        let isCompressed = frameFlags.contains(.compressed)
        let hasDictionary = isCompressed && dictionary != 0
        // The length field: the stored payload's, or in the sealed layout the whole body's.
        let lengthField = UInt64(storedLength + (sealed ? referencesLength : 0))
        var headerSize = fixedFieldsSize + VarInt.size(of: lengthField)
        if isCompressed { headerSize += VarInt.size(of: UInt64(originalLength - storedLength)) }
        if hasDictionary { headerSize += VarInt.size(of: UInt64(dictionary)) }
        if headerSize < predictedSize {
            (start + headerSize).copyMemory(from: start + predictedSize, byteCount: cursor - predictedSize)
            cursor -= predictedSize - headerSize
        }
        let head = CompactFrame.head(kind, frameFlags) | (hasDictionary ? CompactFrame.dictionaryBit : 0)
        start.storeBytes(of: head, as: UInt8.self)
        var field = 1
        field += VarInt.write(sequenceDelta, to: start + field)
        field += VarInt.write(id, to: start + field)
        field += VarInt.write(UInt64(typeTag), to: start + field)
        field += VarInt.write(UInt64(referenceCount), to: start + field)
        field += VarInt.write(lengthField, to: start + field)
        if hasDictionary { field += VarInt.write(UInt64(dictionary), to: start + field) }
        if isCompressed { field += VarInt.write(UInt64(originalLength - storedLength), to: start + field) }

        if let batchStart {
            let batchBytes = buffer.count - batchStart + cursor
            let checksum = Checksum.xxh3(UnsafeRawPointer(buffer.base + batchStart), count: batchBytes)
            start.writeLE(checksum, at: cursor)
            cursor += CompactFrame.batchChecksumSize
            if sealed {
                (start + cursor).initializeMemory(as: UInt8.self, repeating: 0, count: CompactFrame.sealSize)
                cursor += CompactFrame.sealSize
            }
        }
        start.writeLE(Checksum.crc32c(UnsafeRawPointer(start), count: cursor), at: cursor)
        cursor += CompactFrame.crcSize
        buffer.commit(cursor)
        return cursor
    }
}
