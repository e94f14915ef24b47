import LogStore

/// What a context reads: one snapshot of the store at a time.
///
/// Loads, lazy references, roots, queries and counts of a context all read the same engine ``Snapshot``,
/// taken at the context's first read. Everything the context loads is therefore consistent with one
/// committed state, whatever other contexts save meanwhile. A save moves the context on: its next read
/// takes a snapshot that includes the save, and ``refresh()`` does the same on demand. Moving on keeps
/// every cached object that is still current; an object that another context changed or deleted meanwhile
/// is dropped from the identity cache (with the unchanged objects that refer to it, so that no instance
/// points at an outdated one) and loads again with its new state.
extension ObjectContext {
    /// The snapshot this context reads, taking one when it has none, or a newer one after a save.
    func readView() throws(ObjectStoreError) -> Snapshot {
        if let snapshot = confined.state.snapshot, !confined.state.snapshotIsOld || confined.state.activeLoad != nil {
            return snapshot
        }
        return try moveOn()
    }

    /// Moves this context to the store's current committed state: later loads, queries and counts read
    /// a new snapshot.
    ///
    /// Objects that another context changed or deleted since this one read them are dropped from the identity
    /// cache, unless they have unsaved changes here, together with the unchanged objects that refer to them;
    /// the next load of their ids gives new instances with the stored values. The old instances are
    /// detached: saving or linking them fails with `deletedObject` (load them again instead). Objects with
    /// unsaved changes are kept as they are; saving them fails with `conflict` when another context changed
    /// them (see ``ObjectStore/update(attempts:_:)``).
    /// - throws: ``ObjectStoreError`` `store` when the store is closed.
    public func refresh() throws(ObjectStoreError) {
        _ = try moveOn()
    }

    /// Forgets the unsaved changes of `object` and moves the context on (as ``refresh()`` does): the object
    /// is dropped from the identity cache (detached, with the unchanged objects that refer to it) and a
    /// pending delete of it is withdrawn, so the next load of its id gives its state as stored now. Other
    /// unsaved changes stay. A new, never saved object is simply forgotten.
    ///
    /// For example, after a save refused because of one change:
    /// ```swift
    /// do {
    ///     try context.save()
    /// } catch {
    ///     guard error.code == .conflict else { throw error }
    ///     for id in error.objects {
    ///         if let stale = context.loadedObject(id) { try context.refresh(stale) }
    ///     }
    /// }
    /// ```
    /// - throws: ``ObjectStoreError`` `store` when the store is closed.
    public func refresh(_ object: any PersistentObject) throws(ObjectStoreError) {
        guard let slot = cache.slot(of: object) else { return }
        confined.state.pendingDeletes.remove(slot.id)
        if slot.storedHash == nil {
            forget(slot.id)
        } else {
            drop([slot.id])
        }
        _ = try moveOn()
    }

    /// Withdraws a pending ``delete(_:)`` of `object` (other unsaved changes stay).
    public func cancelDelete(_ object: any PersistentObject) {
        guard let slot = cache.slot(of: object) else { return }
        confined.state.pendingDeletes.remove(slot.id)
        if !slot.isTracked || slot.isChanged { cache.hold(slot, object) }
    }

    /// The instance of `id` this context holds, if any (without loading it).
    public func loadedObject(_ id: ObjectID) -> (any PersistentObject)? {
        cache.object(id)
    }

    /// Takes a new snapshot and drops the cached objects it shows as changed elsewhere.
    private func moveOn() throws(ObjectStoreError) -> Snapshot {
        let next: Snapshot
        do {
            next = try store.snapshot()
        } catch {
            throw ObjectStoreError(error)
        }
        if confined.state.snapshot != nil {
            var changed: [ObjectID] = []
            var gone: [ObjectID] = []
            for (id, slot) in cache.state.slots.entries where slot.storedHash != nil && !slot.isLoading {
                let version = next.version(of: id)
                if version == nil && slot.object == nil {
                    gone.append(id)
                } else if version == nil && confined.state.releasedIDs.contains(id) {
                    // Freed by this context's own save: the instance stays, and linking it stores it again.
                    continue
                } else if version != slot.version {
                    changed.append(id)
                }
            }
            // A deleted or collected object nobody holds any more just goes.
            for id in gone { cache.remove(id) }
            if !changed.isEmpty { drop(changed, keepingChanged: true) }
        }
        confined.state.snapshot = next
        confined.state.snapshotIsOld = false
        return next
    }

    /// Drops `ids` from the identity cache (detaching their instances), and every cached object without
    /// unsaved changes that refers to a dropped one. With `keepingChanged`, objects of `ids` that have
    /// unsaved changes stay (their save then fails with `conflict`). An object with unsaved changes that
    /// refers to a dropped instance keeps it in memory; its save stores a reference to the dropped
    /// object's id, not the outdated instance's values (``IdentityCache/detach(_:linkableAs:)``).
    private func drop(_ ids: [ObjectID], keepingChanged: Bool = false) {
        let encoder = hashingEncoder(detached: [])
        // Who refers to whom, and which objects have unsaved changes, as encoding them now tells.
        var referrers: [ObjectID: [ObjectID]] = [:]
        var changed: Set<ObjectID> = []
        for (slot, object) in cache.liveSlots {
            guard let registered = registry.type(of: object),
                let (payload, references) = try? encoder.encode(object, as: registered)
            else {
                changed.insert(slot.id)
                continue
            }
            let hash = ContentHash.of(
                typeTag: registered.tag, pinned: slot.pinned, references: references, payload: payload)
            let isChanged = slot.storedHash != hash || confined.state.pendingDeletes.contains(slot.id)
            if isChanged { changed.insert(slot.id) }
            for reference in references where reference.rawValue != 0 {
                referrers[reference, default: []].append(slot.id)
            }
        }
        var dropped: Set<ObjectID> = []
        var work = ids.filter { !keepingChanged || !changed.contains($0) }
        while let id = work.popLast() {
            guard dropped.insert(id).inserted else { continue }
            for referrer in referrers[id] ?? [] where !changed.contains(referrer) {
                work.append(referrer)
            }
        }
        for id in dropped {
            guard let slot = cache.slot(id) else { continue }
            if let object = slot.object { cache.detach(object, linkableAs: id) }
            cache.remove(id)
        }
    }
}
