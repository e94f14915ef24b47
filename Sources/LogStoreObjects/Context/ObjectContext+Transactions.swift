import LogStore

extension ObjectContext {
    /// Whether a transaction is open.
    public var inTransaction: Bool { transactionStart != nil }

    /// Opens a transaction: nothing is written until ``commit()``, and ``rollback()`` undoes the
    /// transaction's work in this context.
    ///
    /// `begin()` notes the state of every object the context holds (an encoding hash each), so a rollback
    /// can tell the transaction's changes from unsaved changes made before it.
    /// - throws: ``ObjectStoreError`` `transactionState` when one is already open.
    public func begin() throws(ObjectStoreError) {
        guard transactionStart == nil else {
            throw ObjectStoreError(.transactionState, "a transaction is already open")
        }
        var hashes = IDTable<UInt64>()
        let encoder = hashingEncoder(detached: [])
        for (slot, object) in cache.liveSlots {
            if let hash = encodingHash(of: object, slot: slot, encoder) { hashes[slot.id] = hash }
        }
        transactionStart = TransactionStart(
            roots: confined.state.pendingRoots, deletes: confined.state.pendingDeletes, hashes: hashes)
    }

    /// Writes everything the transaction changed (and any change made before it) in one atomic batch and
    /// closes the transaction. When the write fails the transaction stays open: fix and commit again, or
    /// roll back.
    /// - throws: ``ObjectStoreError`` `transactionState` without an open transaction, and what
    ///   ``save()`` throws.
    /// - returns: what was written.
    @discardableResult
    public func commit() throws(ObjectStoreError) -> SaveReport {
        guard transactionStart != nil else { throw ObjectStoreError(.transactionState, "no transaction is open") }
        let report = try writeChanges()
        transactionStart = nil
        return report
    }

    /// Closes the transaction without writing. Root changes and deletes made in it are forgotten; objects
    /// new in it are dropped from the context; every object whose fields changed in it is dropped from the
    /// identity cache, and so is every object that refers to a dropped one. Loading such an id again gives
    /// a fresh instance with the stored values; instances of stored objects you still hold are detached, and
    /// saving or referencing them fails with `deletedObject` (new objects may be added again). Unsaved
    /// changes made before ``begin()`` are kept.
    /// - throws: ``ObjectStoreError`` `transactionState` without an open transaction.
    public func rollback() throws(ObjectStoreError) {
        guard let start = transactionStart else { throw ObjectStoreError(.transactionState, "no transaction is open") }
        revert(to: start.hashes, roots: start.roots, deletes: start.deletes)
    }

    /// Forgets every unsaved change of this context, like a rollback to the last save (and closes a
    /// transaction if one is open): root changes and deletes, new objects, and changed objects (dropped
    /// from the identity cache, with the objects that refer to them).
    public func discardChanges() {
        revert(to: nil, roots: [], deletes: [])
    }

    /// Drops what changed since `hashes` were taken (nil: since the last save), transitively.
    private func revert(to hashes: IDTable<UInt64>?, roots: [(name: String, id: ObjectID?)], deletes: Set<ObjectID>) {
        confined.state.pendingRoots = roots
        confined.state.pendingDeletes = deletes
        var detached: Set<ObjectIdentifier> = []
        func detach(_ slot: ObjectSlot, _ object: any PersistentObject) {
            detached.insert(ObjectIdentifier(object))
            // A stored object's instance must not come back as a new object (a copy under a new id); a new
            // object's instance has no stored identity and may be added again later.
            if slot.storedHash != nil { cache.detach(object) }
            forget(slot.id)
        }
        let encoder = hashingEncoder(detached: [])
        for (slot, object) in cache.liveSlots {
            // Objects loaded during the transaction compare with their stored records.
            let reference = hashes?[slot.id] ?? slot.storedHash
            guard let reference, encodingHash(of: object, slot: slot, encoder) == reference else {
                detach(slot, object)
                continue
            }
        }
        for (id, slot) in cache.state.slots.entries where slot.object == nil && slot.storedHash == nil {
            forget(id)
        }
        // An object that refers to a dropped instance would save it again under a new id: drop it too.
        var changed = !detached.isEmpty
        while changed {
            changed = false
            let detachedNow = detached
            let checker = hashingEncoder(detached: detachedNow)
            for (slot, object) in cache.liveSlots where encodingHash(of: object, slot: slot, checker) == nil {
                detach(slot, object)
                changed = true
            }
        }
        // What stays must reach the next save: deletes withdrawn by the rollback left their objects unheld.
        for (slot, object) in cache.liveSlots
        where !slot.isTracked || slot.isChanged || slot.storedHash == nil {
            if !confined.state.pendingDeletes.contains(slot.id) { cache.hold(slot, object) }
        }
        if hashes == nil { cache.releaseHolds() }
        transactionStart = nil
    }

    /// An encoder for hashing objects as they are now: known objects become their ids, unknown ones id 0;
    /// encoding fails (nil hash) when an object refers to one of `detached`.
    func hashingEncoder(detached: Set<ObjectIdentifier>) -> PayloadEncoder {
        PayloadEncoder(catalog: objectStore.catalog, fieldCoding: registry.usesFieldCoding) {
            [unowned self] object throws(ObjectStoreError) in
            if detached.contains(ObjectIdentifier(object)) {
                throw ObjectStoreError(.deletedObject, "refers to a rolled-back instance")
            }
            return self.cache.slot(of: object)?.id ?? self.cache.linkableID(of: object) ?? ObjectID(0)
        }
    }

    /// The content hash `object` would be saved with now; nil when it cannot be encoded.
    func encodingHash(of object: any PersistentObject, slot: ObjectSlot, _ encoder: PayloadEncoder) -> UInt64? {
        guard let registered = registry.type(of: object),
            let encoded = try? encoder.encode(object, as: registered)
        else { return nil }
        return ContentHash.of(
            typeTag: registered.tag, pinned: slot.pinned, references: encoded.references, payload: encoded.payload)
    }

    /// Runs `body` in a transaction: commits when it returns, rolls back when it (or the commit) throws,
    /// and rethrows.
    ///
    /// For example:
    ///
    /// ```swift
    /// try context.transaction {
    ///     try context.put(alice)
    ///     try context.put(bob)
    /// }
    /// ```
    /// - throws: what `body` throws, or what ``commit()`` throws.
    public func transaction<Result>(_ body: () throws -> Result) throws -> Result {
        try begin()
        do {
            let result = try body()
            try commit()
            return result
        } catch {
            if inTransaction { try? rollback() }
            throw error
        }
    }
}
