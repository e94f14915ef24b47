/// The `SEGMENTS` file: the numbers of the segment files the store had when it last changed its set of
/// segments, so open can tell a segment that went missing (deleted or lost by the file system) from
/// one compaction removed on purpose. Specified in `Documentation/Format.md`.
///
/// ```
/// manifest := "LOGSTMAN" u16 version (1), u16 reserved, u32 count, u64 reserved_ids,
///             u32 segment_number[count], u64 XXH3-64 of every byte before it
///
/// `reserved_ids` keeps the id reservation alive when compaction deletes the segments whose
/// `reserveIDs` frames held it.
/// ```
struct SegmentManifest: Equatable {
    static let fileName = "SEGMENTS"
    static let magic: [UInt8] = Array("LOGSTMAN".utf8)
    static let version: UInt16 = 1

    var segments: [UInt32]
    /// Ids below this are reserved.
    var reservedIDs: UInt64

    func encoded() -> [UInt8] {
        var bytes = [UInt8](repeating: 0, count: 24 + segments.count * 4 + 8)
        bytes.withUnsafeMutableBytes { raw in
            guard let base = raw.baseAddress else { return }
            for (index, byte) in Self.magic.enumerated() { raw[index] = byte }
            base.writeLE(Self.version, at: 8)
            base.writeLE(UInt32(segments.count), at: 12)
            base.writeLE(reservedIDs, at: 16)
            for (index, number) in segments.enumerated() { base.writeLE(number, at: 24 + index * 4) }
            let end = 24 + segments.count * 4
            base.writeLE(Checksum.xxh3(UnsafeRawPointer(base), count: end), at: end)
        }
        return bytes
    }

    static func decode(_ raw: UnsafeRawBufferPointer) -> SegmentManifest? {
        guard let base = raw.baseAddress, raw.count >= 32, raw.prefix(8).elementsEqual(magic),
            base.readLE(UInt16.self, at: 8) == version
        else { return nil }
        let count = Int(base.readLE(UInt32.self, at: 12))
        let end = 24 + count * 4
        guard count <= (raw.count - 32) / 4, end + 8 == raw.count,
            base.readLE(UInt64.self, at: end) == Checksum.xxh3(base, count: end),
            base.readLE(UInt64.self, at: 16) <= LogFormat.maxObjectID + 1
        else { return nil }
        return SegmentManifest(
            segments: (0..<count).map { base.readLE(UInt32.self, at: 24 + $0 * 4) },
            reservedIDs: base.readLE(UInt64.self, at: 16))
    }
}
