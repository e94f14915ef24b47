/// The `SEGMENTS` file: the numbers of the segment files the store had when it last changed its set of
/// segments, so open can tell a segment that went missing (deleted or lost by the file system) from
/// one compaction removed on purpose; and, after a clean close, the exact size of the append segment.
/// Specified in `Documentation/Format.md`.
///
/// ```
/// manifest := "LOGSTMAN" u16 version (2), u16 flags, u32 count, u64 reserved_ids,
///             u32 append_segment, u32 reserved, u64 append_size,
///             u32 segment_number[count], u64 XXH3-64 of every byte before it
/// ```
///
/// `reserved_ids` keeps the id reservation alive when compaction deletes the segments whose
/// `reserveIDs` frames held it. Flag bit 0 says the store was closed cleanly, with `append_segment`
/// (0: none) of `append_size` bytes. Version 1 (still read) has no flags and no clean-close fields.
package struct SegmentManifest: Equatable {
    package static let fileName = "SEGMENTS"
    package static let magic: [UInt8] = Array("LOGSTMAN".utf8)
    package static let version: UInt16 = 2
    package static let cleanCloseFlag: UInt16 = 1

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

    package init(segments: [UInt32], reservedIDs: UInt64, cleanClose: CleanClose?) {
        self.segments = segments
        self.reservedIDs = reservedIDs
        self.cleanClose = cleanClose
    }

    /// Size of the fixed part before the segment numbers, by version.
    private static func headerSize(_ version: UInt16) -> Int { version == 1 ? 24 : 40 }

    package func encoded() -> [UInt8] {
        let start = Self.headerSize(Self.version)
        var bytes = [UInt8](repeating: 0, count: start + segments.count * 4 + 8)
        bytes.withUnsafeMutableBytes { raw in
            guard let base = raw.baseAddress else { return }
            for (index, byte) in Self.magic.enumerated() { raw[index] = byte }
            base.writeLE(Self.version, at: 8)
            base.writeLE(cleanClose == nil ? UInt16(0) : Self.cleanCloseFlag, at: 10)
            base.writeLE(UInt32(segments.count), at: 12)
            base.writeLE(reservedIDs, at: 16)
            base.writeLE(cleanClose?.appendSegment ?? 0, at: 24)
            base.writeLE(cleanClose?.appendSize ?? 0, at: 32)
            for (index, number) in segments.enumerated() { base.writeLE(number, at: start + index * 4) }
            let end = start + segments.count * 4
            base.writeLE(Checksum.xxh3(UnsafeRawPointer(base), count: end), at: end)
        }
        return bytes
    }

    /// Why the file is not valid, and at which offset.
    package typealias Problem = SmallFileProblem

    /// Decodes and checks a manifest of version 1 or 2: magic, version, length, checksum.
    package static func decode(_ raw: UnsafeRawBufferPointer) -> Result<SegmentManifest, Problem> {
        guard let base = raw.baseAddress, raw.count >= 8, raw.prefix(8).elementsEqual(magic) else {
            return .failure(Problem(offset: 0, reason: "damaged segment manifest (wrong magic)"))
        }
        guard raw.count >= 10 else { return .failure(Problem(offset: 8, reason: "segment manifest truncated")) }
        let version = base.readLE(UInt16.self, at: 8)
        guard version == 1 || version == 2 else {
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
        let end = start + count * 4
        guard count <= (raw.count - start - 8) / 4, end + 8 == raw.count else {
            return .failure(
                Problem(
                    offset: 12,
                    reason: "damaged segment manifest: \(count) segment numbers do not fit its \(raw.count) bytes"))
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
        return .success(
            SegmentManifest(
                segments: (0..<count).map { base.readLE(UInt32.self, at: start + $0 * 4) },
                reservedIDs: base.readLE(UInt64.self, at: 16), cleanClose: cleanClose))
    }
}
