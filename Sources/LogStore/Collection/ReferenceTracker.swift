@_spi(Engine) import LogStoreFormat
@_spi(Engine) import LogStoreSystem

/// Applies one batch to the writer's logical view of the object graph: entries, incoming reference
/// counts, named roots. It checks referential integrity at the end of the batch (so objects of one
/// batch may refer to each other, cycles included), collects what the batch left unreferenced, and
/// undoes everything when the batch is refused.
///
/// Rules:
/// - every reference of a put, and every root, must name an object that is live when the batch ends;
/// - an explicitly deleted object must have no referrer left when the batch ends;
/// - an object that is neither pinned nor referenced (by a live object or a named root) is garbage as
///   soon as its count *drops* to zero (or it is unpinned with none): it gets a tombstone in the same
///   batch, and its own references are released in turn. A new unpinned object nobody references yet
///   is left to the mark-sweep pass, so a graph can be built up over several batches.
struct ReferenceTracker {
    private enum Undo {
        case entry(UInt64, IndexEntry?)
        case durable(UInt64, IndexEntry?)
        case root(String, ObjectID?)
    }

    /// The writer's pending and flushing chunks: pending records' references are read from them.
    let chunks: [PendingChunk]
    private var undo: [Undo] = []
    /// The batch's operations: a placeholder entry's offset is the index of the put that made it.
    private var operations: [WriteBatch.Operation] = []
    /// Incoming counts of objects that are not in the index (deleted by this batch, or never live).
    private var detached: [UInt64: Int64] = [:]
    private var deleted: Set<UInt64> = []
    private var candidates: [UInt64] = []
    /// Ids this batch named (puts, references, roots): mark-sweep must not collect them.
    private(set) var touched: [UInt64] = []
    /// Objects the batch's collection freed, in order.
    private(set) var collected: [UInt64] = []
    /// The type tags of ``collected``, in the same order.
    private(set) var collectedTypeTags: [UInt32] = []
    /// Objects the batch's delete operations removed, with the type tag each had, in order.
    private(set) var deletedObjects: [ObjectChange] = []

    init(chunks: [PendingChunk]) {
        self.chunks = chunks
    }

    /// The placeholder entry of a put until its real location is known (segment 0 never exists); its
    /// offset is the index of the put in the batch.
    static func placeholder(typeTag: UInt32, operation: Int) -> IndexEntry {
        IndexEntry(segment: 0, offset: UInt32(truncatingIfNeeded: operation), length: 1, typeTag: typeTag)
    }

    mutating func apply(
        _ operations: [WriteBatch.Operation], collecting garbage: [UInt64] = [], to state: inout IndexState
    ) throws(LogStoreError) {
        self.operations = operations
        do throws(LogStoreError) {
            for (index, operation) in operations.enumerated() { try apply(operation, at: index, &state) }
            for id in garbage { collect(id, &state) }
            try checkIntegrity(operations, &state)
            collectGarbage(&state)
        } catch {
            rollBack(&state)
            throw error
        }
    }

    private mutating func apply(_ operation: WriteBatch.Operation, at index: Int, _ state: inout IndexState)
        throws(LogStoreError)
    {
        switch operation {
        case .put(let record):
            let id = record.id.rawValue
            let old = state.index.entry(id)
            let oldReferences = old.map { references(of: $0, id: id, state) } ?? []
            var entry = Self.placeholder(typeTag: record.typeTag, operation: index)
            entry.flags = IndexEntry.pendingFlag | (record.isPinned ? IndexEntry.pinnedFlag : 0)
            entry.incoming = old?.incoming ?? UInt32(clamping: detached.removeValue(forKey: id) ?? 0)
            deleted.remove(id)
            setEntry(id, entry, &state)
            touched.append(id)
            state.referrerIndex.add(record.references, from: id)
            for target in record.references {
                adjust(target.rawValue, by: 1, &state)
                touched.append(target.rawValue)
            }
            for target in oldReferences { adjust(target.rawValue, by: -1, &state) }
            if let old, old.isPinned, !record.isPinned { candidates.append(id) }
        case .delete(let id):
            guard let current = state.index.entry(id.rawValue) else {
                throw LogStoreError(.notFound, "object \(id) is not live and cannot be deleted")
            }
            let references = references(of: current, id: id.rawValue, state)
            setEntry(id.rawValue, nil, &state)
            deleted.insert(id.rawValue)
            deletedObjects.append(ObjectChange(id: id, typeTag: current.typeTag))
            if current.incoming > 0 { detached[id.rawValue, default: 0] += Int64(current.incoming) }
            for target in references { adjust(target.rawValue, by: -1, &state) }
        case .setRoot(let name, let id):
            let old = state.logicalRoots[name]
            undo.append(.root(name, old))
            state.logicalRoots[name] = id
            adjust(id.rawValue, by: 1, &state)
            touched.append(id.rawValue)
            if let old { adjust(old.rawValue, by: -1, &state) }
        case .removeRoot(let name):
            guard let old = state.logicalRoots[name] else { return }
            undo.append(.root(name, old))
            state.logicalRoots[name] = nil
            adjust(old.rawValue, by: -1, &state)
        }
    }

