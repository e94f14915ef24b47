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
        /// The entry's size in bytes.
        public let size: Int
        /// The frame kind.
        public let kind: FrameKind
        /// The frame flags.
        public let flags: FrameFlags
        /// The sequence number of the batch that wrote the frame.
        public let sequence: UInt64
        /// The object id (for a seal frame, its offset; for a reservation, the first id not reserved).
        public let id: UInt64
        /// The application's type tag (puts).
        public let typeTag: UInt32
        /// Where the frame starts in its segment.
        public let offset: UInt32
        /// The frame's length in bytes.
        public let length: UInt32
        /// How many references the frame has.
        public let referenceCount: Int
        /// Where the references start in the hint.
        public let referencesAt: Int
        /// The references' size in bytes.
        public let referencesLength: Int
        /// The root name's length in bytes (root frames; 0 otherwise).
        public let nameLength: Int
        /// Whether the entry is in the layout of version 2 (references as varint deltas).
        public let isCompact: Bool

        @inlinable init(
            base: UnsafeRawPointer, at: Int, size: Int, kind: FrameKind, flags: FrameFlags, sequence: UInt64,
            id: UInt64, typeTag: UInt32, offset: UInt32, length: UInt32, referenceCount: Int, referencesAt: Int,
            referencesLength: Int, nameLength: Int, isCompact: Bool
        ) {
            self.base = base
            self.at = at
            self.size = size
            self.kind = kind
            self.flags = flags
            self.sequence = sequence
            self.id = id
            self.typeTag = typeTag
            self.offset = offset
            self.length = length
            self.referenceCount = referenceCount
            self.referencesAt = referencesAt
            self.referencesLength = referencesLength
            self.nameLength = nameLength
            self.isCompact = isCompact
        }

        /// `HintFile.entrySize`, inlinable (a test checks that they agree).
        @inlinable static var fixedSize: Int { 40 }

        /// The version-1 entry at `at` (checked by ``HintReader/open(_:)`` before it is read).
        @inlinable static func fixed(base: UnsafeRawPointer, at: Int) -> EntryView {
            let referenceCount = Int(base.readLE(UInt32.self, at: at + 4))
            let nameLength = Int(base.readLE(UInt32.self, at: at + 36))
            return EntryView(
                base: base, at: at, size: fixedSize + referenceCount * 8 + nameLength,
                kind: FrameKind(byte: base.load(fromByteOffset: at, as: UInt8.self)) ?? .put,
                flags: FrameFlags(rawValue: base.load(fromByteOffset: at + 1, as: UInt8.self)),
                sequence: base.readLE(UInt64.self, at: at + 8), id: base.readLE(UInt64.self, at: at + 16),
                typeTag: base.readLE(UInt32.self, at: at + 24), offset: base.readLE(UInt32.self, at: at + 28),
                length: base.readLE(UInt32.self, at: at + 32), referenceCount: referenceCount,
                referencesAt: at + fixedSize, referencesLength: referenceCount * 8, nameLength: nameLength,
                isCompact: false)
        }

        /// The version-2 entry at `at`, the one after an entry of `previous` (sequence, id, and where its
        /// frame ends), or nil when the bytes up to `end` are not one. Ranges are checked by the reader.
        @inlinable static func compact(
            base: UnsafeRawPointer, at: Int, end: Int, previous: (sequence: UInt64, id: UInt64, frameEnd: UInt64)
        ) -> EntryView? {
            guard at < end else { return nil }
            let head = base.load(fromByteOffset: at, as: UInt8.self)
            guard let kind = FrameKind(byte: head & 0x07) else { return nil }
            var cursor = at + 1
            guard let sequenceDelta = VarInt.read(base, at: &cursor, end: end),
                let idDelta = VarInt.read(base, at: &cursor, end: end),
                let typeTag = VarInt.read(base, at: &cursor, end: end), typeTag <= UInt64(UInt32.max),
                let length = VarInt.read(base, at: &cursor, end: end), length <= UInt64(UInt32.max)
            else { return nil }
            var offset = previous.frameEnd
            if head & 0x80 != 0 {
                guard let explicit = VarInt.read(base, at: &cursor, end: end) else { return nil }
                offset = explicit
            }
            guard offset <= UInt64(UInt32.max), let count = VarInt.read(base, at: &cursor, end: end),
                count <= UInt64(1 << 16)
            else { return nil }
            let id = VarInt.applying(idDelta, to: previous.id)
            let referencesAt = cursor
            for _ in 0..<count { guard VarInt.read(base, at: &cursor, end: end) != nil else { return nil } }
            let referencesLength = cursor - referencesAt
            let kindByte = head & 0x07
            var nameLength = 0
            // setRoot and removeRoot entries carry the root's name.
            if kindByte == 3 || kindByte == 4 {
                guard let name = VarInt.read(base, at: &cursor, end: end), name <= UInt64(end - cursor) else {
                    return nil
                }
                nameLength = Int(name)
                cursor += nameLength
            }
            return EntryView(
                base: base, at: at, size: cursor - at, kind: kind, flags: FrameFlags(rawValue: (head >> 3) & 0x0F),
                sequence: VarInt.applying(sequenceDelta, to: previous.sequence), id: id, typeTag: UInt32(typeTag),
                offset: UInt32(offset), length: UInt32(length), referenceCount: Int(count), referencesAt: referencesAt,
                referencesLength: referencesLength, nameLength: nameLength, isCompact: true)
        }

        /// The version-2 entry at `at`, read without any check: only for bytes that
        /// ``compact(base:at:end:previous:)`` read as a valid entry before (``HintReader/open(_:)`` checks
        /// every entry of the file once, and the hint's mapping never changes). Open reads ten million
        /// entries twice with it.
        @inlinable @inline(__always) static func trusted(
            base: UnsafeRawPointer, at: Int, previous: (sequence: UInt64, id: UInt64, frameEnd: UInt64)
        ) -> EntryView {
            let head = base.load(fromByteOffset: at, as: UInt8.self)
            var cursor = at + 1
            let sequenceDelta = VarInt.readTrusted(base, at: &cursor)
            let idDelta = VarInt.readTrusted(base, at: &cursor)
            let typeTag = VarInt.readTrusted(base, at: &cursor)
            let length = VarInt.readTrusted(base, at: &cursor)
            let offset = head & 0x80 != 0 ? VarInt.readTrusted(base, at: &cursor) : previous.frameEnd
            let count = Int(truncatingIfNeeded: VarInt.readTrusted(base, at: &cursor))
            let referencesAt = cursor
            for _ in 0..<count {
                while base.load(fromByteOffset: cursor, as: UInt8.self) >= 0x80 { cursor += 1 }
                cursor += 1
            }
            let referencesLength = cursor - referencesAt
            let kindByte = head & 0x07
            var nameLength = 0
            if kindByte == 3 || kindByte == 4 {
                nameLength = Int(truncatingIfNeeded: VarInt.readTrusted(base, at: &cursor))
                cursor += nameLength
            }
            return EntryView(
                base: base, at: at, size: cursor - at, kind: FrameKind(byte: kindByte) ?? .put,
                flags: FrameFlags(rawValue: (head >> 3) & 0x0F),
                sequence: VarInt.applying(sequenceDelta, to: previous.sequence),
                id: VarInt.applying(idDelta, to: previous.id), typeTag: UInt32(truncatingIfNeeded: typeTag),
                offset: UInt32(truncatingIfNeeded: offset), length: UInt32(truncatingIfNeeded: length),
                referenceCount: count, referencesAt: referencesAt, referencesLength: referencesLength,
                nameLength: nameLength, isCompact: true)
        }

        /// Calls `body` with every reference, in order.
        @inlinable public func forEachReference(_ body: (UInt64) -> Void) {
            if isCompact {
                // Checked by ``HintReader/open(_:)``, like the rest of the entry.
                var cursor = referencesAt
                var previous = id
                for _ in 0..<referenceCount {
                    previous = VarInt.applying(VarInt.readTrusted(base, at: &cursor), to: previous)
                    body(previous)
                }
            } else {
                for index in 0..<referenceCount { body(base.readLE(UInt64.self, at: referencesAt + index * 8)) }
            }
        }

        /// The references as stored (`8 × referenceCount` bytes of `u64`s, or varint deltas).
        package var referenceBytes: UnsafeRawBufferPointer {
            UnsafeRawBufferPointer(start: base + referencesAt, count: referencesLength)
        }

        /// The root name's bytes (empty but for root frames).
        package var nameBytes: UnsafeRawBufferPointer {
            UnsafeRawBufferPointer(start: base + at + size - nameLength, count: nameLength)
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
                && referenceCount == other.referenceCount && isCompact == other.isCompact
                && referenceBytes.elementsEqual(other.referenceBytes) && nameBytes.elementsEqual(other.nameBytes)
        }
    }

    /// The hint file's bytes.
    public let bytes: UnsafeRawBufferPointer
    package let segmentNumber: UInt32
    package let segmentSize: UInt64
    /// How many entries the hint holds.
    public let entryCount: Int
    /// Whether the entries are in the layout of version 2.
    public let isCompact: Bool
    /// Whether the entries' frames follow each other without a gap, the first at the end of the segment
    /// header: as in every hint a writer makes (a sealed segment holds nothing but committed frames and
    /// its seal).
    package let isContiguous: Bool
    /// Where the last entry's frame ends (the end of the segment header when there is no entry): where a
    /// contiguous hint says the seal frame is.
    package let framesEnd: UInt64

    /// Checks the header, the checksum and every entry's bounds, kind and ranges.
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
        let version = base.readLE(UInt16.self, at: 8)
        guard version == HintFile.version || version == HintFile.compactVersion,
            Int(base.readLE(UInt16.self, at: 10)) == HintFile.headerSize
        else { return .failure(HintProblem("unsupported hint version \(version)")) }
        let isCompact = version == HintFile.compactVersion
        let number = base.readLE(UInt64.self, at: 16)
        let count = base.readLE(UInt64.self, at: 32)
        let smallestEntry = isCompact ? HintFile.compactMinimumEntrySize : HintFile.entrySize
        guard number > 0, number <= UInt64(UInt32.max), count <= UInt64(checked / smallestEntry) else {
            return .failure(HintProblem("impossible hint header field"))
        }
        let segmentSize = base.readLE(UInt64.self, at: 24)
        var cursor = HintFile.headerSize
        var previous = (sequence: UInt64(0), id: UInt64(0), frameEnd: UInt64(LogFormat.segmentHeaderSize))
        var isContiguous = true
        for _ in 0..<count {
            let decoded: EntryView?
            if isCompact {
                decoded = EntryView.compact(base: base, at: cursor, end: checked, previous: previous)
            } else if cursor + HintFile.entrySize <= checked,
                FrameKind(rawValue: base.load(fromByteOffset: cursor, as: UInt8.self)) != nil
            {
                decoded = EntryView.fixed(base: base, at: cursor)
            } else {
                decoded = nil
            }
            guard let entry = decoded else { return .failure(HintProblem("invalid hint entry at byte \(cursor)")) }
            let frameEnd = UInt64(entry.offset) + UInt64(entry.length)
            guard entry.offset >= LogFormat.segmentHeaderSize, entry.length >= HintFile.minimumFrameSize(isCompact),
                frameEnd <= segmentSize
            else {
                return .failure(
                    HintProblem(
                        "invalid hint entry at byte \(cursor): frame at \(entry.offset) of \(entry.length) bytes is"
                            + " outside the segment's \(segmentSize) bytes"))
            }
            guard FrameFlags.known.isSuperset(of: entry.flags),
                entry.referenceCount <= LogStoreLimits.maxReferenceCount,
                entry.nameLength <= LogStoreLimits.maxRootNameLength, cursor + entry.size <= checked
            else { return .failure(HintProblem("invalid hint entry at byte \(cursor)")) }
            if let problem = FrameDecoder.rangeProblem(kind: entry.kind, sequence: entry.sequence, id: entry.id) {
                return .failure(HintProblem("invalid hint entry at byte \(cursor): \(problem)"))
            }
            if UInt64(entry.offset) != previous.frameEnd { isContiguous = false }
            previous = (entry.sequence, entry.id, frameEnd)
            cursor += entry.size
        }
        guard cursor == checked else { return .failure(HintProblem("hint has \(checked - cursor) stray bytes")) }
        return .success(
            HintReader(
                bytes: bytes, segmentNumber: UInt32(number), segmentSize: segmentSize, entryCount: Int(count),
                isCompact: isCompact, isContiguous: isContiguous, framesEnd: previous.frameEnd))
    }

    /// Whether `other` describes the same segment (number and size) with the same entries, field for
    /// field (the reserved bytes aside).
    package func hasSameEntries(as other: HintReader) -> Bool {
        guard segmentNumber == other.segmentNumber, segmentSize == other.segmentSize, entryCount == other.entryCount,
            isCompact == other.isCompact
        else { return false }
        var mine: [EntryView] = []
        mine.reserveCapacity(entryCount)
        forEachEntry { mine.append($0) }
        var index = 0
        var same = true
        other.forEachEntry { theirs in
            if same, index < mine.count { same = mine[index].hasSameFields(as: theirs) }
            index += 1
        }
        return same && index == mine.count
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
    /// `LogFormat.segmentHeaderSize`, where a segment's first frame starts; inlinable (a test checks it).
    @inlinable static var firstFrameOffset: UInt64 { 48 }

    /// Calls `body` with every entry, in order (checked by ``open(_:)``).
    @inlinable public func forEachEntry(_ body: (EntryView) -> Void) {
        guard let base = bytes.baseAddress else { return }
        var cursor = Self.headerSize
        if isCompact {
            var previous = (sequence: UInt64(0), id: UInt64(0), frameEnd: Self.firstFrameOffset)
            for _ in 0..<entryCount {
                let entry = EntryView.trusted(base: base, at: cursor, previous: previous)
                body(entry)
                previous = (entry.sequence, entry.id, UInt64(entry.offset) + UInt64(entry.length))
                cursor += entry.size
            }
        } else {
            for _ in 0..<entryCount {
                let entry = EntryView.fixed(base: base, at: cursor)
                body(entry)
                cursor += entry.size
            }
        }
    }
}
