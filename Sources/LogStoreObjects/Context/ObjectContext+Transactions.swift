import LogStore

extension ObjectContext {
    /// Whether a transaction is open.
    public var inTransaction: Bool { transactionStart != nil }

    /// Opens a transaction: nothing is written until ``commit()``, and ``rollback()`` undoes the
    /// transaction's work in this context.
    /// - throws: ``ObjectStoreError`` `transactionState` when one is already open.
    public func begin() throws(ObjectStoreError) {
        guard transactionStart == nil else {
            throw ObjectStoreError(.transactionState, "a transaction is already open")
        }
        transactionStart = (pendingRoots, pendingDeletes)
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

    /// Closes the transaction without writing: root changes and deletes made in it are forgotten, new
    /// objects are dropped from the context, and every object whose fields differ from its stored record
    /// is dropped from the identity cache (loading its id again gives a fresh instance with the stored
    /// values; instances you still hold are detached).
    /// - throws: ``ObjectStoreError`` `transactionState` without an open transaction.
    public func rollback() throws(ObjectStoreError) {
        guard let start = transactionStart else { throw ObjectStoreError(.transactionState, "no transaction is open") }
        revert(roots: start.roots, deletes: start.deletes)
    }

    /// Forgets every unsaved change of this context, like ``rollback()`` back to the last save (and
    /// closes a transaction if one is open): root changes and deletes, new objects, and changed objects
    /// (dropped from the identity cache).
    public func discardChanges() {
        revert(roots: [], deletes: [])
    }

    private func revert(roots: [(name: String, id: ObjectID?)], deletes: Set<ObjectID>) {
        pendingRoots = roots
        pendingDeletes = deletes
        let encoder = PayloadEncoder(catalog: objectStore.catalog) { [unowned self] object in
            self.cache.slot(of: object)?.id ?? ObjectID(0)
        }
        for (slot, object) in cache.liveSlots {
            guard let storedHash = slot.storedHash, let registered = registry.type(of: object) else {
                cache.remove(slot.id)
                continue
            }
            let encoded = try? encoder.encode(object, typeName: registered.name)
            let hash = encoded.map {
                ContentHash.of(
                    typeTag: registered.tag, pinned: slot.pinned, references: $0.references, payload: $0.payload)
            }
            if hash != storedHash { cache.remove(slot.id) }
        }
        for (id, slot) in cache.slots where slot.storedHash == nil { cache.remove(id) }
        cache.releaseHolds()
        transactionStart = nil
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
