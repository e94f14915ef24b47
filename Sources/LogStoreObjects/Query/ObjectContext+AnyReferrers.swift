import LogStore

extension ObjectContext {
    /// The objects, of any registered class, that refer to `object` through any of their fields, as of this
    /// context's snapshot and with its unsaved changes as ``fetch(_:)`` sees them, in id order.
    ///
    /// The stored referrers come from the store's index of references (``Store/referrers(of:)``), checked
    /// against each referrer's reference list at the snapshot (no object is decoded to find them). When
    /// another context saved after this one's snapshot, that index no longer describes the snapshot and the
    /// reference lists of every object at the snapshot are read instead (a scan of frame headers; call
    /// ``refresh()`` first to avoid it). New objects and changed `@Persistent` models are tested as they are
    /// in memory. An instance of a plain `Codable` class does not report its changes: as for a query, it is
    /// found by its stored references and then tested as it is in memory (a reference it gained in memory
    /// is seen once saved). Objects with pending deletes are left out; an object the context does not know
    /// (never inserted, loaded or saved through it) has none.
    /// For example:
    ///
    /// ```swift
    /// let holders = try context.referrers(to: label)   // every object that still refers to the label
    /// ```
    /// - throws: ``ObjectStoreError`` `store` when reading the store fails, and what loading an object throws.
    public func referrers(to object: any PersistentObject) throws(ObjectStoreError) -> [any PersistentObject] {
        guard let target = id(of: object) else { return [] }
        let view = try readView()
        var candidates: Set<ObjectID> = []
        do {
            let now = try objectStore.store.referrers(of: target)
            // The index answers for the store as it is now: the snapshot's answer when nothing was committed
            // since (read after the answer, so that no commit fell between them).
            if try objectStore.store.snapshot().sequence == view.sequence {
                candidates.formUnion(now)
            } else {
                for id in view.ids() where try view.header(of: id)?.references.contains(target) == true {
                    candidates.insert(id)
                }
            }
        } catch {
            throw ObjectStoreError(error)
        }
        candidates.formUnion(heldCandidates(tags: Set(registry.types.map(\.tag))))
        let deleted = confined.state.pendingDeletes
        let encoder = hashingEncoder(detached: [])
        var found: [ObjectID] = []
        for id in candidates.sorted() where !deleted.contains(id) {
            if let slot = cache.slot(id), let instance = slot.object, !slot.isUnchangedModel {
                // As it is in memory.
                guard let registered = registry.type(of: instance),
                    try encoder.encode(instance, as: registered).references.contains(target)
                else { continue }
                found.append(id)
                continue
            }
            let header: (typeTag: UInt32, references: [ObjectID])?
            do {
                header = try view.header(of: id)
            } catch {
                throw ObjectStoreError(error)
            }
            guard let header, registry.type(forTag: header.typeTag) != nil, header.references.contains(target) else {
                continue
            }
            found.append(id)
        }
        return try zip(found, load(found)).compactMap { id, loaded in loaded ?? cache.object(id) }
    }
}
