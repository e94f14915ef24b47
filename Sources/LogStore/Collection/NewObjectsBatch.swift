@_spi(Engine) import LogStoreFormat
@_spi(Engine) import LogStoreSystem

/// The fast path of a batch that only adds (the common case of inserting records, and of saving a new
/// object graph under a new root name): it is checked completely before anything changes, so it is
/// applied without the undo log of ``ReferenceTracker``.
///
/// A batch qualifies when every operation is a put of an object that is not live in the writer's
/// logical view (each id once) or names a root that does not exist yet (each name once), and every
/// reference and root target is live in that view or put by the batch. Such a batch frees nothing: it
/// drops no reference and unpins nothing, and every object it refers to gains a count. Its effect is
/// exactly what the tracker would do: each put gets an entry with no incoming references (nothing live
/// can refer to an object that is not live), each reference and each new root adds one to its target's
/// count. A batch that does not qualify — including one that is invalid — goes through the tracker,
/// which reports the error.
struct NewObjectsBatch {
    /// The ids the batch puts, in increasing order.
    private let putIDs: [UInt64]

    /// Checks `operations` against the logical view; nil when the batch does not qualify.
    static func check(_ operations: [WriteBatch.Operation], _ state: IndexState) -> NewObjectsBatch? {
        var ids: [UInt64] = []
        ids.reserveCapacity(operations.count)
        var increasing = true
        var newRoots: Set<String> = []
        for operation in operations {
            switch operation {
            case .put(let record):
                let id = record.id.rawValue
                guard state.index.entry(id) == nil else { return nil }
                if let last = ids.last, id <= last { increasing = false }
                ids.append(id)
            case .setRoot(let name, _):
                guard state.logicalRoots[name] == nil, newRoots.insert(name).inserted else { return nil }
            case .delete, .removeRoot:
                return nil
            }
        }
        if !increasing {
            ids.sort()
            for position in ids.indices.dropFirst() where ids[position - 1] == ids[position] { return nil }
        }
        let batch = NewObjectsBatch(putIDs: ids)
        for operation in operations {
            switch operation {
            case .put(let record):
                for target in record.references {
                    guard batch.isLiveOrPut(target.rawValue, state.index) else { return nil }
                }
            case .setRoot(_, let target):
                guard batch.isLiveOrPut(target.rawValue, state.index) else { return nil }
            case .delete, .removeRoot:
                return nil
            }
        }
        return batch
    }

    private func isLiveOrPut(_ id: UInt64, _ index: ObjectIndex) -> Bool {
        index.entry(id) != nil || putsID(id)
    }

    /// Whether the batch puts `id`: a binary search.
    private func putsID(_ id: UInt64) -> Bool {
        var low = 0
        var high = putIDs.count
        while low < high {
            let middle = (low + high) / 2
            if putIDs[middle] == id { return true }
            if putIDs[middle] < id { low = middle + 1 } else { high = middle }
        }
        return false
    }

    /// Adds the batch's entries (`puts`: each id with its pending entry, no incoming references), then
    /// one incoming reference per reference of each put and per new root, and the new roots, to the
    /// logical view.
    func apply(
        _ operations: [WriteBatch.Operation], _ puts: [(id: UInt64, entry: IndexEntry)], to state: inout IndexState
    ) {
        for (id, entry) in puts { state.index.set(id, entry.withIncoming(0)) }
        for operation in operations {
            switch operation {
            case .put(let record):
                for target in record.references { state.index.addIncoming(target.rawValue, saturating: true) }
                state.referrerIndex.add(record.references, from: record.id.rawValue)
            case .setRoot(let name, let target):
                state.logicalRoots[name] = target
                state.index.addIncoming(target.rawValue, saturating: true)
            case .delete, .removeRoot:
                break
            }
        }
    }

    /// Every id the batch puts or refers to (what a running mark-sweep pass must spare).
    func touched(_ operations: [WriteBatch.Operation]) -> [UInt64] {
        var ids: [UInt64] = []
        for operation in operations {
            switch operation {
            case .put(let record):
                ids.append(record.id.rawValue)
                for target in record.references { ids.append(target.rawValue) }
            case .setRoot(_, let target):
                ids.append(target.rawValue)
            case .delete, .removeRoot:
                break
            }
        }
        return ids
    }
}
