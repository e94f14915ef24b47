/// The `SEGMENTS` file: the numbers of the segment files the store had when it last changed its set of
/// segments, so open can tell a segment that went missing (deleted or lost by the file system) from
/// one compaction removed on purpose; after a clean close, the exact size of the append segment; and the
/// content checksum of each of the store's dictionaries, so a dictionary file that is not the one the
/// store wrote (another store's, or one altered with its checksum fixed) is refused. Specified in
/// `Documentation/Format.md`, section 8.9.
///
/// ```
/// manifest := "LOGSTMAN" u16 version (2 or 3), u16 flags, u32 count, u64 reserved_ids,
///             u32 append_segment, u32 dictionary_count (version 3; else 0), u64 append_size,
///             u32 segment_number[count],
///             (u32 id, u32 content_length, u64 content_checksum)[dictionary_count] (version 3),
///             u64 XXH3-64 of every byte before it
/// ```
///
/// `reserved_ids` keeps the id reservation alive when compaction deletes the segments whose
/// `reserveIDs` frames held it. Flag bit 0 says the store was closed cleanly, with `append_segment`
/// (0: none) of `append_size` bytes. Version 1 (still read) has no flags and no clean-close fields;
/// version 2 (written while a store has no dictionary) no dictionary records.
package struct SegmentManifest: Equatable {
    package static let fileName = "SEGMENTS"
    package static let magic: [UInt8] = Array("LOGSTMAN".utf8)
    /// The version written while the store has no dictionary (readable by readers that know no version 3).
    package static let version: UInt16 = 2
    /// The version written while the store has dictionaries: with their records.
    package static let dictionaryVersion: UInt16 = 3
    package static let cleanCloseFlag: UInt16 = 1
    /// Bytes of one dictionary record.
    package static let dictionaryRecordSize = 16

    /// What the manifest records of one dictionary: its id and the length and XXH3-64 of its content.
    package struct DictionaryRecord: Equatable, Sendable {
        package var id: UInt32
        package var contentLength: UInt32
        package var contentChecksum: UInt64

        package init(id: UInt32, contentLength: UInt32, contentChecksum: UInt64) {
            self.id = id
            self.contentLength = contentLength
            self.contentChecksum = contentChecksum
        }
    }

    /// What a clean close recorded: the append segment (0 when there was none) and its exact size.
    package struct CleanClose: Equatable {
        package var appendSegment: UInt32
        package var appendSize: UInt64

        package init(appendSegment: UInt32, appendSize: UInt64) {
            self.appendSegment = appendSegment
            self.appendSize = appendSize
        }
    }

    package var segments: [UInt32]
    /// Ids below this are reserved.
    package var reservedIDs: UInt64
    /// Set only by a clean close; any open for writing removes it before it writes.
    package var cleanClose: CleanClose?
    /// The store's dictionaries, in increasing id order; nil in a manifest of version 1 or 2, written
    /// before the store had a dictionary or by a version that did not record them (its dictionary files
    /// are then taken as they are).
    package var dictionaries: [DictionaryRecord]?

    package init(
        segments: [UInt32], reservedIDs: UInt64, cleanClose: CleanClose?, dictionaries: [DictionaryRecord]? = nil
    ) {
        self.segments = segments
        self.reservedIDs = reservedIDs
        self.cleanClose = cleanClose
        self.dictionaries = dictionaries
    }

    /// Size of the fixed part before the segment numbers, by version.
    private static func headerSize(_ version: UInt16) -> Int { version == 1 ? 24 : 40 }

    /// The bytes of the manifest: version 3 when it records dictionaries, else version 2.
    package func encoded() -> [UInt8] {
        let records = dictionaries ?? []
        let version = records.isEmpty ? Self.version : Self.dictionaryVersion
        let start = Self.headerSize(version)
        let recordsStart = start + segments.count * 4
        let end = recordsStart + records.count * Self.dictionaryRecordSize
        var bytes = [UInt8](repeating: 0, count: end + 8)
        bytes.withUnsafeMutableBytes { raw in
            guard let base = raw.baseAddress else { return }
            for (index, byte) in Self.magic.enumerated() { raw[index] = byte }
            base.writeLE(version, at: 8)
            base.writeLE(cleanClose == nil ? UInt16(0) : Self.cleanCloseFlag, at: 10)
            base.writeLE(UInt32(segments.count), at: 12)
            base.writeLE(reservedIDs, at: 16)
            base.writeLE(cleanClose?.appendSegment ?? 0, at: 24)
            base.writeLE(UInt32(records.count), at: 28)
            base.writeLE(cleanClose?.appendSize ?? 0, at: 32)
            for (index, number) in segments.enumerated() { base.writeLE(number, at: start + index * 4) }
            for (index, record) in records.enumerated() {
                let at = recordsStart + index * Self.dictionaryRecordSize
                base.writeLE(record.id, at: at)
                base.writeLE(record.contentLength, at: at + 4)
                base.writeLE(record.contentChecksum, at: at + 8)
            }
            base.writeLE(Checksum.xxh3(UnsafeRawPointer(base), count: end), at: end)
        }
        return bytes
    }

    /// Why the file is not valid, and at which offset.
    package typealias Problem = SmallFileProblem

    /// Decodes and checks a manifest of version 1, 2 or 3: magic, version, length, checksum, fields.
    package static func decode(_ raw: UnsafeRawBufferPointer) -> Result<SegmentManifest, Problem> {
        guard let base = raw.baseAddress, raw.count >= 8, raw.prefix(8).elementsEqual(magic) else {
            return .failure(Problem(offset: 0, reason: "damaged segment manifest (wrong magic)"))
        }
        guard raw.count >= 10 else { return .failure(Problem(offset: 8, reason: "segment manifest truncated")) }
        let version = base.readLE(UInt16.self, at: 8)
        guard (1...dictionaryVersion).contains(version) else {
            return .failure(
                Problem(
                    offset: 8, reason: "unsupported segment manifest version \(version)", isUnsupportedVersion: true))
        }
        let start = headerSize(version)
        guard raw.count >= start + 8 else {
            return .failure(
                Problem(offset: UInt64(raw.count), reason: "segment manifest truncated (\(raw.count) bytes)"))
        }
        let count = Int(base.readLE(UInt32.self, at: 12))
        let dictionaryCount = version >= dictionaryVersion ? Int(base.readLE(UInt32.self, at: 28)) : 0
        let recordsStart = start + count * 4
        let end = recordsStart + dictionaryCount * dictionaryRecordSize
        guard count <= (raw.count - start - 8) / 4,
            dictionaryCount <= (raw.count - start - 8) / dictionaryRecordSize, end + 8 == raw.count
        else {
            return .failure(
                Problem(
                    offset: 12,
                    reason: "damaged segment manifest: \(count) segment numbers and \(dictionaryCount) dictionary "
                        + "records do not fit its \(raw.count) bytes"))
        }
        guard base.readLE(UInt64.self, at: end) == Checksum.xxh3(base, count: end) else {
            return .failure(Problem(offset: UInt64(end), reason: "damaged segment manifest (checksum mismatch)"))
        }
        guard base.readLE(UInt64.self, at: 16) <= LogFormat.maxObjectID + 1 else {
            return .failure(
                Problem(offset: 16, reason: "damaged segment manifest: reserved ids beyond the largest object id"))
        }
        var cleanClose: CleanClose?
        if version >= 2, base.readLE(UInt16.self, at: 10) & cleanCloseFlag != 0 {
            cleanClose = CleanClose(
                appendSegment: base.readLE(UInt32.self, at: 24), appendSize: base.readLE(UInt64.self, at: 32))
        }
        var dictionaries: [DictionaryRecord]?
        if version >= dictionaryVersion {
            var records: [DictionaryRecord] = []
            for index in 0..<dictionaryCount {
                let at = recordsStart + index * dictionaryRecordSize
                let record = DictionaryRecord(
                    id: base.readLE(UInt32.self, at: at), contentLength: base.readLE(UInt32.self, at: at + 4),
                    contentChecksum: base.readLE(UInt64.self, at: at + 8))
                guard record.id > (records.last?.id ?? 0) else {
                    return .failure(
                        Problem(
                            offset: UInt64(at),
                            reason: "damaged segment manifest: dictionary ids not increasing from 1"))
                }
                records.append(record)
            }
            dictionaries = records
        }
        return .success(
            SegmentManifest(
                segments: (0..<count).map { base.readLE(UInt32.self, at: start + $0 * 4) },
                reservedIDs: base.readLE(UInt64.self, at: 16), cleanClose: cleanClose, dictionaries: dictionaries))
    }
}
