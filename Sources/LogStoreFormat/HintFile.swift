/// A hint file: the frames of one sealed segment without their payloads, so open can rebuild the
/// index without reading the segment (Bitcask's idea). Specified in `Documentation/Format.md`.
///
/// ```
/// hint    := header entry* checksum
/// header  := "LOGSTHNT" u16 version, u16 header_size (48), u32 reserved, u64 segment_number,
///            u64 segment_size, u64 entry_count, u64 reserved
/// entry   := u8 kind, u8 flags, u16 reserved, u32 reference_count, u64 sequence, u64 id,
///            u32 type_tag, u32 offset, u32 length, u32 name_length, u64 reference*, u8 name*
/// checksum:= u64 XXH3-64 of every byte before it
/// ```
package struct HintFile: Equatable {
    /// One committed frame of the segment.
    package struct Entry: Equatable {
        package var kind: FrameKind
        package var flags: FrameFlags
        package var sequence: UInt64
        package var id: UInt64
        package var typeTag: UInt32
        package var offset: UInt32
        package var length: UInt32
        package var references: [ObjectID]
        /// The root name of `setRoot` / `removeRoot` frames.
        package var name: [UInt8]
    }

    package static let magic: [UInt8] = Array("LOGSTHNT".utf8)
    package static let version: UInt16 = 1
    package static let headerSize = 48
    package static let entrySize = 40
    package static let fileExtension = "hint"

    package var segmentNumber: UInt32
    /// Size of the segment file this hint describes; a hint for another size is stale.
    package var segmentSize: UInt64
    package var entries: [Entry]

    /// File name of the hint of segment `number` (`0000000001.hint`).
    package static func fileName(_ number: UInt32) -> String {
        String(LogFormat.segmentFileName(number).dropLast(LogFormat.segmentExtension.count)) + fileExtension
    }

    /// The hint of a sealed segment, from a scan of its frames (which checks every checksum).
    package static func build(segment number: UInt32, bytes: UnsafeRawBufferPointer) -> HintFile? {
        var entries: [Entry] = []
        // Room for one entry per 128 bytes at once (reserved memory is not touched until used), instead of
        // growing the array through every doubling from empty; segments of smaller records grow it further.
        entries.reserveCapacity(bytes.count / 128)
        let outcome = SegmentScanner(bytes: bytes).scan { frame in
            let isRoot = frame.kind == .setRoot || frame.kind == .removeRoot
            entries.append(
                Entry(
                    kind: frame.kind, flags: frame.flags, sequence: frame.sequence, id: frame.id,
                    typeTag: frame.typeTag,
                    offset: UInt32(frame.offset), length: UInt32(frame.length),
                    references: FrameDecoder.references(of: frame, in: bytes),
                    name: isRoot ? (FrameDecoder.payload(of: frame, in: bytes) ?? []) : []))
        }
        guard outcome.damages.isEmpty, outcome.sealedAt != nil else { return nil }
        return HintFile(segmentNumber: number, segmentSize: UInt64(bytes.count), entries: entries)
    }

    /// The bytes of the hint file of a sealed segment, straight from two scans of its frames (each checks
    /// every checksum): the same bytes as `build(segment:bytes:)?.encoded()`, without an array per entry
    /// or a list of the frames. The first scan sizes the file, the second writes it: holding the decoded
    /// frames instead would take ~90 bytes per frame of fresh memory, which costs more than a scan here.
    /// Compaction writes one per output, so this is on its path.
    package static func encodedHint(segment number: UInt32, bytes: UnsafeRawBufferPointer) -> [UInt8]? {
        var size = headerSize + LogFormat.frameChecksumSize
        var count = 0
        var compressedName = false
        let outcome = SegmentScanner(bytes: bytes).scan { frame in
            count += 1
            size += entrySize + frame.referenceCount * LogFormat.referenceSize + nameLength(of: frame)
            if nameLength(of: frame) > 0 && frame.flags.contains(.compressed) { compressedName = true }
        }
        guard outcome.damages.isEmpty, outcome.sealedAt != nil, let source = bytes.baseAddress else { return nil }
        // A root name stored compressed (only with a tiny compression threshold) is decompressed by `build`.
        if compressedName { return build(segment: number, bytes: bytes)?.encoded() }
        var hint = [UInt8](repeating: 0, count: size)
        var complete = false
        hint.withUnsafeMutableBytes { raw in
            guard let base = raw.baseAddress else { return }
            for (index, byte) in magic.enumerated() { raw[index] = byte }
            base.writeLE(version, at: 8)
            base.writeLE(UInt16(headerSize), at: 10)
            base.writeLE(UInt64(number), at: 16)
            base.writeLE(UInt64(bytes.count), at: 24)
            base.writeLE(UInt64(count), at: 32)
            var cursor = headerSize
            var written = 0
            let again = SegmentScanner(bytes: bytes).scan { frame in
                let name = nameLength(of: frame)
                let referenceBytes = frame.referenceCount * LogFormat.referenceSize
                // The segment is immutable, so the second scan meets the same frames; checked anyway.
                guard written < count, cursor + entrySize + referenceBytes + name <= size - LogFormat.frameChecksumSize
                else {
                    written = count + 1
                    return
                }
                written += 1
                base.storeBytes(of: frame.kind.rawValue, toByteOffset: cursor, as: UInt8.self)
                base.storeBytes(of: frame.flags.rawValue, toByteOffset: cursor + 1, as: UInt8.self)
                base.writeLE(UInt32(frame.referenceCount), at: cursor + 4)
                base.writeLE(frame.sequence, at: cursor + 8)
                base.writeLE(frame.id, at: cursor + 16)
                base.writeLE(frame.typeTag, at: cursor + 24)
                base.writeLE(UInt32(frame.offset), at: cursor + 28)
                base.writeLE(UInt32(frame.length), at: cursor + 32)
                base.writeLE(UInt32(name), at: cursor + 36)
                cursor += entrySize
                // References are stored as little-endian u64s in the frame and in the hint alike.
                (base + cursor).copyMemory(from: source + frame.referencesOffset, byteCount: referenceBytes)
                cursor += referenceBytes
                if name > 0 {
                    (base + cursor).copyMemory(from: source + frame.payloadOffset, byteCount: name)
                    cursor += name
                }
            }
            guard again.damages.isEmpty, written == count, cursor == size - LogFormat.frameChecksumSize else { return }
            base.writeLE(Checksum.xxh3(UnsafeRawPointer(base), count: cursor), at: cursor)
            complete = true
        }
        return complete ? hint : nil
    }

    /// The length of the root name a hint entry carries for `frame`: the stored payload of a `setRoot` /
    /// `removeRoot` frame (the name itself unless it was stored compressed).
    private static func nameLength(of frame: DecodedFrame) -> Int {
        frame.kind == .setRoot || frame.kind == .removeRoot ? frame.storedLength : 0
    }

    /// The file's bytes.
    package func encoded() -> [UInt8] {
        var size = Self.headerSize + LogFormat.frameChecksumSize
        for entry in entries { size += Self.entrySize + entry.references.count * 8 + entry.name.count }
        var bytes = [UInt8](repeating: 0, count: size)
        bytes.withUnsafeMutableBytes { raw in
            guard let base = raw.baseAddress else { return }
            for (index, byte) in Self.magic.enumerated() { raw[index] = byte }
            base.writeLE(Self.version, at: 8)
            base.writeLE(UInt16(Self.headerSize), at: 10)
            base.writeLE(UInt64(segmentNumber), at: 16)
            base.writeLE(segmentSize, at: 24)
            base.writeLE(UInt64(entries.count), at: 32)
            var cursor = Self.headerSize
            for entry in entries {
                base.storeBytes(of: entry.kind.rawValue, toByteOffset: cursor, as: UInt8.self)
                base.storeBytes(of: entry.flags.rawValue, toByteOffset: cursor + 1, as: UInt8.self)
                base.writeLE(UInt32(entry.references.count), at: cursor + 4)
                base.writeLE(entry.sequence, at: cursor + 8)
                base.writeLE(entry.id, at: cursor + 16)
                base.writeLE(entry.typeTag, at: cursor + 24)
                base.writeLE(entry.offset, at: cursor + 28)
                base.writeLE(entry.length, at: cursor + 32)
                base.writeLE(UInt32(entry.name.count), at: cursor + 36)
                cursor += Self.entrySize
                for reference in entry.references {
                    base.writeLE(reference.rawValue, at: cursor)
                    cursor += 8
                }
                for byte in entry.name {
                    raw[cursor] = byte
                    cursor += 1
                }
            }
            base.writeLE(Checksum.xxh3(UnsafeRawPointer(base), count: cursor), at: cursor)
        }
        return bytes
    }

    /// Decodes and checks a hint file; the reason when it is not valid.
    package static func decode(_ raw: UnsafeRawBufferPointer) -> Result<HintFile, HintProblem> {
        guard let base = raw.baseAddress, raw.count >= headerSize + LogFormat.frameChecksumSize else {
            return .failure(HintProblem("hint file truncated (\(raw.count) bytes)"))
        }
        guard raw.prefix(8).elementsEqual(magic) else { return .failure(HintProblem("not a hint file (wrong magic)")) }
        let checked = raw.count - LogFormat.frameChecksumSize
        guard base.readLE(UInt64.self, at: checked) == Checksum.xxh3(base, count: checked) else {
            return .failure(HintProblem("hint checksum mismatch"))
        }
        guard base.readLE(UInt16.self, at: 8) == version, Int(base.readLE(UInt16.self, at: 10)) == headerSize else {
            return .failure(HintProblem("unsupported hint version"))
        }
        let number = base.readLE(UInt64.self, at: 16)
        let count = base.readLE(UInt64.self, at: 32)
        guard number > 0, number <= UInt64(UInt32.max), count <= UInt64(checked / entrySize) else {
            return .failure(HintProblem("impossible hint header field"))
        }
        var entries: [Entry] = []
        entries.reserveCapacity(Int(count))
        var cursor = headerSize
        for _ in 0..<count {
            guard cursor + entrySize <= checked,
                let kind = FrameKind(rawValue: base.load(fromByteOffset: cursor, as: UInt8.self))
            else { return .failure(HintProblem("invalid hint entry at byte \(cursor)")) }
            let referenceCount = Int(base.readLE(UInt32.self, at: cursor + 4))
            let nameLength = Int(base.readLE(UInt32.self, at: cursor + 36))
            let end = cursor + entrySize + referenceCount * 8 + nameLength
            guard referenceCount <= LogStoreLimits.maxReferenceCount, nameLength <= LogStoreLimits.maxRootNameLength,
                end <= checked
            else { return .failure(HintProblem("invalid hint entry at byte \(cursor)")) }
            let referencesStart = cursor + entrySize
            entries.append(
                Entry(
                    kind: kind, flags: FrameFlags(rawValue: base.load(fromByteOffset: cursor + 1, as: UInt8.self)),
                    sequence: base.readLE(UInt64.self, at: cursor + 8), id: base.readLE(UInt64.self, at: cursor + 16),
                    typeTag: base.readLE(UInt32.self, at: cursor + 24),
                    offset: base.readLE(UInt32.self, at: cursor + 28),
                    length: base.readLE(UInt32.self, at: cursor + 32),
                    references: (0..<referenceCount).map {
                        ObjectID(base.readLE(UInt64.self, at: referencesStart + $0 * 8))
                    },
                    name: Array(raw[(end - nameLength)..<end])))
            cursor = end
        }
        guard cursor == checked else { return .failure(HintProblem("hint has \(checked - cursor) stray bytes")) }
        return .success(
            HintFile(segmentNumber: UInt32(number), segmentSize: base.readLE(UInt64.self, at: 24), entries: entries))
    }
}

