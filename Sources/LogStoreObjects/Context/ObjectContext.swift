import LogStore

/// A working set of persistent objects over an ``ObjectStore``: loads them (one instance per id), tracks
/// what to write, and writes it all in one atomic batch on ``save()``.
///
/// **Threads.** A context and the objects it loaded belong to one thread or task at a time (the type is
/// not `Sendable`, so Swift 6 enforces it). Several contexts on one object store work concurrently:
/// reads run in parallel, saves are serialized by the engine. To hand results from a background task to
/// the main actor, pass ``ObjectID``s (they are `Sendable`) and load them in the main actor's context, or
/// hand over plain `Sendable` values.
///
/// **What reads see.** Loads, lazy references, roots, queries and counts read one snapshot of the store,
/// taken at the context's first read: everything a context loads belongs to one committed state, however
/// other contexts save meanwhile. A save, or ``refresh()``, moves the context on to the state as of then.
/// Unsaved changes of this context (deletes, root changes) are not visible in queries until ``save()``.
///
/// **Conflicts.** A save writes an object only if nobody else changed it since this context read it;
/// otherwise it fails with `conflict`, names the objects, and writes nothing (see
/// ``ObjectStore/update(attempts:_:)`` for work that can simply be redone).
///
/// For example:
///
/// ```swift
/// let context = objects.makeContext()
/// context.setRoot(contents, named: "main")
/// try context.save()
/// let again = try objects.makeContext().root(named: "main", as: Contents.self)
/// ```
public final class ObjectContext {
    /// The context's pending changes and read state, kept without dynamic exclusivity checks (see
    /// ``ContextConfined``).
    struct State {
        /// Root changes not yet saved, in order: a name and its new target (nil: removed).
        var pendingRoots: [(name: String, id: ObjectID?)] = []
        /// Objects to delete on save.
        var pendingDeletes: Set<ObjectID> = []
        /// The snapshot loads and queries read (see `ObjectContext+Snapshot.swift`); nil until the first read.
        var snapshot: Snapshot?
        /// Set by a save: the next read takes a snapshot that includes it.
        var snapshotIsOld = false
        /// The load in progress, if any (loads started while one runs join it).
        var activeLoad: LoadSession?
        /// Slots of instances this context numbered as new and has not yet checked against other contexts
        /// (see ``settleNewObjects()``).
        var unsettled: [ObjectSlot] = []
        /// Stored objects this context's own saves freed (see `ObjectContext+Released.swift`): linking one of
        /// them again stores it again.
        var releasedIDs: Set<ObjectID> = []
        /// The key path ``fetchUnique(_:where:equals:)`` last looked up through, with its indexed type and
        /// index (a loop of lookups resolves it once).
        var uniqueLookup: (keyPath: AnyKeyPath, type: IndexedType, index: Int)?
    }

    /// This context's ``State``.
    let confined = ContextConfined(state: State())

    /// The object store this context reads and writes.
    public let objectStore: ObjectStore
    let cache = IdentityCache()
    /// What `begin()` saw: the pending root changes and deletes, and an encoding hash of every object.
    struct TransactionStart {
        var roots: [(name: String, id: ObjectID?)]
        var deletes: Set<ObjectID>
        var hashes: IDTable<UInt64>
    }

    /// Set while a transaction is open.
    var transactionStart: TransactionStart?

    /// What this context loaded or numbered, as other contexts' saves see it (see ``InstanceOwners``).
    let instances = InstanceOwners.shared.newContext()

    init(_ objectStore: ObjectStore) {
        self.objectStore = objectStore
    }

    deinit {
        // New objects held until a save that never came must not outlive the context through its slots.
        cache.releaseAllHolds()
        InstanceOwners.shared.close(instances)
    }

    var store: Store { objectStore.store }
    var registry: TypeRegistry { objectStore.registry }

    // MARK: Identity

    /// The id of `object` in this context: set when it was loaded, inserted, or reached by a save; nil
    /// for an object this context has never seen.
    public func id(of object: any PersistentObject) -> ObjectID? {
        cache.slot(of: object)?.id
    }

    /// Whether an instance of `id` is in memory in this context (loaded or inserted, and still alive).
    public func isLoaded(_ id: ObjectID) -> Bool {
        cache.object(id) != nil
    }

    func cachedObject(_ id: ObjectID) -> (any PersistentObject)? {
        cache.object(id)
    }

