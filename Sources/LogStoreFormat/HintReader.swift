/// Why a hint file cannot be used.
package struct HintProblem: Error, Equatable {
    package var reason: String
    package init(_ reason: String) { self.reason = reason }
}

/// Reading a hint file in place: checks it once (`Documentation/Format.md`, section 8.5), then hands
/// out its entries without copying them. The one hint decoder: open replays hints with it, `verify`
/// compares them with it.
///
/// Engine SPI, `public` and `@inlinable` where open reads every entry: `package` declarations are not
/// inlined into other modules, and a call per field of ten million entries doubled the time of an open.
@_spi(Engine) public struct HintReader {
    /// One entry, read from the hint's bytes.
    public struct EntryView {
        /// Start of the hint file's bytes.
        public let base: UnsafeRawPointer
        /// Byte offset of the entry in the hint.
        public let at: Int

        @inlinable init(base: UnsafeRawPointer, at: Int) {
            self.base = base
            self.at = at
        }

        /// `HintFile.entrySize`, inlinable (a test checks that they agree).
        @inlinable static var fixedSize: Int { 40 }

        /// The frame kind (`put` for a byte the reader's checks would have refused).
        @inlinable public var kind: FrameKind { FrameKind(byte: base.load(fromByteOffset: at, as: UInt8.self)) ?? .put }
        /// The frame flags.
        @inlinable public var flags: FrameFlags {
            FrameFlags(rawValue: base.load(fromByteOffset: at + 1, as: UInt8.self))
        }
        /// How many references follow the fixed part.
        @inlinable public var referenceCount: Int { Int(base.readLE(UInt32.self, at: at + 4)) }
        /// The sequence number of the batch that wrote the frame.
        @inlinable public var sequence: UInt64 { base.readLE(UInt64.self, at: at + 8) }
        /// The object id (for a seal frame, its offset; for a reservation, the first id not reserved).
        @inlinable public var id: UInt64 { base.readLE(UInt64.self, at: at + 16) }
        /// The application's type tag (puts).
        @inlinable public var typeTag: UInt32 { base.readLE(UInt32.self, at: at + 24) }
        /// Where the frame starts in its segment.
        @inlinable public var offset: UInt32 { base.readLE(UInt32.self, at: at + 28) }
        /// The frame's length in bytes.
        @inlinable public var length: UInt32 { base.readLE(UInt32.self, at: at + 32) }
        /// The root name's length in bytes (root frames; 0 otherwise).
        @inlinable public var nameLength: Int { Int(base.readLE(UInt32.self, at: at + 36)) }
        /// The entry's size: the fixed part, the references and the name.
        @inlinable public var size: Int { Self.fixedSize + referenceCount * 8 + nameLength }

        /// Calls `body` with every reference, in order.
        @inlinable public func forEachReference(_ body: (UInt64) -> Void) {
            for index in 0..<referenceCount { body(base.readLE(UInt64.self, at: at + Self.fixedSize + index * 8)) }
        }

        /// The references as stored: `8 × referenceCount` bytes of little-endian `u64`s.
        package var referenceBytes: UnsafeRawBufferPointer {
            UnsafeRawBufferPointer(start: base + at + HintFile.entrySize, count: referenceCount * 8)
        }

        /// The root name's bytes (empty but for root frames).
        package var nameBytes: UnsafeRawBufferPointer {
            UnsafeRawBufferPointer(start: base + at + HintFile.entrySize + referenceCount * 8, count: nameLength)
        }

        /// The root name, when it is valid UTF-8.
        package var name: String? { String(validating: nameBytes, as: UTF8.self) }

        /// The entry as values.
        package var entry: HintFile.Entry {
            var references: [ObjectID] = []
            references.reserveCapacity(referenceCount)
            forEachReference { references.append(ObjectID($0)) }
            return HintFile.Entry(
                kind: kind, flags: flags, sequence: sequence, id: id, typeTag: typeTag, offset: offset, length: length,
                references: references, name: Array(nameBytes))
        }

        /// Whether `other` has the same fields, references and name (the reserved bytes aside).
        package func hasSameFields(as other: EntryView) -> Bool {
            kind == other.kind && flags == other.flags && sequence == other.sequence && id == other.id
                && typeTag == other.typeTag && offset == other.offset && length == other.length
                && referenceBytes.elementsEqual(other.referenceBytes) && nameBytes.elementsEqual(other.nameBytes)
        }
    }

    /// The hint file's bytes.
    public let bytes: UnsafeRawBufferPointer
    package let segmentNumber: UInt32
    package let segmentSize: UInt64
    /// How many entries the hint holds.
    public let entryCount: Int

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

    /// Whether `other` describes the same segment (number and size) with the same entries, field for
    /// field (the reserved bytes aside).
    package func hasSameEntries(as other: HintReader) -> Bool {
        guard segmentNumber == other.segmentNumber, segmentSize == other.segmentSize, entryCount == other.entryCount,
            let base = bytes.baseAddress, let otherBase = other.bytes.baseAddress
        else { return false }
        var (cursor, otherCursor) = (HintFile.headerSize, HintFile.headerSize)
        for _ in 0..<entryCount {
            let (entry, otherEntry) = (EntryView(base: base, at: cursor), EntryView(base: otherBase, at: otherCursor))
            guard entry.hasSameFields(as: otherEntry) else { return false }
            cursor += entry.size
            otherCursor += otherEntry.size
        }
        return true
    }

    /// The entries as values, in order.
    package var entries: [HintFile.Entry] {
        var entries: [HintFile.Entry] = []
        entries.reserveCapacity(entryCount)
        forEachEntry { entries.append($0.entry) }
        return entries
    }

    /// `HintFile.headerSize`, inlinable (a test checks that they agree).
    @inlinable static var headerSize: Int { 48 }

    /// Calls `body` with every entry, in order.
    @inlinable public func forEachEntry(_ body: (EntryView) -> Void) {
        guard let base = bytes.baseAddress else { return }
        var cursor = Self.headerSize
        for _ in 0..<entryCount {
            let entry = EntryView(base: base, at: cursor)
            body(entry)
            cursor += entry.size
        }
    }
}
