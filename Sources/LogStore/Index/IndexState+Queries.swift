@_spi(Engine) import LogStoreFormat
@_spi(Engine) import LogStoreSystem

/// Reading the index: durable entries, the references a record stores, sequence numbers, the
/// reference recount at open, expectations; and pointing entries at compacted copies.
extension IndexState {
    /// The durable entry of `id`: what readers see.
    @inline(__always)
    func durableEntry(_ id: UInt64) -> IndexEntry? {
        DurableView.durableEntry(id, index: index, undo: durableUndo)
    }

    /// Calls `body` for every durable live object, in increasing id order.
    func forEachDurable(_ body: (UInt64, IndexEntry) -> Void) {
        DurableView.forEachDurable(index: index, undo: durableUndo, body)
    }

    /// Whether `entry` (of `id`) is the durable record of a live object.
    func isDurableRecord(_ id: UInt64, _ entry: IndexEntry) -> Bool {
        durableEntry(id)?.isSameRecord(entry) ?? false
    }

    /// The references stored in a record: a pending one's from the writer's `pending` chunks (those
    /// queued or being written), others from the mapped segment.
    func references(of entry: IndexEntry, pendingIn pending: [PendingChunk] = []) -> [ObjectID] {
        if entry.isPending {
            // A pending record is in memory until its batch is durable; one that is in none of the chunks
            // belongs to a batch whose write failed, and its bytes never reached the file.
            return PendingChunk.references(of: entry, in: pending) ?? []
        }
        guard let file = segments.file(entry.segment) else { return [] }
        let bytes = file.bytes(count: Int(entry.offset) + Int(entry.length))
        guard case .success(let frame) = FrameDecoder.decode(bytes, at: Int(entry.offset), format: file.format) else {
            return []
        }
        return FrameDecoder.references(of: frame, in: bytes)
    }

    /// Whether the record `entry` points at refers to `target`: a pending one's references from the
    /// `pending` chunks, others read from the mapped segment's frame header alone (no checksum: the frame
    /// was checked when it was written or opened).
    func refers(_ entry: IndexEntry, to target: UInt64, pendingIn pending: [PendingChunk]) -> Bool {
        if entry.isPending { return references(of: entry, pendingIn: pending).contains(ObjectID(target)) }
        guard let file = segments.file(entry.segment) else { return false }
        var found = false
        FrameDecoder.forEachStoredReference(
            in: file.bytes(count: Int(entry.offset) + Int(entry.length)), at: Int(entry.offset), format: file.format
        ) { if $0 == target { found = true } }
        return found
    }

    /// Counts every object's incoming references from scratch: from the live records' reference
    /// lists (read from the hints of hinted segments, from the mapped segments otherwise) and from the
    /// named roots (open, after replay; nothing is pending then). References to objects that are not
    /// live are skipped (`verify` reports them).
    ///
    /// `hintsWithReferences` (nil: all) names the hinted segments with any put that has references, and
    /// `scannedReferences` says whether an unhinted segment has one: the others have nothing to count.
    mutating func recountReferences(
        hints: [UInt32: HintReader] = [:], hintsWithReferences: Set<UInt32>? = nil, scannedReferences: Bool = true
    ) {
        for (segment, hint) in hints where hintsWithReferences?.contains(segment) ?? true {
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
        if scannedReferences {
            index.forEachLive { _, entry in
                if entry.segment != lastSegment {
                    lastSegment = entry.segment
                    lastFile = hints[entry.segment] == nil ? segments.file(entry.segment) : nil
                }
                guard let file = lastFile else { return }
                FrameDecoder.forEachStoredReference(
                    in: file.bytes(count: Int(entry.offset) + Int(entry.length)), at: Int(entry.offset),
                    format: file.format
                ) { targets.append($0) }
            }
        }
        targets.append(contentsOf: roots.values.map(\.rawValue))
        for target in targets { index.addIncoming(target) }
    }

    /// The sequence number of the frame an index entry points at.
    func sequence(of entry: IndexEntry) -> UInt64? {
        guard let file = segments.file(entry.segment) else { return nil }
        return RecordReader.sequence(of: entry, in: file)
    }

    /// The objects among `expectations` whose expectation does not hold in the writer's view (which
    /// includes every batch accepted before).
    func failedExpectations(_ expectations: [WriteBatch.Expectation]) -> [ObjectID] {
        expectations.compactMap { expectation in
            let entry = index.entry(expectation.id.rawValue)
            guard let expected = expectation.version else { return entry == nil ? nil : expectation.id }
            // A batch that is not yet durable changed it: no reader can have seen that version.
            guard let entry, !entry.isPending, sequence(of: entry) == expected else { return expectation.id }
            return nil
        }
    }
}
