/// Writes a hint file entry by entry, in the layout of `Documentation/Format.md`, section 8: the
/// header first, each entry as it comes, then the entry count and the checksum. The one hint encoder:
/// compaction and ``Store/writeHints()`` write hints with it, `verify` compares with what it writes.
///
/// For example:
/// ```swift
/// var writer = HintWriter(segmentNumber: 7, segmentSize: 4096)
/// writer.append(entry)
/// let bytes = writer.finish()
/// ```
package struct HintWriter {
    private let buffer: WriteBuffer
    /// Entries appended so far.
    package private(set) var entryCount = 0
    /// The layout of the entries: the segment's.
    package let format: FrameFormat
    /// Version 2: what the next entry is written against.
    private var previous = (sequence: UInt64(0), id: UInt64(0), frameEnd: UInt64(LogFormat.segmentHeaderSize))

    /// Starts the hint of segment `segmentNumber`, a file of `segmentSize` bytes whose frames are in
    /// `format`.
    ///
    /// - parameter reservingCapacity: bytes to reserve for the whole file (memory reserved is not
    ///   touched until used).
    package init(segmentNumber: UInt32, segmentSize: UInt64, format: FrameFormat = .v1, reservingCapacity: Int = 0) {
        self.format = format
        buffer = WriteBuffer(capacity: max(reservingCapacity, HintFile.headerSize + LogFormat.frameChecksumSize))
        let base = buffer.reserve(HintFile.headerSize)
        base.initializeMemory(as: UInt8.self, repeating: 0, count: HintFile.headerSize)
        for (index, byte) in HintFile.magic.enumerated() {
            base.storeBytes(of: byte, toByteOffset: index, as: UInt8.self)
        }
        base.writeLE(format.isCompact ? HintFile.compactVersion : HintFile.version, at: 8)
        base.writeLE(UInt16(HintFile.headerSize), at: 10)
        base.writeLE(UInt64(segmentNumber), at: 16)
        base.writeLE(segmentSize, at: 24)
        buffer.commit(HintFile.headerSize)
    }

    /// A frame's reference list as it is stored.
    package enum StoredReferences {
        /// Version 1: `8 × count` bytes of little-endian `u64`s.
        case fixed64(UnsafeRawBufferPointer)
        /// Version 2: `count` varint deltas, the first from the frame's id.
        case compact(UnsafeRawBufferPointer, count: Int)
    }

    /// Appends one entry.
    ///
    /// - parameter name: the root name of a `setRoot` / `removeRoot` frame, else empty.
    package mutating func append(
        kind: FrameKind, flags: FrameFlags, sequence: UInt64, id: UInt64, typeTag: UInt32, offset: UInt32,
        length: UInt32, references: StoredReferences, name: UnsafeRawBufferPointer
    ) {
        if !format.isCompact {
            appendFixed(
                kind: kind, flags: flags, sequence: sequence, id: id, typeTag: typeTag, offset: offset, length: length,
                references: references, name: name)
        } else {
            appendCompact(
                kind: kind, flags: flags, sequence: sequence, id: id, typeTag: typeTag, offset: offset, length: length,
                references: references, name: name)
        }
        entryCount += 1
    }

    private mutating func appendFixed(
        kind: FrameKind, flags: FrameFlags, sequence: UInt64, id: UInt64, typeTag: UInt32, offset: UInt32,
        length: UInt32, references: StoredReferences, name: UnsafeRawBufferPointer
    ) {
        let count: Int
        switch references {
        case .fixed64(let raw): count = raw.count / LogFormat.referenceSize
        case .compact(_, let number): count = number
        }
        let size = HintFile.entrySize + count * LogFormat.referenceSize + name.count
        let base = buffer.reserve(size)
        base.storeBytes(of: kind.rawValue, as: UInt8.self)
        base.storeBytes(of: flags.rawValue, toByteOffset: 1, as: UInt8.self)
        base.writeLE(UInt16(0), at: 2)
        base.writeLE(UInt32(count), at: 4)
        base.writeLE(sequence, at: 8)
        base.writeLE(id, at: 16)
        base.writeLE(typeTag, at: 24)
        base.writeLE(offset, at: 28)
        base.writeLE(length, at: 32)
        base.writeLE(UInt32(name.count), at: 36)
        var cursor = HintFile.entrySize
        switch references {
        case .fixed64(let raw):
            if let source = raw.baseAddress { (base + cursor).copyMemory(from: source, byteCount: raw.count) }
            cursor += raw.count
        case .compact(let raw, let number):
            var position = 0
            var reference = id
            for _ in 0..<number {
                if let source = raw.baseAddress, let delta = VarInt.read(source, at: &position, end: raw.count) {
                    reference = VarInt.applying(delta, to: reference)
                }
                base.writeLE(reference, at: cursor)
                cursor += LogFormat.referenceSize
            }
        }
        if let source = name.baseAddress { (base + cursor).copyMemory(from: source, byteCount: name.count) }
        buffer.commit(size)
    }

    private mutating func appendCompact(
        kind: FrameKind, flags: FrameFlags, sequence: UInt64, id: UInt64, typeTag: UInt32, offset: UInt32,
        length: UInt32, references: StoredReferences, name: UnsafeRawBufferPointer
    ) {
        let isRoot = kind == .setRoot || kind == .removeRoot
        let referenceCount: Int
        let referenceRoom: Int
        switch references {
        case .compact(let raw, let count):
            referenceCount = count
            referenceRoom = raw.count
        case .fixed64(let raw):
            referenceCount = raw.count / LogFormat.referenceSize
            referenceRoom = referenceCount * VarInt.maximumSize
        }
        let base = buffer.reserve(1 + 6 * VarInt.maximumSize + referenceRoom + VarInt.maximumSize + name.count)
        let explicitOffset = UInt64(offset) != previous.frameEnd
        var head = kind.rawValue | (flags.rawValue & 0x0F) << CompactFrame.flagsShift
        if explicitOffset { head |= 0x80 }
        base.storeBytes(of: head, as: UInt8.self)
        var cursor = 1
        cursor += VarInt.write(VarInt.delta(sequence, from: previous.sequence), to: base + cursor)
        cursor += VarInt.write(VarInt.delta(id, from: previous.id), to: base + cursor)
        cursor += VarInt.write(UInt64(typeTag), to: base + cursor)
        cursor += VarInt.write(UInt64(length), to: base + cursor)
        if explicitOffset { cursor += VarInt.write(UInt64(offset), to: base + cursor) }
        cursor += VarInt.write(UInt64(referenceCount), to: base + cursor)
        switch references {
        case .compact(let raw, _):
            if let source = raw.baseAddress { (base + cursor).copyMemory(from: source, byteCount: raw.count) }
            cursor += raw.count
        case .fixed64(let raw):
            var previousReference = id
            for index in 0..<referenceCount {
                guard let source = raw.baseAddress else { break }
                let reference = source.readLE(UInt64.self, at: index * LogFormat.referenceSize)
                cursor += VarInt.write(VarInt.delta(reference, from: previousReference), to: base + cursor)
                previousReference = reference
            }
        }
        if isRoot {
            cursor += VarInt.write(UInt64(name.count), to: base + cursor)
            if let source = name.baseAddress { (base + cursor).copyMemory(from: source, byteCount: name.count) }
            cursor += name.count
        }
        buffer.commit(cursor)
        previous = (sequence, id, UInt64(offset) + UInt64(length))
    }

    /// Appends `entry`.
    package mutating func append(_ entry: HintFile.Entry) {
        var references: [UInt8] = []
        references.reserveCapacity(entry.references.count * LogFormat.referenceSize)
        for reference in entry.references {
            withUnsafeBytes(of: reference.rawValue.littleEndian) { references.append(contentsOf: $0) }
        }
        references.withUnsafeBytes { references in
            entry.name.withUnsafeBytes { name in
                append(
                    kind: entry.kind, flags: entry.flags, sequence: entry.sequence, id: entry.id,
                    typeTag: entry.typeTag, offset: entry.offset, length: entry.length,
                    references: .fixed64(references), name: name)
            }
        }
    }

    /// Appends the entry of `frame`, a committed frame of `segment` (the segment's bytes from its first).
    /// A root frame's name is its payload, decompressed when it was stored compressed (empty when it does not
    /// decompress, section 8.4).
    package mutating func append(_ frame: DecodedFrame, of segment: UnsafeRawBufferPointer) {
        guard let source = segment.baseAddress else { return }
        let raw = UnsafeRawBufferPointer(start: source + frame.referencesOffset, count: frame.referencesLength)
        let references: StoredReferences =
            frame.format.isCompact ? .compact(raw, count: frame.referenceCount) : .fixed64(raw)
        let isRoot = frame.kind == .setRoot || frame.kind == .removeRoot
        let fields = (
            kind: frame.kind, flags: frame.flags, sequence: frame.sequence, id: frame.id, typeTag: frame.typeTag,
            offset: UInt32(frame.offset), length: UInt32(frame.length)
        )
        if isRoot, frame.flags.contains(.compressed) {
            let name = FrameDecoder.payload(of: frame, in: segment) ?? []
            name.withUnsafeBytes { name in
                append(
                    kind: fields.kind, flags: fields.flags, sequence: fields.sequence, id: fields.id,
                    typeTag: fields.typeTag, offset: fields.offset, length: fields.length, references: references,
                    name: name)
            }
            return
        }
        let name = UnsafeRawBufferPointer(start: source + frame.payloadOffset, count: isRoot ? frame.storedLength : 0)
        append(
            kind: fields.kind, flags: fields.flags, sequence: fields.sequence, id: fields.id, typeTag: fields.typeTag,
            offset: fields.offset, length: fields.length, references: references, name: name)
    }

    /// The file's bytes: the entry count and the checksum written in.
    package consuming func finish() -> [UInt8] {
        buffer.base.writeLE(UInt64(entryCount), at: 32)
        let checksum = Checksum.xxh3(UnsafeRawPointer(buffer.base), count: buffer.count)
        buffer.reserve(LogFormat.frameChecksumSize).writeLE(checksum, at: 0)
        buffer.commit(LogFormat.frameChecksumSize)
        return Array(buffer.bytes)
    }

    /// The hint file of a sealed segment (`bytes`, the whole file), from one scan of its frames, which
    /// checks every checksum; nil when the segment does not end with a valid seal frame or has damage.
    package static func hint(segment number: UInt32, bytes: UnsafeRawBufferPointer) -> [UInt8]? {
        // An entry is at most as long as its frame (but for a compressed root name), so half the segment
        // is mostly enough; reserved memory is not touched until used.
        let scanner = SegmentScanner(bytes: bytes)
        var writer = HintWriter(
            segmentNumber: number, segmentSize: UInt64(bytes.count), format: scanner.format,
            reservingCapacity: bytes.count / 2)
        let outcome = scanner.scan { frame in writer.append(frame, of: bytes) }
        guard outcome.damages.isEmpty, outcome.sealedAt != nil else { return nil }
        return writer.finish()
    }
}
