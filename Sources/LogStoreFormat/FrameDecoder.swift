/// The frame layout of a segment: its header's format version, and in version 2 the base its frames'
/// sequence numbers are written against.
package enum FrameFormat: Sendable, Equatable {
    /// Version 1: fixed 36-byte headers, 8-byte references, XXH3-64 per frame (Format.md, section 4).
    case v1
    /// Version 2: variable-length integers, sequence numbers as deltas from `baseSequence` (the segment
    /// header's), reference deltas, CRC-32C per frame and XXH3-64 per batch (Format.md, section 11).
    /// `sealed`: the layout of an encrypted segment, whose frames say how long their reference lists are
    /// and whose commit frames carry the batch's nonce and tag (Format.md, section 13).
    case v2(baseSequence: UInt64, sealed: Bool = false)

    /// Whether this is the layout of version 2.
    package var isCompact: Bool {
        if case .v2 = self { return true }
        return false
    }

    /// The layout of a segment's frames, from its header (`segment` starts with it); version 1 when the
    /// header is too short to tell (the caller has checked it).
    package init(segment: UnsafeRawBufferPointer) {
        guard segment.count >= LogFormat.segmentHeaderSize, let base = segment.baseAddress else {
            self = .v1
            return
        }
        guard base.readLE(UInt16.self, at: 8) >= 2 else {
            self = .v1
            return
        }
        let sealed = base.readLE(UInt32.self, at: 12) & LogFormat.encryptedSegmentFlag != 0
        self = .v2(baseSequence: base.readLE(UInt64.self, at: 32), sealed: sealed)
    }

    /// Whether this is the layout of an encrypted segment.
    package var isSealed: Bool {
        if case .v2(_, let sealed) = self { return sealed }
        return false
    }
}

/// A frame found in a segment, decoded without copying: offsets point into the segment's bytes.
package struct DecodedFrame {
    package var kind: FrameKind
    package var flags: FrameFlags
    /// The sequence number of the batch that wrote the frame.
    package var sequence: UInt64
    package var id: UInt64
    package var typeTag: UInt32
    package var referenceCount: Int
    package var storedLength: Int
    package var originalLength: Int
    /// Offset of the frame in the segment.
    package var offset: Int
    /// Total size of the frame, checksum included.
    package var length: Int
    /// The layout the frame was decoded from.
    package var format: FrameFormat = .v1
    /// The compression dictionary of a compressed payload (0: none).
    package var dictionary: UInt32 = 0
    /// Where the reference list starts in the segment.
    package var referencesOffset: Int
    /// The reference list's size in bytes (`8 × referenceCount` in version 1; varints in version 2).
    package var referencesLength: Int
    /// Where the stored payload starts in the segment.
    package var payloadOffset: Int
    /// Version 2, commit frames: where the batch checksum is stored (the batch's bytes end there).
    package var batchChecksumOffset: Int?

    package init(
        kind: FrameKind, flags: FrameFlags, sequence: UInt64, id: UInt64, typeTag: UInt32, referenceCount: Int,
        storedLength: Int, originalLength: Int, offset: Int, length: Int
    ) {
        self.kind = kind
        self.flags = flags
        self.sequence = sequence
        self.id = id
        self.typeTag = typeTag
        self.referenceCount = referenceCount
        self.storedLength = storedLength
        self.originalLength = originalLength
        self.offset = offset
        self.length = length
        self.referencesOffset = offset + LogFormat.frameHeaderSize
        self.referencesLength = referenceCount * LogFormat.referenceSize
        self.payloadOffset = referencesOffset + referencesLength
    }
}

/// Why bytes at some offset are not a valid frame.
package enum FrameProblem: Error, Equatable, Sendable {
    /// The frame would run past the end of the available bytes (a torn write, when at the tail).
    case truncated(needed: Int, available: Int)
    /// A field holds an impossible value.
    case invalidField(String)
    /// The stored checksum does not match the bytes.
    case checksumMismatch(stored: UInt64, computed: UInt64)

    package var reason: String {
        switch self {
        case .truncated(let needed, let available):
            return "frame needs \(needed) bytes but only \(available) remain"
        case .invalidField(let what): return what
        case .checksumMismatch(let stored, let computed):
            return "checksum mismatch (stored \(hex(stored)), computed \(hex(computed)))"
        }
    }

    private func hex(_ value: UInt64) -> String { "0x" + String(value, radix: 16) }
}

