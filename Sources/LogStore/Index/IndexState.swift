@_spi(Engine) import LogStoreFormat
@_spi(Engine) import LogStoreSystem

/// The index, the segment table, the roots and the counts kept beside them: what readers see and the
/// writer changes. Lives inside the store's state lock.
///
/// Two views share the index. The *logical* view — the index itself, `logicalRoots` and the incoming
/// counts — includes batches the writer has accepted but not yet made durable; the writer validates
/// and collects against it. The *durable* view is what readers see: for an id with pending changes,
/// `durableUndo` holds its durable entry (or `.empty` when it had none), and pending entries carry
/// ``IndexEntry/pendingFlag``. `roots`, `typeCounts`, `liveCount` and the segments' live bytes are durable.
///
/// Who changes what: the durable view's roots and counts, the published sequence and `durableUndo` are
/// `private(set)`: they change only by replay (``applyReplayed(_:)``), by an edit (`apply(_:)` with a
/// ``BatchEdit`` or a ``CompactionEdit``, ``applyFollowed(_:)`` for a batch a follower read) and by the
/// few named methods here. The segment counters change only through ``SegmentTable``'s named methods:
/// from the edits (``BatchEdit``, ``CompactionEdit``, ``SegmentReplayEdit``, a follower's batch) and
/// from the steps that are not batches (a segment created or sealed, a hint written or checked). The
/// edits are extensions of this type in files of their own, which Swift's `private(set)` (the file's)
/// would shut out, so `segments` and `dictionaries` stay settable within the module. The logical view
/// (`index`, `logicalRoots`) stays open to the writer's ``ReferenceTracker`` and ``NewObjectsBatch``, which
/// change it while they validate a batch and undo it when the batch is refused.
struct IndexState: Sendable {
    var index = ObjectIndex()
    /// Durable entries of ids with pending changes (`.empty`: none). A pending entry whose id is
    /// missing here had no durable version.
    private(set) var durableUndo: [UInt64: IndexEntry] = [:]
    /// Every segment and what is known about it.
    var segments = SegmentTable()
    /// Durable named roots.
    private(set) var roots: [String: ObjectID] = [:]
    /// Named roots including pending changes (the writer's view).
    var logicalRoots: [String: ObjectID] = [:]
    /// Sequence number of the newest frame that set or removed each root name (removed names too).
    private(set) var rootSequences: [String: UInt64] = [:]
    /// Durable live objects per type tag, and in all.
    private(set) var typeCounts: [UInt32: Int] = [:]
    private(set) var liveCount = 0
    /// The newest batch whose effects readers see (set when a group is published).
    private(set) var publishedSequence: UInt64 = 0
    private(set) var isOpen = true
    /// The shared compression dictionaries, by id (readers decompress with them).
    var dictionaries = CompressionDictionaries()
    /// Who refers to each object, built on first need (a refused delete, ``Store/referrers(of:)``).
    var referrerIndex = ReferrerIndex()

    // MARK: - The few changes made outside replay and edits

    /// Readers see every batch through `sequence` (the open, a load of the whole store, or a group
    /// published); never goes back.
    mutating func publish(through sequence: UInt64) {
        publishedSequence = max(publishedSequence, sequence)
    }

    /// The store closed: readers are refused from now on, and the segments are let go.
    mutating func close() {
        isOpen = false
        segments.removeAll()
    }

    /// Sets (nil: clears) the durable version kept for `id` while it has pending changes: the writer's
    /// logical view keeps it when a batch first changes the id, and puts back what it was when it rolls a
    /// refused batch back.
    mutating func setDurableUndo(_ id: UInt64, _ entry: IndexEntry?) {
        durableUndo[id] = entry
    }

    // MARK: - Replay (open) and publishing (the leader, after a batch is durable)

    /// Changes to the live objects per small type tag while replaying or publishing, merged into
    /// `typeCounts` by ``finishReplay()`` (under the same lock hold): an array instead of a dictionary
    /// on the hot paths of open and commit.
    private var replayTypeCounts = [Int](repeating: 0, count: 64)
    /// Live bytes added to the segment being replayed, kept aside until ``finishReplay()`` or the
    /// next segment (a dictionary update per record costs more than the rest of replaying it).
    private var replaySegment: UInt32 = 0
    private var replaySegmentBytes: UInt64 = 0

