@_spi(Engine) import LogStoreFormat
@_spi(Engine) import LogStoreSystem

/// What one step of a compaction pass changes in the index and the segment table, as one value: the
/// segments it adds (with their counters), the records it moves, and the segments it removes.
///
/// A pass installs its outputs in several lock holds so readers wait little: one edit adds an output,
/// then edits of at most ``movesPerHold`` moves each point the index at the copies, then one edit removes
/// the inputs (and, when they cannot be deleted, one adds them back as segments of garbage only). Each is
/// applied by ``IndexState/apply(_:)-(CompactionEdit)`` under one hold of the index lock.
struct CompactionEdit: Sendable {
    /// A record copied from one place to another: the index follows it only while it still names the
    /// old place (the writer may have replaced or deleted the object meanwhile).
    typealias Move = (id: UInt64, from: IndexEntry, to: IndexEntry)

    /// The most moves one edit (one hold of the index lock) applies.
    static let movesPerHold = 8192

    /// Segments added to the table with the counters they start with (none of them is in the table yet).
    var added: [SegmentInfo] = []
    /// Records moved; their live bytes go from the old segment to the new one.
    var moved: ArraySlice<Move> = []
    /// Segments removed from the table with everything known about them.
    var removed: [UInt32] = []
}

extension IndexState {
    /// Applies one step of a compaction pass: adds its segments, moves its records (each only while the
    /// index still names the record's old place, see ``relocate(_:from:to:)``), then removes its segments.
    mutating func apply(_ edit: CompactionEdit) {
        for info in edit.added { segments.install(info) }
        for move in edit.moved { relocate(move.id, from: move.from, to: move.to) }
        for number in edit.removed { segments.remove(number) }
    }

    /// Points a live object at an identical copy of its durable record (compaction): only while the
    /// index (or, for an id with pending changes, its durable undo entry) still names `old`.
    private mutating func relocate(_ id: UInt64, from old: IndexEntry, to new: IndexEntry) {
        if let current = index.entry(id), !current.isPending, current.isSameRecord(old) {
            index.set(
                id,
                IndexEntry(
                    segment: new.segment, offset: new.offset, length: new.length, typeTag: current.typeTag,
                    incoming: current.incoming, flags: current.flags))
        } else if let undo = durableUndo[id], !undo.isEmpty, undo.isSameRecord(old) {
            setDurableUndo(
                id,
                IndexEntry(
                    segment: new.segment, offset: new.offset, length: new.length, typeTag: undo.typeTag,
                    incoming: undo.incoming, flags: undo.flags))
        } else {
            return
        }
        segments.moveLive(from: old, to: new)
    }
}
