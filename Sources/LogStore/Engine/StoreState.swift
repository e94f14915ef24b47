import LogStoreFormat
import LogStoreSystem

/// A change to the durable state of a store, produced by a committed frame.
enum IndexEffect: Sendable {
    case put(id: UInt64, entry: IndexEntry)
    case delete(id: UInt64)
    case setRoot(String, ObjectID, sequence: UInt64)
    case removeRoot(String, sequence: UInt64)
}

/// The index, the open segments, the roots and the counters kept beside them. Lives inside the
/// store's `Mutex`.
///
/// Two views share the index. The *logical* view — the index itself, `logicalRoots` and the incoming
/// counts — includes batches the writer has accepted but not yet made durable; the writer validates
/// and collects against it. The *durable* view is what readers see: for an id with pending changes,
/// `durableUndo` holds its durable entry (or `.empty` when it had none), and pending entries carry
/// ``IndexEntry/pendingFlag``. `roots`, `typeCounts`, `liveCount` and `liveBytes` are durable.
struct StoreState: Sendable {
    var index = ObjectIndex()
    /// Durable entries of ids with pending changes (`.empty`: none). A pending entry whose id is
    /// missing here had no durable version.
    var durableUndo: [UInt64: IndexEntry] = [:]
    var segments: [UInt32: SegmentFile] = [:]
    /// Bytes written to each segment (header included).
    var segmentSizes: [UInt32: UInt64] = [:]
    /// Bytes of each segment that hold the durable record of a live object.
    var liveBytes: [UInt32: UInt64] = [:]
    /// Bytes of compaction outputs that must stay but hold no live record: header, kept tombstones,
    /// root frames, the id reservation and the seal. Not garbage, so never a reason to compact again.
    var retainedBytes: [UInt32: UInt64] = [:]

