@_spi(Engine) import LogStoreFormat
@_spi(Engine) import LogStoreSystem

/// What a compaction pass decided before it copies anything: the inputs' live records (taken from the
/// index in one pass), which inputs are copied from the index alone, and what the outputs start with.
struct CompactionPlan {
    /// The numbers of the inputs.
    let numbers: Set<UInt32>
    /// Bytes of the inputs, for the progress figures.
    let total: UInt64
    /// What the outputs will hold, about: the live bytes of the inputs (their page cache is made ahead of
    /// the copy; an estimate too high only leaves a hole that is cut back).
    let liveTotal: UInt64
    /// The id reservation and the newest durable sequence every output starts with.
    let reservation: (reservedIDs: UInt64, durableSequence: UInt64)
    /// Every live record of the inputs, by segment: each must be copied before its segment may go. Each
    /// list is taken out as its segment is copied, so it is sorted in place rather than copied.
    var live: [UInt32: [(UInt64, IndexEntry)]]
    /// Inputs without tombstones and root frames: compacted from the index alone, without reading their
    /// dead records.
    let indexOnly: Set<UInt32>
    /// The live records of those.
    let indexOnlyRecords: Int
    /// The oldest sequence number the outputs may hold: their frames are written against it.
    let outputBase: UInt64
    /// Copies whose payloads predate the newest dictionary are compressed against it.
    let recompression: CompactionOutput.Recompression?
}
