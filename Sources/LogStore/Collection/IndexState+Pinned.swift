@_spi(Engine) import LogStoreFormat
@_spi(Engine) import LogStoreSystem

/// The collector's question before it frees an object: is it pinned? A durable entry's pinned flag may
/// come from a hint file, which open trusts without reading the segment; the frame on disk decides.
extension IndexState {
    /// Whether the object `id` of `entry` must be kept as pinned: its entry says so, or the entry is
    /// durable and its frame in the segment is a pinned put (the entry is then repaired, see
    /// ``repairPinned(_:_:)``), or that frame cannot be read as a put of `id` (then nothing tells that it
    /// is not pinned, and it is spared).
    mutating func keepsAsPinned(_ id: UInt64, _ entry: IndexEntry) -> Bool {
        if entry.isPinned { return true }
        // A pending entry, or a placeholder of the batch being applied: made in this session, from the
        // batch's own flag.
        guard !entry.isPending, entry.segment != 0 else { return false }
        guard let file = segments.file(entry.segment) else { return true }
        let verdict = Self.framePinned(id, entry, in: file)
        if verdict == true { repairPinned(id, entry) }
        return verdict ?? true
    }

    /// Whether the frame `entry` points at in `file` is a pinned put of `id`; nil when it is not a valid
    /// put frame of `id` of the entry's length.
    static func framePinned(_ id: UInt64, _ entry: IndexEntry, in file: SegmentFile) -> Bool? {
        let end = Int(entry.offset) + Int(entry.length)
        guard end <= file.mappedLength,
            case .success(let frame) = FrameDecoder.decode(
                file.bytes(count: end), at: Int(entry.offset), format: file.format, verifyChecksum: true),
            frame.kind == .put, frame.id == id, frame.length == Int(entry.length)
        else { return nil }
        return frame.flags.contains(.pinned)
    }

    /// Marks `id` pinned, as its frame says, when its entry is still `entry` (a durable record whose flag
    /// came from a hint file that left it out), and marks the segment's hint file for rewriting from the
    /// segment (``SegmentInfo/hasHint``).
    mutating func repairPinned(_ id: UInt64, _ entry: IndexEntry) {
        guard var current = index.entry(id), current.isSameRecord(entry), !current.isPending else { return }
        current.flags |= IndexEntry.pinnedFlag
        index.set(id, current)
        segments.update(entry.segment) { $0.hasHint = false }
    }
}