    /// Bytes of `segment` that compaction could reclaim.
    func garbageBytes(of segment: UInt32) -> UInt64 {
        let size = segmentSizes[segment] ?? 0
        let kept = (liveBytes[segment] ?? 0) + (retainedBytes[segment] ?? UInt64(LogFormat.segmentHeaderSize))
        return size - min(size, kept)
    }
    /// Durable named roots.
    var roots: [String: ObjectID] = [:]
    /// Named roots including pending changes (the writer's view).
    var logicalRoots: [String: ObjectID] = [:]
    /// Sequence number of the newest frame that set or removed each root name (removed names too).
    var rootSequences: [String: UInt64] = [:]
    /// Lowest sequence number of a frame in each segment (for deciding when a tombstone may go).
    var segmentMinSequence: [UInt32: UInt64] = [:]
    /// Number of dead (superseded or deleted) put records in each segment: a segment without any
    /// cannot hold an older copy of a deleted object.
    var deadRecords: [UInt32: Int] = [:]
    /// Tombstones and root frames in each segment: a segment without any can be compacted from the
    /// index alone, without reading its dead records.
    var controlFrames: [UInt32: Int] = [:]
    /// Segments that have a valid hint file.
    var hinted: Set<UInt32> = []
    /// Durable live objects per type tag, and in all.
    var typeCounts: [UInt32: Int] = [:]
    var liveCount = 0
    /// The newest batch whose effects readers see (set when a group is published).
    var publishedSequence: UInt64 = 0
    var isOpen = true

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
                liveBytes[old.segment, default: UInt64(old.length)] -= UInt64(old.length)
                deadRecords[old.segment, default: 0] += 1
            } else {
                liveCount += 1
            }
            if entry.typeTag < 64 {
                replayTypeCounts[Int(entry.typeTag)] += 1
            } else {
                typeCounts[entry.typeTag, default: 0] += 1
            }
            if entry.segment != replaySegment {
                flushReplayBytes()
                replaySegment = entry.segment
            }
            replaySegmentBytes += UInt64(entry.length)
        case .delete(let id):
            if let old = index.remove(id) {
                if old.typeTag < 64 { replayTypeCounts[Int(old.typeTag)] -= 1 } else { forgetType(old.typeTag) }
                if old.segment == replaySegment { flushReplayBytes() }
                liveBytes[old.segment, default: UInt64(old.length)] -= UInt64(old.length)
                deadRecords[old.segment, default: 0] += 1
                liveCount -= 1
            }
        case .setRoot, .removeRoot:
            applyRoot(effect)
            logicalRoots = roots
        }
    }

    private mutating func flushReplayBytes() {
        if replaySegmentBytes > 0 { liveBytes[replaySegment, default: 0] += replaySegmentBytes }
        replaySegmentBytes = 0
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

    private mutating func remember(_ entry: IndexEntry) {
        if entry.typeTag < 64 {
            replayTypeCounts[Int(entry.typeTag)] += 1
        } else {
            typeCounts[entry.typeTag, default: 0] += 1
        }
        // Kept aside while the records go to the same segment, as in replay (merged by
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
        liveBytes[old.segment, default: UInt64(old.length)] -= UInt64(old.length)
        deadRecords[old.segment, default: 0] += 1
    }

    // MARK: - Reading the durable view

    /// The durable entry of `id`: what readers see.
    @inline(__always)
    func durableEntry(_ id: UInt64) -> IndexEntry? {
        DurableView.durableEntry(id, index: index, undo: durableUndo)
    }

    /// Calls `body` for every durable live object, in increasing id order.
    func forEachDurable(_ body: (UInt64, IndexEntry) -> Void) {
        DurableView.forEachDurable(index: index, undo: durableUndo, body)
    }

    // MARK: - Compaction and counts

    /// Points a live object at an identical copy of its durable record (compaction).
    mutating func relocate(_ id: UInt64, from old: IndexEntry, to new: IndexEntry) {
        if let current = index.entry(id), !current.isPending, current.isSameRecord(old) {
            index.set(
                id,
                IndexEntry(
                    segment: new.segment, offset: new.offset, length: new.length, typeTag: current.typeTag,
                    incoming: current.incoming, flags: current.flags))
        } else if let undo = durableUndo[id], !undo.isEmpty, undo.isSameRecord(old) {
            durableUndo[id] = IndexEntry(
                segment: new.segment, offset: new.offset, length: new.length, typeTag: undo.typeTag,
                incoming: undo.incoming, flags: undo.flags)
        } else {
            return
        }
        liveBytes[old.segment, default: UInt64(old.length)] -= UInt64(old.length)
        liveBytes[new.segment, default: 0] += UInt64(new.length)
    }

    /// Whether `entry` (of `id`) is the durable record of a live object.
    func isDurableRecord(_ id: UInt64, _ entry: IndexEntry) -> Bool {
        durableEntry(id)?.isSameRecord(entry) ?? false
    }

    /// The references stored in a durable record.
    func references(of entry: IndexEntry) -> [ObjectID] {
        guard let file = segments[entry.segment] else { return [] }
        let bytes = file.bytes(count: Int(entry.offset) + Int(entry.length))
        guard case .success(let frame) = FrameDecoder.decode(bytes, at: Int(entry.offset)) else { return [] }
        return FrameDecoder.references(of: frame, in: bytes)
    }

    /// Counts every object's incoming references from scratch: from the live records' reference
    /// lists (read from the hints of hinted segments, from the mapped segments otherwise) and from the
    /// named roots (open, after replay; nothing is pending then). References to objects that are not
    /// live are skipped (`verify` reports them).
    mutating func recountReferences(hints: [UInt32: HintReader] = [:]) {
        for (segment, hint) in hints {
            hint.forEachEntry { entry in
                guard entry.kind == .put, entry.referenceCount > 0, let live = index.entry(entry.id),
                    live.segment == segment, live.offset == entry.offset
                else { return }
                entry.forEachReference { index.addIncoming($0) }
            }
        }
        var targets: [UInt64] = []
        // Entries come in id order, and neighbouring ids mostly share a segment: the last segment's answer
        // is kept rather than hashing its number for each of millions of entries.
        var lastSegment: UInt32?
        var lastFile: SegmentFile?
        index.forEachLive { _, entry in
            if entry.segment != lastSegment {
                lastSegment = entry.segment
                lastFile = hints[entry.segment] == nil ? segments[entry.segment] : nil
            }
            guard let file = lastFile else { return }
            FrameDecoder.forEachStoredReference(
                in: file.bytes(count: Int(entry.offset) + Int(entry.length)), at: Int(entry.offset)
            ) { targets.append($0) }
        }
        targets.append(contentsOf: roots.values.map(\.rawValue))
        for target in targets { index.addIncoming(target) }
    }

    /// The sequence number of the frame an index entry points at.
    func sequence(of entry: IndexEntry) -> UInt64? {
        guard let file = segments[entry.segment], Int(entry.offset) + 16 <= file.mappedLength else { return nil }
        return file.base.readLE(UInt64.self, at: Int(entry.offset) + 8)
    }

    /// The effect of a hint entry of `segment`.
    static func effect(ofHint entry: HintFile.Entry, segment: UInt32) -> IndexEffect? {
        switch entry.kind {
        case .put:
            return .put(
                id: entry.id,
                entry: IndexEntry(
                    segment: segment, offset: entry.offset, length: entry.length, typeTag: entry.typeTag,
                    flags: entry.flags.contains(.pinned) ? IndexEntry.pinnedFlag : 0))
        case .delete:
            return .delete(id: entry.id)
        case .setRoot, .removeRoot:
            guard let name = String(validating: entry.name, as: UTF8.self) else { return nil }
            return entry.kind == .setRoot
                ? .setRoot(name, ObjectID(entry.id), sequence: entry.sequence)
                : .removeRoot(name, sequence: entry.sequence)
        case .reserveIDs, .seal:
            return nil
        }
    }

    /// The effect of a committed frame found at `frame.offset` of `segment` (nil for frames that
    /// change nothing readers see, like id reservations, or root frames whose name is not UTF-8).
    static func effect(of frame: DecodedFrame, segment: UInt32, bytes: UnsafeRawBufferPointer) -> IndexEffect? {
        switch frame.kind {
        case .put:
            return .put(
                id: frame.id,
                entry: IndexEntry(
                    segment: segment, offset: UInt32(frame.offset), length: UInt32(frame.length),
                    typeTag: frame.typeTag, flags: frame.flags.contains(.pinned) ? IndexEntry.pinnedFlag : 0))
        case .delete:
            return .delete(id: frame.id)
        case .setRoot, .removeRoot:
            guard let payload = FrameDecoder.payload(of: frame, in: bytes),
                let name = String(validating: payload, as: UTF8.self)
            else { return nil }
            return frame.kind == .setRoot
                ? .setRoot(name, ObjectID(frame.id), sequence: frame.sequence)
                : .removeRoot(name, sequence: frame.sequence)
        case .reserveIDs, .seal:
            return nil
        }
    }
}

extension IndexEntry {
    func withFlags(_ flags: UInt32) -> IndexEntry {
        var copy = self
        copy.flags = flags
        return copy
    }

    func withIncoming(_ incoming: UInt32) -> IndexEntry {
        var copy = self
        copy.incoming = incoming
        return copy
    }
}