    /// Applies a replayed, durable effect (open: nothing is pending).
    mutating func applyReplayed(_ effect: IndexEffect) {
        switch effect {
        case .put(let id, let entry):
            let old = index.set(id, entry)
            if let old {
                if old.typeTag < 64 { replayTypeCounts[Int(old.typeTag)] -= 1 } else { forgetType(old.typeTag) }
                if old.segment == replaySegment { flushReplayBytes() }
                markDead(old)
            } else {
                liveCount += 1
            }
            remember(entry)
        case .delete(let id):
            if let old = index.remove(id) {
                if old.typeTag < 64 { replayTypeCounts[Int(old.typeTag)] -= 1 } else { forgetType(old.typeTag) }
                if old.segment == replaySegment { flushReplayBytes() }
                markDead(old)
                liveCount -= 1
            }
        case .setRoot, .removeRoot:
            applyRoot(effect)
            logicalRoots = roots
        }
    }

    private mutating func flushReplayBytes() {
        if replaySegmentBytes > 0 {
            let bytes = replaySegmentBytes
            segments.addLive(bytes, to: replaySegment)
        }
        replaySegmentBytes = 0
    }

    /// A live record of `old`'s segment died (superseded or deleted).
    private mutating func markDead(_ old: IndexEntry) {
        segments.recordDeath(of: old)
    }

    /// Merges what replay or a published group counted on the side.
    mutating func finishReplay() {
        flushReplayBytes()
        for (tag, count) in replayTypeCounts.enumerated() where count != 0 {
            let total = typeCounts[UInt32(tag), default: 0] + count
            typeCounts[UInt32(tag)] = total > 0 ? total : nil
            replayTypeCounts[tag] = 0
        }
    }

    private mutating func forgetType(_ tag: UInt32) {
        let remaining = typeCounts[tag, default: 1] - 1
        typeCounts[tag] = remaining > 0 ? remaining : nil
    }

    /// Makes the effect of a batch that just became durable visible to readers.
    mutating func publish(_ effect: IndexEffect) {
        switch effect {
        case .put(let id, let entry):
            let durable = entry.withFlags(entry.flags & ~IndexEntry.pendingFlag)
            if let previous = durableVersion(ofPending: id) { forget(previous) } else { liveCount += 1 }
            remember(durable)
            if let current = index.entry(id), current.isPending, current.isSameRecord(entry) {
                index.set(id, current.withFlags(current.flags & ~IndexEntry.pendingFlag))
                if !durableUndo.isEmpty { durableUndo[id] = nil }
            } else {
                durableUndo[id] = durable
            }
        case .delete(let id):
            if let previous = durableVersion(ofPending: id) {
                forget(previous)
                liveCount -= 1
            }
            if index.entry(id) == nil { durableUndo[id] = nil } else { durableUndo[id] = .empty }
        case .setRoot, .removeRoot:
            applyRoot(effect)
        }
    }

    private mutating func applyRoot(_ effect: IndexEffect) {
        switch effect {
        case .setRoot(let name, let id, let sequence):
            roots[name] = id
            rootSequences[name] = sequence
        case .removeRoot(let name, let sequence):
            roots[name] = nil
            rootSequences[name] = sequence
        default: break
        }
    }

    /// The durable entry of an id whose effect is being published.
    private func durableVersion(ofPending id: UInt64) -> IndexEntry? {
        if !durableUndo.isEmpty, let undo = durableUndo[id] { return undo.isEmpty ? nil : undo }
        return nil
    }

    /// Counts a live entry's type and bytes (replay and publishing).
    @inline(__always)
    private mutating func remember(_ entry: IndexEntry) {
        if entry.typeTag < 64 {
            replayTypeCounts[Int(entry.typeTag)] += 1
        } else {
            typeCounts[entry.typeTag, default: 0] += 1
        }
        // Kept aside while the records go to the same segment (merged by
        // ``finishReplay()`` in the same lock hold).
        if entry.segment != replaySegment {
            flushReplayBytes()
            replaySegment = entry.segment
        }
        replaySegmentBytes += UInt64(entry.length)
    }

    private mutating func forget(_ old: IndexEntry) {
        if old.typeTag < 64 { replayTypeCounts[Int(old.typeTag)] -= 1 } else { forgetType(old.typeTag) }
        if old.segment == replaySegment { flushReplayBytes() }
        markDead(old)
    }
}
