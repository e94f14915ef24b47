/// The fast path of a batch that only puts new objects (the common case of inserting records): it is
/// checked completely before anything changes, so it is applied without the undo log of
/// ``ReferenceTracker``.
///
/// A batch qualifies when every operation is a put, the ids strictly increase (so they are distinct),
/// no id is live in the writer's logical view, and every reference names an object that is live in
/// that view or is put by the batch. Such a batch frees nothing: it drops no reference and unpins
/// nothing, and every object it refers to gains a count. Its effect is exactly what the tracker
/// would do: each put gets an entry with no incoming references (nothing live can refer to an
/// object that is not live), and each reference adds one to its target's count. A batch that does
/// not qualify — including one that is invalid — goes through the tracker, which reports the error.
struct NewObjectsBatch {
    /// Checks `operations` against the logical index; nil when the batch does not qualify.
    static func check(_ operations: [WriteBatch.Operation], _ index: ObjectIndex) -> NewObjectsBatch? {
        var previous: UInt64 = 0
        for operation in operations {
            guard case .put(let record) = operation else { return nil }
            let id = record.id.rawValue
            guard id > previous, index.entry(id) == nil else { return nil }
            previous = id
        }
        guard case .put(let first) = operations.first else { return nil }
        let batchIDs = first.id.rawValue...previous
        for operation in operations {
            guard case .put(let record) = operation else { return nil }
            for target in record.references {
                let id = target.rawValue
                if index.entry(id) != nil { continue }
                guard batchIDs.contains(id), putsID(id, operations) else { return nil }
            }
        }
        return NewObjectsBatch()
    }

    /// Whether the batch (puts in increasing id order) puts `id`: a binary search.
    private static func putsID(_ id: UInt64, _ operations: [WriteBatch.Operation]) -> Bool {
        var low = 0
        var high = operations.count
        while low < high {
            let middle = (low + high) / 2
            guard case .put(let record) = operations[middle] else { return false }
            if record.id.rawValue == id { return true }
            if record.id.rawValue < id { low = middle + 1 } else { high = middle }
        }
        return false
    }

    /// Adds the batch's entries (`puts`: each id with its pending entry, no incoming references) and
    /// then one incoming reference per reference of each put to the logical index.
    func apply(
        _ operations: [WriteBatch.Operation], _ puts: [(id: UInt64, entry: IndexEntry)], to index: inout ObjectIndex
    ) {
        for (id, entry) in puts { index.set(id, entry.withIncoming(0)) }
        for operation in operations {
            guard case .put(let record) = operation else { continue }
            for target in record.references { index.addIncoming(target.rawValue, saturating: true) }
        }
    }

    /// Every id the batch puts or refers to (what a running mark-sweep pass must spare).
    func touched(_ operations: [WriteBatch.Operation]) -> [UInt64] {
        var ids: [UInt64] = []
        for operation in operations {
            guard case .put(let record) = operation else { continue }
            ids.append(record.id.rawValue)
            for target in record.references { ids.append(target.rawValue) }
        }
        return ids
    }
}