    /// The slot of `object`, numbering it (as a new, unsaved object) when the context does not know it.
    func assignID(_ object: any PersistentObject, pinned: Bool, allowDeleted: Bool = false) throws(ObjectStoreError)
        -> ObjectSlot
    {
        if let slot = cache.slot(of: object) {
            if !allowDeleted && !confined.state.pendingDeletes.isEmpty
                && confined.state.pendingDeletes.contains(slot.id)
            {
                throw ObjectStoreError(
                    .deletedObject, "object \(slot.id) is deleted in this context", typeName: typeName(of: object),
                    objectID: slot.id)
            }
            return slot
        }
        if cache.isDetached(object) {
            throw ObjectStoreError(
                .deletedObject,
                "this \(typeName(of: object)) instance was dropped from the context (by a rollback or a refresh); load the object again",
                typeName: typeName(of: object))
        }
        guard let registered = registry.type(of: object) else {
            throw ObjectStoreError(
                .unregisteredClass, "\(type(of: object)) is not registered with the ObjectStore",
                typeName: typeName(of: object))
        }
        // A model another context has (loaded or added) keeps its slot: refused before anything changes.
        if let access = registered.modelAccess, let other = access.slot(object), other.isRecord(of: object) {
            throw ObjectStoreError(
                .foreignObject,
                "this \(registered.name) instance belongs to another context (it was loaded or added there); pass "
                    + "its id and load it in this context instead",
                typeName: registered.name)
        }
        let slot = cache.insert(object, id: store.newID(), storedHash: nil, pinned: pinned)
        if let access = registered.modelAccess {
            access.setSlot(object, slot)
            slot.isTracked = true
        }
        cache.hold(slot, object)
        confined.state.unsettled.append(slot)
        return slot
    }

    /// Removes the slot of `id` from the identity cache; a new, never saved object's instance is no longer
    /// this context's (another context may add it).
    func forget(_ id: ObjectID) {
        if let slot = cache.slot(id), slot.storedHash == nil { instances.withdraw(slot) }
        cache.remove(id)
    }

    /// Checks the instances numbered as new since the last call against every other context, all at once,
    /// and publishes them as this context's. An instance another context loaded or added is dropped from
    /// this context and refused with `foreignObject` (the other new instances stay, to be checked again).
    func settleNewObjects() throws(ObjectStoreError) {
        guard !confined.state.unsettled.isEmpty else { return }
        var slots: [ObjectSlot] = []
        var objects: [any PersistentObject] = []
        slots.reserveCapacity(confined.state.unsettled.count)
        objects.reserveCapacity(confined.state.unsettled.count)
        for slot in confined.state.unsettled {
            if let object = slot.object, cache.slot(slot.id) === slot {
                slots.append(slot)
                objects.append(object)
            }
        }
        if let index = InstanceOwners.shared.firstForeign(objects, besides: instances.serial) {
            let foreign = slots[index]
            confined.state.unsettled.removeAll { $0 === foreign }
            cache.remove(foreign.id)
            throw ObjectStoreError(
                .foreignObject,
                "this \(typeName(of: objects[index])) instance belongs to another context (it was loaded or added "
                    + "there); pass its id and load it in this context instead",
                typeName: typeName(of: objects[index]))
        }
        confined.state.unsettled.removeAll()
        instances.publish(slots, liveSlots: cache.state.slots.count)
    }

    func typeName(of object: any PersistentObject) -> String {
        registry.type(of: object)?.name ?? "\(type(of: object))"
    }

    // MARK: Inserting, roots, deleting

    /// Adds `object` to the store as a root of its own (pinned): it stays until deleted. Its fields and
    /// everything it references are written by the next ``save()``.
    /// - returns: the object's id.
    /// - throws: ``ObjectStoreError`` `unregisteredClass`, or `deletedObject`.
    @discardableResult
    public func insert(_ object: any PersistentObject) throws(ObjectStoreError) -> ObjectID {
        let slot = try assignID(object, pinned: true)
        try settleNewObjects()
        if !slot.pinned && slot.isTracked { slot.isChanged = true }
        slot.pinned = true
        cache.hold(slot, object)
        return slot.id
    }

    /// Stops `object` from being a root of its own: once nothing references it (and no named root names
    /// it) the collector removes it. Takes effect on ``save()``.
    public func unpin(_ object: any PersistentObject) {
        guard let slot = cache.slot(of: object) else { return }
        if slot.pinned && slot.isTracked { slot.isChanged = true }
        slot.pinned = false
        cache.hold(slot, object)
    }

    /// Names `object` as the root `name` (replacing what the name held before); written by ``save()``.
    /// The object need not be inserted: the name keeps it alive.
    /// - throws: ``ObjectStoreError`` `unregisteredClass`, or `deletedObject`.
    public func setRoot(_ object: any PersistentObject, named name: String) throws(ObjectStoreError) {
        let slot = try assignID(object, pinned: false)
        try settleNewObjects()
        cache.hold(slot, object)
        confined.state.pendingRoots.append((name, slot.id))
    }

    /// Removes the root `name` (on ``save()``); its object becomes garbage unless pinned or referenced.
    public func removeRoot(named name: String) {
        confined.state.pendingRoots.append((name, nil))
    }