/// Reads frames from a segment's bytes, checking every field and the checksum before anything is used.
package enum FrameDecoder {
    /// Decodes the frame at `offset` of `bytes` (the segment from its first byte to its end).
    ///
    /// - parameter verifyChecksum: false only where every frame that is used is checked later (the
    ///   compactor checks each frame it copies, and skips the rest).
    /// - parameter readsBodies: false for the bytes of an encrypted segment as written (only delimits
    ///   its frames, ``CompactFrameDecoder/decode(_:at:baseSequence:sealed:readsBodies:verifyChecksum:)``).
    package static func decode(
        _ bytes: UnsafeRawBufferPointer, at offset: Int, format: FrameFormat, readsBodies: Bool = true,
        verifyChecksum: Bool = true
    ) -> Result<DecodedFrame, FrameProblem> {
        switch format {
        case .v1: return decodeVersion1(bytes, at: offset, verifyChecksum: verifyChecksum)
        case .v2(let base, let sealed):
            return CompactFrameDecoder.decode(
                bytes, at: offset, baseSequence: base, sealed: sealed, readsBodies: readsBodies,
                verifyChecksum: verifyChecksum)
        }
    }

    /// Decodes the version-1 frame at `offset` of `bytes` (the segment from its first byte to its end).
    private static func decodeVersion1(_ bytes: UnsafeRawBufferPointer, at offset: Int, verifyChecksum: Bool)
        -> Result<DecodedFrame, FrameProblem>
    {
        let available = bytes.count - offset
        guard let base = bytes.baseAddress, offset >= 0, available >= LogFormat.frameHeaderSize else {
            return .failure(.truncated(needed: LogFormat.frameHeaderSize, available: max(0, available)))
        }
        let start = UnsafeRawPointer(base + offset)
        let rawKind = start.load(fromByteOffset: 0, as: UInt8.self)
        guard let kind = FrameKind(rawValue: rawKind) else {
            return .failure(.invalidField("unknown frame kind \(rawKind)"))
        }
        let flags = FrameFlags(rawValue: start.load(fromByteOffset: 1, as: UInt8.self))
        guard FrameFlags.known.isSuperset(of: flags) else {
            return .failure(.invalidField("unknown frame flags 0x\(String(flags.rawValue, radix: 16))"))
        }
        let dictionary = start.readLE(UInt16.self, at: 2)
        guard dictionary == LogFormat.noDictionary else {
            return .failure(.invalidField("unknown compression dictionary \(dictionary)"))
        }
        let referenceCount = Int(start.readLE(UInt32.self, at: 4))
        guard referenceCount <= LogStoreLimits.maxReferenceCount else {
            return .failure(.invalidField("reference count \(referenceCount) over the limit"))
        }
        let storedLength = Int(start.readLE(UInt32.self, at: 28))
        let originalLength = Int(start.readLE(UInt32.self, at: 32))
        guard originalLength <= LogStoreLimits.maxPayloadSize else {
            return .failure(.invalidField("payload length \(originalLength) over the limit"))
        }
        if flags.contains(.compressed) {
            guard storedLength > 0, storedLength < originalLength else {
                return .failure(.invalidField("compressed length \(storedLength) for \(originalLength) bytes"))
            }
        } else if storedLength != originalLength {
            return .failure(.invalidField("raw payload with stored \(storedLength) != original \(originalLength)"))
        }
        let checked = LogFormat.frameHeaderSize + referenceCount * LogFormat.referenceSize + storedLength
        let length = checked + LogFormat.frameChecksumSize
        guard length <= available else {
            return .failure(.truncated(needed: length, available: available))
        }
        if verifyChecksum {
            let stored = start.readLE(UInt64.self, at: checked)
            let computed = Checksum.xxh3(start, count: checked)
            guard stored == computed else {
                return .failure(.checksumMismatch(stored: stored, computed: computed))
            }
        }
        return .success(
            DecodedFrame(
                kind: kind,
                flags: flags,
                sequence: start.readLE(UInt64.self, at: 8),
                id: start.readLE(UInt64.self, at: 16),
                typeTag: start.readLE(UInt32.self, at: 24),
                referenceCount: referenceCount,
                storedLength: storedLength,
                originalLength: originalLength,
                offset: offset,
                length: length
            ))
    }

    /// Why a frame's sequence number or object id is outside the ranges of the format
    /// (``LogFormat/maxSequence``, ``LogFormat/maxObjectID``), or nil when both are in range.
    ///
    /// A `reserveIDs` frame may name one id more than the largest ("every id reserved"); a `seal`
    /// frame's id is its offset (checked by the scanner); a `removeRoot` frame's id is not used.
    package static func rangeProblem(of frame: DecodedFrame) -> String? {
        rangeProblem(kind: frame.kind, sequence: frame.sequence, id: frame.id)
    }

    /// ``rangeProblem(of:)`` for the fields of a frame or of a hint entry.
    package static func rangeProblem(kind: FrameKind, sequence: UInt64, id: UInt64) -> String? {
        if sequence > LogFormat.maxSequence {
            return "sequence number \(sequence) is larger than the largest sequence number \(LogFormat.maxSequence)"
        }
        switch kind {
        case .put, .delete, .setRoot:
            guard id >= 1, id <= LogFormat.maxObjectID else {
                return "object id \(id) of a \(kind) frame is outside 1 … \(LogFormat.maxObjectID)"
            }
        case .reserveIDs:
            guard id <= LogFormat.maxObjectID + 1 else {
                return "reserveIDs frame reserves through \(id), beyond the largest object id \(LogFormat.maxObjectID)"
            }
        case .removeRoot, .seal:
            break
        }
        return nil
    }

    /// The first offset after `offset` where a whole, valid frame starts, or nil when there is none.
    ///
    /// Used to tell a torn tail (nothing valid after the damage) from corruption in the middle of
    /// the log (valid frames follow), and by `verify` to go on after damage.
    ///
    /// In version 2 a frame's CRC-32C alone would let about one offset in 2^32 of random bytes pass, so
    /// there a valid frame must begin a run of valid frames that ends in a commit frame whose batch
    /// checksum (XXH3-64) holds. The run's fields are read first (cheap: most offsets of random bytes
    /// fail there), then the batch checksum, and the frames' CRCs last. The frame starts of a run of
    /// checked frames whose batch checksum failed are not tried again: none of them can begin a batch
    /// that ends at that commit frame (the run holds no other commit frame), so a large batch whose start
    /// was damaged costs one walk, not one per frame.
    package static func nextValidFrame(
        in bytes: UnsafeRawBufferPointer, after offset: Int, format: FrameFormat, readsBodies: Bool = true
    ) -> Int? {
        guard case .v2(let base, let sealed) = format else {
            return nextValidVersion1Frame(in: bytes, after: offset)
        }
        var candidate = offset + 1
        let last = bytes.count - CompactFrame.minimumSize
        guard bytes.baseAddress != nil else { return nil }
        var notBatchStarts = Set<Int>()
        while candidate <= last {
            if bytes[candidate] != 0, !notBatchStarts.contains(candidate),
                beginsCommittedBatch(
                    bytes, at: candidate, baseSequence: base, sealed: sealed, readsBodies: readsBodies,
                    notBatchStarts: &notBatchStarts)
            {
                return candidate
            }
            candidate += 1
        }
        return nil
    }

    /// Whether the version-2 frames from `offset` on are valid up to a commit frame whose batch checksum
    /// holds; adds to `notBatchStarts` the frame starts of a run of valid frames whose batch checksum
    /// did not hold.
    private static func beginsCommittedBatch(
        _ bytes: UnsafeRawBufferPointer, at offset: Int, baseSequence: UInt64, sealed: Bool, readsBodies: Bool,
        notBatchStarts: inout Set<Int>
    ) -> Bool {
        var cursor = offset
        var run: [DecodedFrame] = []
        while case .success(let frame) = CompactFrameDecoder.decode(
            bytes, at: cursor, baseSequence: baseSequence, sealed: sealed, readsBodies: readsBodies,
            verifyChecksum: false)
        {
            run.append(frame)
            if frame.flags.contains(.commit) {
                guard CompactFrameDecoder.batchChecksumMatches(frame, batchStart: offset, in: bytes) else {
                    if run.allSatisfy({ CompactFrameDecoder.checksumMatches($0, in: bytes) }) {
                        for frame in run { notBatchStarts.insert(frame.offset) }
                    }
                    return false
                }
                return run.allSatisfy { CompactFrameDecoder.checksumMatches($0, in: bytes) }
            }
            cursor += frame.length
        }
        return false
    }

    /// ``nextValidFrame(in:after:format:)`` for version 1.
    private static func nextValidVersion1Frame(in bytes: UnsafeRawBufferPointer, after offset: Int) -> Int? {
        var candidate = offset + 1
        let last = bytes.count - LogFormat.minimumFrameSize
        guard let base = bytes.baseAddress, candidate <= last else { return nil }
        while candidate <= last {
            let kind = base.load(fromByteOffset: candidate, as: UInt8.self)
            if kind >= FrameKind.put.rawValue, kind <= FrameKind.seal.rawValue,
                case .success = decodeVersion1(bytes, at: candidate, verifyChecksum: true)
            {
                return candidate
            }
            candidate += 1
        }
        return nil
    }

    /// The references of a decoded frame.
    package static func references(of frame: DecodedFrame, in bytes: UnsafeRawBufferPointer) -> [ObjectID] {
        guard frame.referenceCount > 0, let base = bytes.baseAddress else { return [] }
        if frame.format.isCompact {
            var references: [ObjectID] = []
            references.reserveCapacity(frame.referenceCount)
            CompactFrameDecoder.forEachReference(of: frame, in: bytes) { references.append(ObjectID($0)) }
            return references
        }
        let start = UnsafeRawPointer(base + frame.referencesOffset)
        return (0..<frame.referenceCount).map {
            ObjectID(start.readLE(UInt64.self, at: $0 * LogFormat.referenceSize))
        }
    }

    /// Why a frame's payload cannot be read.
    package enum PayloadProblem: Error, Equatable {
        /// The frame names a dictionary the store does not have.
        case missingDictionary(UInt32)
        /// The compressed bytes do not decompress to the recorded length.
        case malformed

        /// For an error message.
        package var reason: String {
            switch self {
            case .missingDictionary(let id):
                return "the payload is compressed against dictionary \(id), which the store does not have"
            case .malformed: return "the payload does not decompress to its recorded length"
            }
        }
    }

    /// The payload of a decoded frame, decompressed (against the dictionary it names, from `dictionaries`)
    /// when it was stored compressed.
    package static func payload(
        of frame: DecodedFrame, in bytes: UnsafeRawBufferPointer, dictionaries: CompressionDictionaries
    ) -> Result<[UInt8], PayloadProblem> {
        guard frame.dictionary != 0 else {
            return payload(of: frame, in: bytes).map { .success($0) } ?? .failure(.malformed)
        }
        guard let dictionary = dictionaries[frame.dictionary] else {
            return .failure(.missingDictionary(frame.dictionary))
        }
        guard let base = bytes.baseAddress, frame.flags.contains(.compressed) else { return .failure(.malformed) }
        let stored = UnsafeRawBufferPointer(start: base + frame.payloadOffset, count: frame.storedLength)
        return dictionary.decompress(stored, originalLength: frame.originalLength).map { .success($0) }
            ?? .failure(.malformed)
    }

    /// ``payload(of:in:dictionaries:)`` written into `buffer` (its storage reused when nothing else holds
    /// it: no allocation per payload); nil when it succeeds, the same problem as that function's otherwise.
    package static func payload(
        of frame: DecodedFrame, in bytes: UnsafeRawBufferPointer, dictionaries: CompressionDictionaries,
        into buffer: inout [UInt8]
    ) -> PayloadProblem? {
        if frame.dictionary != 0 {
            guard let dictionary = dictionaries[frame.dictionary] else { return .missingDictionary(frame.dictionary) }
            guard let base = bytes.baseAddress, frame.flags.contains(.compressed) else { return .malformed }
            let stored = UnsafeRawBufferPointer(start: base + frame.payloadOffset, count: frame.storedLength)
            return dictionary.decompress(stored, originalLength: frame.originalLength, into: &buffer) ? nil : .malformed
        }
        guard let base = bytes.baseAddress else {
            guard frame.storedLength == 0 else { return .malformed }
            buffer.removeAll(keepingCapacity: true)
            return nil
        }
        let stored = UnsafeRawBufferPointer(start: base + frame.payloadOffset, count: frame.storedLength)
        if frame.flags.contains(.compressed) {
            return Compression.decompress(stored, originalLength: frame.originalLength, into: &buffer)
                ? nil : .malformed
        }
        buffer.removeAll(keepingCapacity: true)
        buffer.append(contentsOf: stored)
        return nil
    }

    /// The payload of a decoded frame that names no dictionary (control frames never do), decompressed
    /// when it was stored compressed.
    ///
    /// - returns: nil when a compressed payload does not decompress to its recorded length, or the frame
    ///   names a dictionary.
    package static func payload(of frame: DecodedFrame, in bytes: UnsafeRawBufferPointer) -> [UInt8]? {
        guard frame.dictionary == 0 else { return nil }
        guard let base = bytes.baseAddress else { return frame.storedLength == 0 ? [] : nil }
        let stored = UnsafeRawBufferPointer(start: base + frame.payloadOffset, count: frame.storedLength)
        if frame.flags.contains(.compressed) {
            return Compression.decompress(stored, originalLength: frame.originalLength)
        }
        return [UInt8](stored)
    }

    /// Calls `body` with each reference of the frame at `offset`, reading only the header and the
    /// reference list (no checksum: for frames that were checked when the store was opened).
    package static func forEachStoredReference(
        in bytes: UnsafeRawBufferPointer, at offset: Int, format: FrameFormat, _ body: (UInt64) -> Void
    ) {
        if case .v2(let base, let sealed) = format {
            guard
                case .success(let frame) = CompactFrameDecoder.decode(
                    bytes, at: offset, baseSequence: base, sealed: sealed, verifyChecksum: false)
            else { return }
            CompactFrameDecoder.forEachReference(of: frame, in: bytes, body)
            return
        }
        guard let base = bytes.baseAddress, offset >= 0, offset + LogFormat.frameHeaderSize <= bytes.count else {
            return
        }
        let count = Int(base.readLE(UInt32.self, at: offset + 4))
        let start = offset + LogFormat.frameHeaderSize
        guard count <= LogStoreLimits.maxReferenceCount, start + count * LogFormat.referenceSize <= bytes.count else {
            return
        }
        for index in 0..<count { body(base.readLE(UInt64.self, at: start + index * LogFormat.referenceSize)) }
    }

    /// Whether a decoded frame's stored checksum matches its bytes.
    package static func checksumMatches(_ frame: DecodedFrame, in bytes: UnsafeRawBufferPointer) -> Bool {
        if frame.format.isCompact { return CompactFrameDecoder.checksumMatches(frame, in: bytes) }
        guard let base = bytes.baseAddress, frame.offset + frame.length <= bytes.count else { return false }
        let start = base + frame.offset
        let checked = frame.length - LogFormat.frameChecksumSize
        return start.readLE(UInt64.self, at: checked) == Checksum.xxh3(start, count: checked)
    }
}
