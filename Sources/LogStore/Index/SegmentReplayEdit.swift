/// What replaying one segment at open found besides its records: the counters of the segment, applied
/// once the segment is read (``IndexState/apply(_:)``).
///
/// Replay streams each frame's effect through ``IndexState/applyReplayed(_:)`` as it reads it (holding
/// every effect of a large store would cost far more memory than the index itself); the segment's own
/// counters wait in this value and change the segment table in one step, as a ``BatchEdit`` does for a
/// batch and a ``CompactionEdit`` for a compaction pass.
struct SegmentReplayEdit: Sendable {
    /// The segment replayed (registered in the table before its records).
    let segment: UInt32
    /// Its tombstones and root frames.
    var controlFrames = 0
    /// Its put records that a newer frame superseded.
    var deadRecords = 0
    /// Its lowest sequence number (`.max`: none).
    var minSequence = UInt64.max
    /// Bytes that must stay though no live record holds them (header, seal, reservations, roots, kept
    /// tombstones).
    var retainedBytes: UInt64 = 0
    /// Where its log ends (after a torn tail is cut or ignored).
    var validSize: UInt64 = 0
    /// Set when the segment was rebuilt from its hint file: the hint's checksum, until compaction compares
    /// it with the frames (nil: trusted already).
    var hint: UInt64?? = nil
}

extension IndexState {
    /// Applies what replaying a segment found (after its records' effects).
    mutating func apply(_ edit: SegmentReplayEdit) {
        segments.recordReplayed(edit)
    }
}