    /// The object named `name`, loaded with everything it references eagerly; nil when there is no such
    /// root. Sees this context's unsaved root changes.
    /// - throws: ``ObjectStoreError`` `typeMismatch` when it is not a `T`, and the errors of
    ///   ``object(id:as:)``.
    public func root<T>(named name: String, as type: T.Type = T.self) throws(ObjectStoreError) -> T? {
        let id: ObjectID?
        if let pending = confined.state.pendingRoots.last(where: { $0.name == name }) {
            id = pending.id
        } else {
            id = try readView().root(named: name)
        }
        guard let id else { return nil }
        return try object(id: id, as: type)
    }

    /// Deletes `object` on ``save()``. The save fails with code `store` (the engine's `stillReferenced`)
    /// when a live object still references it.
    public func delete(_ object: any PersistentObject) {
        guard let slot = cache.slot(of: object) else { return }
        if slot.storedHash == nil {
            forget(slot.id)
            return
        }
        slot.strongHold = nil
        confined.state.pendingDeletes.insert(slot.id)
    }

    // MARK: Loading

    /// The object `id`, decoded as `T` (with everything it references eagerly, each id once: the same
    /// instance as any other path to it in this context); nil when no live object has this id.
    /// - throws: ``ObjectStoreError`` `typeMismatch` (the object is of another type),
    ///   `unregisteredType`, `missingField`, `danglingReference`, `cyclicReference`, `corruptPayload`, or
    ///   `store`.
    public func object<T>(id: ObjectID, as type: T.Type = T.self) throws(ObjectStoreError) -> T? {
        guard let object = try load(id) else { return nil }
        guard let typed = object as? T else {
            throw ObjectStoreError(
                .typeMismatch, "object \(id) is a \(Swift.type(of: object).typeName), expected \(T.self)",
                typeName: Swift.type(of: object).typeName, objectID: id)
        }
        return typed
    }

    /// Loads `id` (and its eager references) into the cache.
    func load(_ id: ObjectID) throws(ObjectStoreError) -> (any PersistentObject)? {
        if let object = cache.object(id) { return object }
        return try load([id]).first ?? nil
    }

    /// Loads `ids` (and their eager references) in one load session; nil for ids that are not live.
    func load(_ ids: [ObjectID]) throws(ObjectStoreError) -> [(any PersistentObject)?] {
        var objects: [(any PersistentObject)?] = []
        objects.reserveCapacity(ids.count)
        try load(ids) { _, object throws(ObjectStoreError) in objects.append(object) }
        return objects
    }

    /// Loads `ids` (and their eager references) in one load session, giving `body` each id, in order, with
    /// its object (nil when it is not live) as soon as it is loaded, with its wrapper fields filled in. No
    /// array of the objects is built (a query keeps only those it wants).
    ///
    /// `body` runs between two loads, with no load in progress: a load it starts (a lazy reference that a
    /// predicate reads) is a load session of its own, as it would be after this one. An error thrown by
    /// `body` ends the load there and is rethrown; what was loaded until then stays in the context.
    func load(
        _ ids: [ObjectID], each body: (ObjectID, (any PersistentObject)?) throws(ObjectStoreError) -> Void
    ) throws(ObjectStoreError) {
        if let activeLoad = confined.state.activeLoad {
            for id in ids { try body(id, try activeLoad.load(id, in: self)) }
            return
        }
        let view = try readView()
        let session = LoadSession(self, view: view)
        var failure: ObjectStoreError?
        do {
            func begin() {
                confined.state.activeLoad = session
                cache.state.suspendPurge = true
            }
            func end() {
                confined.state.activeLoad = nil
                cache.state.suspendPurge = false
            }
            begin()
            defer { end() }
            // The records of the next ids are asked for ahead (scattered ids each wait on memory otherwise).
            let ahead = 16
            view.prefetch(ids.prefix(ahead))
            for (position, id) in ids.enumerated() {
                if position % ahead == 0, position + ahead < ids.count {
                    view.prefetch(ids[(position + ahead)..<min(ids.count, position + 2 * ahead)])
                }
                let object = try session.load(id, in: self)
                // Every object of this load is decoded now: the wrapper fields that waited for one (a
                // reference cycle) can be filled in.
                if !session.state.fixups.isEmpty { try session.finish() }
                end()
                do {
                    try body(id, object)
                } catch {
                    failure = error
                }
                begin()
                if failure != nil { break }
            }
            instances.publish(session.state.loadedSlots, liveSlots: cache.state.slots.count)
        } catch {
            // Objects of a failed load may have reference fields that were never filled in: forget them.
            for loaded in session.state.loadedIDs { cache.remove(loaded) }
            throw error
        }
        if let failure { throw failure }
    }
}