    /// References into dead objects, and deleted objects that are still referenced, refuse the batch.
    private func checkIntegrity(_ operations: [WriteBatch.Operation], _ state: inout IndexState)
        throws(LogStoreError)
    {
        for (id, count) in detached where count > 0 {
            if deleted.contains(id) {
                let referrer = Self.referrer(of: id, in: &state, chunks: chunks, batch: operations)
                throw LogStoreError(
                    .stillReferenced, "object \(id) cannot be deleted: \(referrer.text) still refers to it",
                    objects: [ObjectID(id)] + (referrer.id.map { [$0] } ?? []))
            }
            let user = operations.lazy.compactMap { operation -> (text: String, id: ObjectID?)? in
                switch operation {
                case .put(let record) where record.references.contains(ObjectID(id)):
                    return ("object \(record.id)", record.id)
                case .setRoot(let name, let target) where target.rawValue == id:
                    return ("root \"\(name)\"", nil)
                default: return nil
                }
            }.first
            throw LogStoreError(
                .danglingReference, "\(user?.text ?? "the batch") refers to object \(id), which is not live",
                objects: [ObjectID(id)] + (user?.id.map { [$0] } ?? []))
        }
    }

    /// Frees an object the mark-sweep pass found unreachable. Its referrers are unreachable too and
    /// are freed by the same batch, so the counts it leaves detached return to zero; if one does not,
    /// the integrity check refuses the whole sweep.
    private mutating func collect(_ id: UInt64, _ state: inout IndexState) {
        guard let entry = state.index.entry(id), let references = unpinnedReferences(of: entry, id: id, &state) else {
            return
        }
        setEntry(id, nil, &state)
        collected.append(id)
        collectedTypeTags.append(entry.typeTag)
        if entry.incoming > 0 { detached[id, default: 0] += Int64(entry.incoming) }
        for target in references { adjust(target.rawValue, by: -1, &state) }
    }

    /// Frees every object whose count dropped to zero (unpinned, not a named root), cascading.
    private mutating func collectGarbage(_ state: inout IndexState) {
        var work = candidates
        while let id = work.popLast() {
            guard let entry = state.index.entry(id), entry.incoming == 0,
                let references = unpinnedReferences(of: entry, id: id, &state)
            else { continue }
            setEntry(id, nil, &state)
            collected.append(id)
            collectedTypeTags.append(entry.typeTag)
            for target in references {
                adjust(target.rawValue, by: -1, &state)
                work.append(target.rawValue)
            }
        }
    }

    /// The references of an object to free, nil when it is kept as pinned
    /// (``IndexState/referencesUnlessPinned(_:_:pendingIn:placeholder:)``).
    private func unpinnedReferences(of entry: IndexEntry, id: UInt64, _ state: inout IndexState) -> [ObjectID]? {
        state.referencesUnlessPinned(id, entry, pendingIn: chunks) { Self.batchReferences(of: $0, in: operations) }
    }

    private func references(of entry: IndexEntry, id: UInt64, _ state: IndexState) -> [ObjectID] {
        if entry.segment == 0 { return Self.batchReferences(of: entry, in: operations) }
        return state.references(of: entry, pendingIn: chunks)
    }

