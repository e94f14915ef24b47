import LogStore

/// Which stored objects this context's own saves freed.
///
/// A save that drops the last reference to an object lets the engine free it (reference counting, with
/// its cascade). The context may still hold the instance, and linking it again later must store it again:
/// that is this context's own doing. An object that is gone for any other reason (another context deleted
/// it, or dropped the last reference to it) must not come back silently: a save that links it fails with
/// `conflict`. So each save notes which objects it freed.
extension ObjectContext {
    /// What a save may free, and the state before it to follow references in.
    struct ReleaseCandidates {
        let before: Snapshot
        let ids: [ObjectID]
    }

    /// The objects `records` (written by the coming save, in the order of `slots`) stop referring to, the
    /// old targets of the roots it changes, and what the objects it deletes refer to, as the store holds
    /// them now. Only objects stored before are looked up (new ones dropped no reference).
    func releaseCandidates(writing records: [Record], slots: [(ObjectSlot, UInt64)]) throws(ObjectStoreError)
        -> ReleaseCandidates
    {
        do {
            let before = try store.snapshot()
            var ids: [ObjectID] = []
            for (record, (slot, _)) in zip(records, slots) where slot.storedHash != nil {
                guard let old = try before.header(of: record.id)?.references, !old.isEmpty else { continue }
                let kept = Set(record.references)
                ids += old.filter { !kept.contains($0) }
            }
            for (name, _) in confined.state.pendingRoots { if let old = before.root(named: name) { ids.append(old) } }
            for id in confined.state.pendingDeletes { ids += try before.header(of: id)?.references ?? [] }
            return ReleaseCandidates(before: before, ids: ids)
        } catch {
            throw ObjectStoreError(error)
        }
    }

    /// After the save was written: notes which candidates (and what only they kept alive) are gone now.
    /// It never fails the save that was written: an object it cannot look at is not noted (linking it
    /// again is then a `conflict`, the safe side).
    func noteReleased(_ candidates: ReleaseCandidates) {
        var work = candidates.ids
        var seen: Set<ObjectID> = []
        while let id = work.popLast() {
            guard seen.insert(id).inserted, (try? store.contains(id)) == false else { continue }
            confined.state.releasedIDs.insert(id)
            // No longer stored: nothing to save unless it is linked again (the save that links it encodes
            // it then), so the context need not keep it.
            cache.slot(id)?.strongHold = nil
            work += (try? candidates.before.header(of: id))??.references ?? []
        }
    }
}
