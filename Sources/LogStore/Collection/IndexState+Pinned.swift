@_spi(Engine) import LogStoreFormat
@_spi(Engine) import LogStoreSystem

/// The collector's question before it frees an object: is it pinned? A durable entry's pinned flag may
/// come from a hint file, which open trusts without reading the segment; the frame on disk decides then.
/// Entries from a scan, from writes since the open or from a hint found true carry their frame's flag.
extension IndexState {
    /// The references of the object `id` of `entry` when it may be freed, nil when it must be kept as
    /// pinned: its entry says so, or its flag may come from a hint not found true (the segment has an
    /// unchecked or disagreeing hint) and its frame is a pinned put (the entry is then repaired, see
    /// ``repairPinned(_:_:)``) or cannot be read as a put of `id` (then nothing tells that it is not
    /// pinned, and it is spared). One decode of the frame gives both the flag and the references.
    /// `placeholder` gives the references of an entry of the batch being applied (segment 0).
    mutating func referencesUnlessPinned(
        _ id: UInt64, _ entry: IndexEntry, pendingIn chunks: [PendingChunk], placeholder: (IndexEntry) -> [ObjectID]
    ) -> [ObjectID]? {
        if entry.isPinned { return nil }
        if entry.segment == 0 { return placeholder(entry) }
        if entry.isPending { return references(of: entry, pendingIn: chunks) }
        guard let file = segments.file(entry.segment) else { return nil }
        guard flagMayComeFromHint(entry.segment) else { return references(of: entry) }
        guard let frame = Self.putFrame(id, entry, in: file) else { return nil }
        if frame.frame.flags.contains(.pinned) {
            repairPinned(id, entry)
            return nil
        }
        return FrameDecoder.references(of: frame.frame, in: frame.bytes)
    }

    /// Whether entries of `segment` may carry a pinned flag that no frame confirmed: its records came from
    /// a hint that was not yet compared with the segment, or that disagrees with it.
    func flagMayComeFromHint(_ segment: UInt32) -> Bool {
        guard let info = segments[segment] else { return true }
        return info.unverifiedHint != nil || info.hintDisagrees
    }

    /// Whether the frame `entry` points at in `file` is a pinned put of `id`; nil when it is not a valid
    /// put frame of `id` of the entry's length.
    static func framePinned(_ id: UInt64, _ entry: IndexEntry, in file: SegmentFile) -> Bool? {
        putFrame(id, entry, in: file).map { $0.frame.flags.contains(.pinned) }
    }

    /// The put frame of `id` that `entry` points at in `file`, checksum checked, and the mapped bytes it
    /// lies in; nil when it is not a valid put frame of `id` of the entry's length.
    private static func putFrame(_ id: UInt64, _ entry: IndexEntry, in file: SegmentFile) -> (
        frame: DecodedFrame, bytes: UnsafeRawBufferPointer
    )? {
        let end = Int(entry.offset) + Int(entry.length)
        guard end <= file.mappedLength else { return nil }
        let bytes = file.bytes(count: end)
        guard
            case .success(let frame) = FrameDecoder.decode(
                bytes, at: Int(entry.offset), format: file.format, verifyChecksum: true),
            frame.kind == .put, frame.id == id, frame.length == Int(entry.length)
        else { return nil }
        return (frame, bytes)
    }

    /// Marks `id` pinned, as its frame says, when its entry is still `entry` (a durable record whose flag
    /// came from a hint file that left it out). That hint is wrong: the segment is marked as disagreeing
    /// with its hint (``SegmentInfo/hintDisagrees``: no compaction or mark-sweep pass frees or drops
    /// anything until the store is opened again, since the index may be wrong elsewhere too) and its hint
    /// file is rewritten from the segment's frames (``SegmentInfo/hasHint``).
    mutating func repairPinned(_ id: UInt64, _ entry: IndexEntry) {
        guard var current = index.entry(id), current.isSameRecord(entry), !current.isPending else { return }
        current.flags |= IndexEntry.pinnedFlag
        index.set(id, current)
        segments.recordHintDisagrees(entry.segment)
    }
}