/// Why a hint file cannot be used.
package struct HintProblem: Error, Equatable {
    package var reason: String
    package init(_ reason: String) { self.reason = reason }
}

/// Reading a hint file in place: checks it once, then hands out its entries without copying them.
package struct HintReader {
    /// One entry, read from the hint's bytes.
    package struct EntryView {
        package let base: UnsafeRawPointer
        /// Byte offset of the entry in the hint.
        package let at: Int

        package var kind: FrameKind { FrameKind(rawValue: base.load(fromByteOffset: at, as: UInt8.self)) ?? .put }
        package var flags: FrameFlags { FrameFlags(rawValue: base.load(fromByteOffset: at + 1, as: UInt8.self)) }
        package var referenceCount: Int { Int(base.readLE(UInt32.self, at: at + 4)) }
        package var sequence: UInt64 { base.readLE(UInt64.self, at: at + 8) }
        package var id: UInt64 { base.readLE(UInt64.self, at: at + 16) }
        package var typeTag: UInt32 { base.readLE(UInt32.self, at: at + 24) }
        package var offset: UInt32 { base.readLE(UInt32.self, at: at + 28) }
        package var length: UInt32 { base.readLE(UInt32.self, at: at + 32) }
        package var nameLength: Int { Int(base.readLE(UInt32.self, at: at + 36)) }
        package var size: Int { HintFile.entrySize + referenceCount * 8 + nameLength }

        package func forEachReference(_ body: (UInt64) -> Void) {
            for index in 0..<referenceCount { body(base.readLE(UInt64.self, at: at + HintFile.entrySize + index * 8)) }
        }

        package var name: String? {
            let start = at + HintFile.entrySize + referenceCount * 8
            return String(
                validating: UnsafeRawBufferPointer(start: base + start, count: nameLength), as: UTF8.self)
        }
    }

    package let bytes: UnsafeRawBufferPointer
    package let segmentNumber: UInt32
    package let segmentSize: UInt64
    package let entryCount: Int

    /// Checks the header, the checksum and every entry's bounds and kind.
    package static func open(_ bytes: UnsafeRawBufferPointer) -> Result<HintReader, HintProblem> {
        guard let base = bytes.baseAddress, bytes.count >= HintFile.headerSize + LogFormat.frameChecksumSize else {
            return .failure(HintProblem("hint file truncated (\(bytes.count) bytes)"))
        }
        guard bytes.prefix(8).elementsEqual(HintFile.magic) else {
            return .failure(HintProblem("not a hint file (wrong magic)"))
        }
        let checked = bytes.count - LogFormat.frameChecksumSize
        guard base.readLE(UInt64.self, at: checked) == Checksum.xxh3(base, count: checked) else {
            return .failure(HintProblem("hint checksum mismatch"))
        }
        guard base.readLE(UInt16.self, at: 8) == HintFile.version,
            Int(base.readLE(UInt16.self, at: 10)) == HintFile.headerSize
        else { return .failure(HintProblem("unsupported hint version")) }
        let number = base.readLE(UInt64.self, at: 16)
        let count = base.readLE(UInt64.self, at: 32)
        guard number > 0, number <= UInt64(UInt32.max), count <= UInt64(checked / HintFile.entrySize) else {
            return .failure(HintProblem("impossible hint header field"))
        }
        let segmentSize = base.readLE(UInt64.self, at: 24)
        var cursor = HintFile.headerSize
        for _ in 0..<count {
            guard cursor + HintFile.entrySize <= checked,
                FrameKind(rawValue: base.load(fromByteOffset: cursor, as: UInt8.self)) != nil
            else { return .failure(HintProblem("invalid hint entry at byte \(cursor)")) }
            let frame = EntryView(base: base, at: cursor)
            let frameEnd = UInt64(frame.offset) + UInt64(frame.length)
            guard frame.offset >= LogFormat.segmentHeaderSize, frame.length >= LogFormat.minimumFrameSize,
                frameEnd <= segmentSize
            else {
                return .failure(
                    HintProblem(
                        "invalid hint entry at byte \(cursor): frame at \(frame.offset) of \(frame.length) bytes is"
                            + " outside the segment's \(segmentSize) bytes"))
            }
            let entry = EntryView(base: base, at: cursor)
            guard entry.referenceCount <= LogStoreLimits.maxReferenceCount,
                entry.nameLength <= LogStoreLimits.maxRootNameLength, cursor + entry.size <= checked
            else { return .failure(HintProblem("invalid hint entry at byte \(cursor)")) }
            if let problem = FrameDecoder.rangeProblem(kind: entry.kind, sequence: entry.sequence, id: entry.id) {
                return .failure(HintProblem("invalid hint entry at byte \(cursor): \(problem)"))
            }
            cursor += entry.size
        }
        guard cursor == checked else { return .failure(HintProblem("hint has \(checked - cursor) stray bytes")) }
        return .success(
            HintReader(
                bytes: bytes, segmentNumber: UInt32(number), segmentSize: base.readLE(UInt64.self, at: 24),
                entryCount: Int(count)))
    }

    /// Calls `body` with every entry, in order.
    package func forEachEntry(_ body: (EntryView) -> Void) {
        guard let base = bytes.baseAddress else { return }
        var cursor = HintFile.headerSize
        for _ in 0..<entryCount {
            let entry = EntryView(base: base, at: cursor)
            body(entry)
            cursor += entry.size
        }
    }
}
