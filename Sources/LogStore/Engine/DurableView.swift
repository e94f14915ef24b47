@_spi(Engine) import LogStoreFormat
@_spi(Engine) import LogStoreSystem

/// The committed state of a store at one point of its log, frozen: what a ``Snapshot`` reads.
///
/// A view is a copy of the parts of ``IndexState`` that readers see (index, durable undo entries,
/// segments, roots, counts). Every one of them is a copy-on-write collection, so taking a view costs a
/// few reference-count increments under the state lock and copies nothing. The writer pays instead, and
/// only while a view is alive: its first change to an index page (1,024 entries, 24 KiB) or to one of
/// the small dictionaries after a view was taken copies that page or dictionary once. This was chosen over
/// a per-entry chain of older locations, which would put a version check on every plain `get` and
/// would have to be trimmed as views end; here a plain `get` does exactly what it did, and a get through a
/// view takes no lock at all.
///
/// The view holds its ``SegmentFile``s, so segments that compaction deletes stay mapped (and their
/// records readable) until the last view that names them ends; records freed by reference counting or
/// mark-sweep stay in the view's index for the same reason. Nothing a view can reach is ever unmapped
/// under it.
struct DurableView: Sendable {
    var index: ObjectIndex
    var durableUndo: [UInt64: IndexEntry]
    var segments: [UInt32: SegmentFile]
    var roots: [String: ObjectID]
    var typeCounts: [UInt32: Int]
    var liveCount: Int
    /// The newest batch whose effects the view includes.
    var sequence: UInt64
    var dictionaries: CompressionDictionaries

    /// The durable entry of `id`: the index's entry unless a batch that is not yet durable changed it,
    /// in which case `undo` holds the durable one (`.empty`: none).
    @inline(__always)
    static func durableEntry(_ id: UInt64, index: ObjectIndex, undo: [UInt64: IndexEntry]) -> IndexEntry? {
        let entry = index.entry(id)
        if let entry, !entry.isPending { return entry }
        if !undo.isEmpty, let entry = undo[id] { return entry.isEmpty ? nil : entry }
        return nil
    }

    /// Calls `body` for every durable live object, in increasing id order: what ``durableEntry(_:index:undo:)``
    /// finds, and nothing else.
    ///
    /// A pending put of a new object has no undo entry (it had no durable version), so an empty `undo` does
    /// not mean that nothing is pending: pending entries are passed over either way.
    static func forEachDurable(
        index: ObjectIndex, undo: [UInt64: IndexEntry], _ body: (UInt64, IndexEntry) -> Void
    ) {
        guard !undo.isEmpty else {
            index.forEachLive { id, entry in
                if !entry.isPending { body(id, entry) }
            }
            return
        }
        var all: [(UInt64, IndexEntry)] = []
        index.forEachLive { id, _ in
            if let durable = durableEntry(id, index: index, undo: undo) { all.append((id, durable)) }
        }
        for (id, entry) in undo where !entry.isEmpty && index.entry(id) == nil { all.append((id, entry)) }
        all.sort { $0.0 < $1.0 }
        for (id, entry) in all { body(id, entry) }
    }

    @inline(__always)
    func entry(_ id: UInt64) -> IndexEntry? {
        Self.durableEntry(id, index: index, undo: durableUndo)
    }

    func forEach(_ body: (UInt64, IndexEntry) -> Void) {
        Self.forEachDurable(index: index, undo: durableUndo, body)
    }
}

extension IndexState {
    /// A frozen copy of what readers see now.
    func durableView() -> DurableView {
        DurableView(
            index: index, durableUndo: durableUndo, segments: segments.files, roots: roots, typeCounts: typeCounts,
            liveCount: liveCount, sequence: publishedSequence, dictionaries: dictionaries)
    }
}