    /// The references of the put a placeholder entry stands for.
    static func batchReferences(of placeholder: IndexEntry, in operations: [WriteBatch.Operation]) -> [ObjectID] {
        let index = Int(placeholder.offset)
        guard index < operations.count, case .put(let record) = operations[index] else { return [] }
        return record.references
    }

    private mutating func adjust(_ id: UInt64, by delta: Int64, _ state: inout IndexState) {
        guard var entry = state.index.entry(id) else {
            detached[id, default: 0] += delta
            return
        }
        entry.incoming = UInt32(clamping: Int64(entry.incoming) + delta)
        setEntry(id, entry, &state)
        if delta < 0 && entry.incoming == 0 { candidates.append(id) }
    }

    /// Changes the logical entry of `id`, keeping its durable version for readers and an undo step.
    private mutating func setEntry(_ id: UInt64, _ entry: IndexEntry?, _ state: inout IndexState) {
        let current = state.index.entry(id)
        undo.append(.entry(id, current))
        if let current, !current.isPending, entry?.isPending ?? true, state.durableUndo[id] == nil {
            undo.append(.durable(id, nil))
            state.setDurableUndo(id, current)
        }
        if let entry { state.index.set(id, entry) } else { state.index.remove(id) }
    }

    private mutating func rollBack(_ state: inout IndexState) {
        for step in undo.reversed() {
            switch step {
            case .entry(let id, let entry):
                if let entry { state.index.set(id, entry) } else { state.index.remove(id) }
                // Hints a refused batch pruned or never saw (the index built in its middle) come back.
                if let entry, entry.segment != 0, state.referrerIndex.isBuilt {
                    state.referrerIndex.add(state.references(of: entry, pendingIn: chunks), from: id)
                }
            case .durable(let id, let entry):
                state.setDurableUndo(id, entry)
            case .root(let name, let id):
                state.logicalRoots[name] = id
            }
        }
        undo.removeAll()
    }

    /// Forgets the undo log: the batch is accepted for good.
    mutating func commit() { undo.removeAll() }

    /// Undoes an accepted batch whose encoding failed after all.
    mutating func undoAccepted(_ state: inout IndexState) { rollBack(&state) }

    /// A live object or root that refers to `id`, for error messages: a root by name, else the first of the
    /// referrers the state's ``ReferrerIndex`` confirms (building it on first use: one pass over the live
    /// records' reference lists, reading frame headers only).
    static func referrer(
        of id: UInt64, in state: inout IndexState, chunks: [PendingChunk], batch: [WriteBatch.Operation] = []
    ) -> (text: String, id: ObjectID?) {
        if let name = state.logicalRoots.first(where: { $0.value.rawValue == id })?.key {
            return ("root \"\(name)\"", nil)
        }
        let found = liveReferrers(of: id, in: &state, chunks: chunks, batch: batch).first
        return found.map { ("object \($0)", ObjectID($0)) } ?? ("another live object", nil)
    }

    /// Every object of the writer's view (`batch`'s puts included) whose record refers to `id`, in
    /// increasing id order, from the state's ``ReferrerIndex``.
    static func liveReferrers(
        of id: UInt64, in state: inout IndexState, chunks: [PendingChunk], batch: [WriteBatch.Operation] = []
    ) -> [UInt64] {
        var referrers = state.referrerIndex
        state.referrerIndex = ReferrerIndex()
        defer { state.referrerIndex = referrers }
        let view = state
        func references(of entry: IndexEntry) -> [ObjectID] {
            entry.segment == 0 ? batchReferences(of: entry, in: batch) : view.references(of: entry, pendingIn: chunks)
        }
        if !referrers.isBuilt {
            referrers.build { add in
                view.index.forEachLive { referrer, entry in
                    let targets = references(of: entry)
                    if !targets.isEmpty { add(referrer, targets) }
                }
            }
        }
        // The batch's own puts are hinted already (``apply(_:at:_:)``); placeholders are read from it.
        return referrers.referrers(of: id) { referrer in
            guard let entry = view.index.entry(referrer) else { return false }
            return entry.segment == 0
                ? batchReferences(of: entry, in: batch).contains(ObjectID(id))
                : view.refers(entry, to: id, pendingIn: chunks)
        }
    }
}
