@_spi(Engine) import LogStoreFormat
@_spi(Engine) import LogStoreSystem

/// Everything one committed batch changes in the durable state, as one value: its index effects in
/// order, where its frames went and the segment counters they move, and the description observers and
/// the committer receive (``CommittedBatch``).
///
/// The commit leader makes a batch's effects visible to readers only by applying its edit
/// (``IndexState/apply(_:)``), once the batch is written (and synced, per policy).
struct BatchEdit: Sendable {
    /// The batch's sequence number.
    var sequence: UInt64
    /// The index effects of its frames, in frame order (puts, user deletes, root changes, then the
    /// tombstones of what it freed).
    var effects: [IndexEffect]
    /// The segment its frames went to (a batch never spans segments) and the end of its last frame.
    var segment: UInt32
    var endOffset: UInt64
    /// Bytes of its id-reservation and root frames: retained, never garbage while they are the newest.
    var retainedBytes: UInt64
    /// Its tombstones and root frames.
    var controlFrames: Int
    /// What the batch did, as observers see it.
    var committed: CommittedBatch
}

extension IndexState {
    /// Makes a batch that just became durable visible to readers: its effects, and the counters of the
    /// segment that holds it. Call ``finishReplay()`` after the last edit of a lock hold.
    mutating func apply(_ edit: BatchEdit) {
        for effect in edit.effects { publish(effect) }
        // The first sequence matters also for a segment that held no frame when the store was opened:
        // compaction keeps a tombstone while an older copy may be elsewhere.
        segments.recordBatch(
            edit.segment, endOffset: edit.endOffset, sequence: edit.sequence, controlFrames: edit.controlFrames,
            retainedBytes: edit.retainedBytes)
        publish(through: edit.sequence)
    }
}
