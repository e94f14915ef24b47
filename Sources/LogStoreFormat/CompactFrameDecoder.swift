/// Reads frames in the layout of format version 2 (``CompactFrame``), checking every field and the
/// CRC-32C before anything is used. The one decoder of that layout.
package enum CompactFrameDecoder {
    /// Decodes the frame at `offset` of `bytes` (the segment from its first byte to its end).
    ///
    /// A frame stands alone but for its sequence number, a delta from `baseSequence` (the segment
    /// header's). A commit frame's batch checksum is checked by the scanner, which knows where the batch
    /// starts (``batchChecksumMatches(_:batchStart:in:)``).
    ///
    /// - parameter sealed: the layout of an encrypted segment: the length field counts the frame's body
    ///   (its references and stored payload), and a commit frame carries the batch's nonce and tag after
    ///   its batch checksum.
    /// - parameter readsBodies: false for the bytes of an encrypted segment as written, whose bodies are
    ///   ciphertext: a frame is then only delimited (its body is `referencesOffset ..< payloadOffset`, its
    ///   stored and original lengths 0).
    /// - parameter verifyChecksum: false only where every frame that is used is checked later.
    package static func decode(
        _ bytes: UnsafeRawBufferPointer, at offset: Int, baseSequence: UInt64, sealed: Bool = false,
        readsBodies: Bool = true, verifyChecksum: Bool = true
    ) -> Result<DecodedFrame, FrameProblem> {
        let end = bytes.count
        guard let base = bytes.baseAddress, offset >= 0, offset < end else {
            return .failure(.truncated(needed: 1, available: max(0, end - max(0, offset))))
        }
        let head = base.load(fromByteOffset: offset, as: UInt8.self)
        guard let kind = FrameKind(byte: head & CompactFrame.kindMask) else {
            return .failure(.invalidField("unknown frame kind \(head & CompactFrame.kindMask)"))
        }
        let flags = FrameFlags(rawValue: (head & ~CompactFrame.dictionaryBit) >> CompactFrame.flagsShift)
        let hasDictionary = head & CompactFrame.dictionaryBit != 0
        guard !hasDictionary || flags.contains(.compressed) else {
            return .failure(.invalidField("dictionary bit on an uncompressed frame"))
        }
        var cursor = offset + 1
        guard let sequenceDelta = VarInt.read(base, at: &cursor, end: end) else {
            return .failure(fieldProblem("sequence number", base, offset, cursor, end))
        }
        guard let id = VarInt.read(base, at: &cursor, end: end) else {
            return .failure(fieldProblem("id", base, offset, cursor, end))
        }
        guard let tag = VarInt.read(base, at: &cursor, end: end) else {
            return .failure(fieldProblem("type tag", base, offset, cursor, end))
        }
        guard tag <= UInt64(UInt32.max) else { return .failure(.invalidField("type tag \(tag) over 32 bits")) }
        guard let count = VarInt.read(base, at: &cursor, end: end) else {
            return .failure(fieldProblem("reference count", base, offset, cursor, end))
        }
        guard count <= UInt64(LogStoreLimits.maxReferenceCount) else {
            return .failure(.invalidField("reference count \(count) over the limit"))
        }
        guard let stored = VarInt.read(base, at: &cursor, end: end) else {
            return .failure(fieldProblem("stored length", base, offset, cursor, end))
        }
        guard stored <= UInt64(LogStoreLimits.maxPayloadSize) + (sealed ? count * UInt64(VarInt.maximumSize) : 0) else {
            return .failure(.invalidField("stored payload length \(stored) over the limit"))
        }
        if sealed {
            return decodeSealed(
                bytes, at: offset, cursor: cursor, kind: kind, flags: flags, hasDictionary: hasDictionary,
                sequence: VarInt.applying(sequenceDelta, to: baseSequence), id: id, typeTag: UInt32(tag),
                referenceCount: Int(count), bodyLength: Int(stored), baseSequence: baseSequence,
                readsBodies: readsBodies, verifyChecksum: verifyChecksum)
        }
        var original = stored
        var dictionary: UInt64 = 0
        if flags.contains(.compressed) {
            let extra: UInt64
            switch compressionFields(base, at: offset, cursor: &cursor, end: end, hasDictionary: hasDictionary) {
            case .failure(let problem): return .failure(problem)
            case .success(let fields): (dictionary, extra) = fields
            }
            guard stored > 0, extra <= UInt64(LogStoreLimits.maxPayloadSize) - stored else {
                return .failure(.invalidField("compressed length \(stored) with \(extra) more bytes once decompressed"))
            }
            original = stored + extra
        }
        let referencesOffset = cursor
        for _ in 0..<count {
            guard VarInt.read(base, at: &cursor, end: end) != nil else {
                return .failure(fieldProblem("reference", base, offset, cursor, end))
            }
        }
        let referencesLength = cursor - referencesOffset
        let payloadOffset = cursor
        guard Int(stored) <= end - cursor else {
            return .failure(.truncated(needed: cursor + Int(stored) - offset, available: end - offset))
        }
        cursor += Int(stored)
        var batchChecksumOffset: Int?
        if flags.contains(.commit) {
            batchChecksumOffset = cursor
            cursor += CompactFrame.batchChecksumSize
        }
        let checked = cursor - offset
        let length = checked + CompactFrame.crcSize
        guard length <= end - offset else { return .failure(.truncated(needed: length, available: end - offset)) }
        if verifyChecksum, let problem = crcProblem(base + offset, checked: checked) { return .failure(problem) }
        var frame = DecodedFrame(
            kind: kind, flags: flags, sequence: VarInt.applying(sequenceDelta, to: baseSequence), id: id,
            typeTag: UInt32(tag), referenceCount: Int(count),
            storedLength: Int(stored), originalLength: Int(original), offset: offset, length: length)
        frame.format = .v2(baseSequence: baseSequence)
        frame.dictionary = UInt32(dictionary)
        frame.referencesOffset = referencesOffset
        frame.referencesLength = referencesLength
        frame.payloadOffset = payloadOffset
        frame.batchChecksumOffset = batchChecksumOffset
        return .success(frame)
    }

    /// The CRC problem of the frame at `start` whose CRC follows its first `checked` bytes, or nil.
    private static func crcProblem(_ start: UnsafeRawPointer, checked: Int) -> FrameProblem? {
        let stored = start.readLE(UInt32.self, at: checked)
        let computed = Checksum.crc32c(start, count: checked)
        return stored == computed ? nil : .checksumMismatch(stored: UInt64(stored), computed: UInt64(computed))
    }

    /// The rest of a frame of the sealed layout, from `cursor` (just after its length field, which holds
    /// `bodyLength`): its dictionary and extra length, its body (references, then the stored payload),
    /// and for a commit frame the batch checksum, nonce and tag.
    private static func decodeSealed(
        _ bytes: UnsafeRawBufferPointer, at offset: Int, cursor start: Int, kind: FrameKind,
        flags: FrameFlags, hasDictionary: Bool, sequence: UInt64, id: UInt64, typeTag: UInt32, referenceCount: Int,
        bodyLength: Int, baseSequence: UInt64, readsBodies: Bool, verifyChecksum: Bool
    ) -> Result<DecodedFrame, FrameProblem> {
        let end = bytes.count
        guard let base = bytes.baseAddress else { return .failure(.truncated(needed: 1, available: 0)) }
        var cursor = start
        var dictionary: UInt64 = 0
        var extra: UInt64 = 0
        if flags.contains(.compressed) {
            switch compressionFields(base, at: offset, cursor: &cursor, end: end, hasDictionary: hasDictionary) {
            case .failure(let problem): return .failure(problem)
            case .success(let fields): (dictionary, extra) = fields
            }
        }
        let bodyOffset = cursor
        guard bodyLength <= end - cursor else {
            return .failure(.truncated(needed: cursor + bodyLength - offset, available: end - offset))
        }
        var referencesLength = bodyLength
        var stored = 0
        if readsBodies {
            var reference = cursor
            for _ in 0..<referenceCount {
                guard VarInt.read(base, at: &reference, end: bodyOffset + bodyLength) != nil else {
                    return .failure(.invalidField("invalid reference at byte \(reference - offset) of the frame"))
                }
            }
            referencesLength = reference - bodyOffset
            stored = bodyLength - referencesLength
            guard stored <= LogStoreLimits.maxPayloadSize else {
                return .failure(.invalidField("stored payload length \(stored) over the limit"))
            }
            if flags.contains(.compressed) {
                guard stored > 0, extra <= UInt64(LogStoreLimits.maxPayloadSize - stored) else {
                    return .failure(
                        .invalidField("compressed length \(stored) with \(extra) more bytes once decompressed"))
                }
            }
        } else if referenceCount > bodyLength {
            return .failure(.invalidField("\(referenceCount) references in a body of \(bodyLength) bytes"))
        }
        cursor += bodyLength
        var batchChecksumOffset: Int?
        if flags.contains(.commit) {
            batchChecksumOffset = cursor
            cursor += CompactFrame.batchChecksumSize + CompactFrame.sealSize
        }
        let checked = cursor - offset
        let length = checked + CompactFrame.crcSize
        guard length <= end - offset else { return .failure(.truncated(needed: length, available: end - offset)) }
        if verifyChecksum, let problem = crcProblem(base + offset, checked: checked) { return .failure(problem) }
        let original = readsBodies ? (flags.contains(.compressed) ? stored + Int(extra) : stored) : 0
        var frame = DecodedFrame(
            kind: kind, flags: flags, sequence: sequence, id: id, typeTag: typeTag, referenceCount: referenceCount,
            storedLength: stored, originalLength: original, offset: offset, length: length)
        frame.format = .v2(baseSequence: baseSequence, sealed: true)
        frame.dictionary = UInt32(dictionary)
        frame.referencesOffset = bodyOffset
        frame.referencesLength = referencesLength
        frame.payloadOffset = bodyOffset + referencesLength
        frame.batchChecksumOffset = batchChecksumOffset
        return .success(frame)
    }

    /// A compressed frame's dictionary id (0 without the head's dictionary bit) and extra length (1 … 16 MiB),
    /// read from `cursor` on.
    private static func compressionFields(
        _ base: UnsafeRawPointer, at offset: Int, cursor: inout Int, end: Int, hasDictionary: Bool
    ) -> Result<(dictionary: UInt64, extra: UInt64), FrameProblem> {
        var dictionary: UInt64 = 0
        if hasDictionary {
            guard let name = VarInt.read(base, at: &cursor, end: end) else {
                return .failure(fieldProblem("dictionary", base, offset, cursor, end))
            }
            guard name >= 1, name <= UInt64(UInt32.max) else {
                return .failure(.invalidField("dictionary id \(name) outside 1 … 2^32 − 1"))
            }
            dictionary = name
        }
        guard let extra = VarInt.read(base, at: &cursor, end: end) else {
            return .failure(fieldProblem("extra length", base, offset, cursor, end))
        }
        guard extra > 0, extra <= UInt64(LogStoreLimits.maxPayloadSize) else {
            return .failure(.invalidField("compressed length with \(extra) more bytes once decompressed"))
        }
        return .success((dictionary, extra))
    }

    /// Why the varint field at `cursor` of the frame at `offset` could not be read: the bytes end inside
    /// it (a truncated frame), or it is not the shortest encoding of a 64-bit value.
    private static func fieldProblem(
        _ field: String, _ base: UnsafeRawPointer, _ offset: Int, _ cursor: Int, _ end: Int
    ) -> FrameProblem {
        var position = cursor
        while position < end, position - cursor < VarInt.maximumSize {
            guard base.load(fromByteOffset: position, as: UInt8.self) >= 0x80 else {
                return .invalidField("invalid \(field) at byte \(cursor - offset) of the frame")
            }
            position += 1
        }
        guard position == end else { return .invalidField("invalid \(field) at byte \(cursor - offset) of the frame") }
        return .truncated(needed: end - offset + 1, available: end - offset)
    }

    /// Whether a commit frame's batch checksum matches the batch's bytes, from `batchStart` (the offset of
    /// the batch's first frame) to the checksum.
    package static func batchChecksumMatches(
        _ frame: DecodedFrame, batchStart: Int, in bytes: UnsafeRawBufferPointer
    ) -> Bool {
        guard let at = frame.batchChecksumOffset, let base = bytes.baseAddress, batchStart >= 0, batchStart <= at,
            at + CompactFrame.batchChecksumSize <= bytes.count
        else { return false }
        return base.readLE(UInt64.self, at: at) == Checksum.xxh3(base + batchStart, count: at - batchStart)
    }

    /// Calls `body` with each reference of a decoded version-2 frame, in order.
    package static func forEachReference(
        of frame: DecodedFrame, in bytes: UnsafeRawBufferPointer, _ body: (UInt64) -> Void
    ) {
        guard let base = bytes.baseAddress else { return }
        let end = min(bytes.count, frame.referencesOffset + frame.referencesLength)
        var cursor = frame.referencesOffset
        var previous = frame.id
        for _ in 0..<frame.referenceCount {
            guard let delta = VarInt.read(base, at: &cursor, end: end) else { return }
            previous = VarInt.applying(delta, to: previous)
            body(previous)
        }
    }

    /// Whether a decoded frame's CRC-32C matches its bytes.
    package static func checksumMatches(_ frame: DecodedFrame, in bytes: UnsafeRawBufferPointer) -> Bool {
        guard let base = bytes.baseAddress, frame.offset >= 0, frame.length >= CompactFrame.crcSize,
            frame.offset + frame.length <= bytes.count
        else { return false }
        let start = base + frame.offset
        let checked = frame.length - CompactFrame.crcSize
        return start.readLE(UInt32.self, at: checked) == Checksum.crc32c(start, count: checked)
    }
}
