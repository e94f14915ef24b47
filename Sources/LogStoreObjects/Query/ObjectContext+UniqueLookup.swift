import LogStore

extension ObjectContext {
    /// The object of class `T` whose field `keyPath` holds `value`, found through the unique index on that
    /// field: what ``fetch(_:)`` returns for `#Predicate { $0.field == value }`, without building and
    /// analysing a predicate (a lookup of an object already in the context costs a hash lookup).
    ///
    /// It sees what a query sees: the stored objects as of the context's snapshot and the unsaved changes
    /// this context can tell (see ``fetch(_:)``). When unsaved changes give the value to several objects
    /// (a save would refuse them), it returns the one with the lowest id.
    /// The key path starts at the class that declares the index; for a subclass, look up through that class
    /// and cast the result.
    /// - throws: ``ObjectStoreError`` `invalidQuery` when no unique index of `T` has `keyPath` as its only
    ///   field; `unregisteredClass`; `store`; and what loading an object throws.
    public func fetchUnique<T: PersistentObject, V: IndexableValue & Equatable>(
        _ type: T.Type = T.self, where keyPath: KeyPath<T, V>, equals value: V
    ) throws(ObjectStoreError) -> T? {
        try lookUpUnique(keyPath, value, idOnly: false)?.object
    }

    /// The id of the object ``fetchUnique(_:where:equals:)`` returns. When the index answers alone (no
    /// object of the class has unsaved changes in the context), no object is loaded: as ``fetchIDs(_:)``,
    /// it reads the stored state.
    /// - throws: what ``fetchUnique(_:where:equals:)`` throws.
    public func fetchUniqueID<T: PersistentObject, V: IndexableValue & Equatable>(
        _ type: T.Type = T.self, where keyPath: KeyPath<T, V>, equals value: V
    ) throws(ObjectStoreError) -> ObjectID? {
        try lookUpUnique(keyPath, value, idOnly: true)?.id
    }

    private func lookUpUnique<T: PersistentObject, V: IndexableValue & Equatable>(
        _ keyPath: KeyPath<T, V>, _ value: V, idOnly: Bool
    ) throws(ObjectStoreError) -> (id: ObjectID, object: T?)? {
        let indexed: IndexedType
        let index: Int
        if let last = confined.state.uniqueLookup, last.keyPath === keyPath {
            (indexed, index) = (last.type, last.index)
        } else {
            (indexed, index) = try uniqueIndex(keyPath)
            confined.state.uniqueLookup = (keyPath, indexed, index)
        }
        let snapshot = try readView()
        let key = CompoundKey(value.indexValue)
        let deleted = confined.state.pendingDeletes
        let held = heldCandidates(tags: indexed.tags)
        if held.isEmpty,
            case .holder(let found) = objectStore.indexes.uniqueHolder(indexed, index: index, key: key, at: snapshot)
        {
            guard let id = found, deleted.isEmpty || !deleted.contains(id) else { return nil }
            // Every object of the indexed class's index is one of its instances (or a subclass's). NaN is
            // tested on the object: the index holds NaN equal to NaN, `==` does not.
            if idOnly && ObjectIdentifier(T.self) == ObjectIdentifier(indexed.registered.type) && !key.first.isNaN {
                return (id, nil)
            }
            guard let object = try load(id) as? T else { return nil }
            // A model with no unsaved change holds its stored values (the index's); any other instance is
            // tested as it is in memory.
            if key.first.isNaN || cache.slot(id)?.isUnchangedModel != true {
                guard object[keyPath: keyPath] == value else { return nil }
            }
            return (id, object)
        }
        var candidates: [ObjectID]
        if let view = try objectStore.indexes.view(of: indexed, at: snapshot) {
            // The index answers for the stored objects it knows; the others are tested as they are.
            var ids = Set(view.data.ids(withKey: key, in: index))
            ids.formUnion(view.data.absent[index])
            ids.formUnion(view.changedSince)
            ids.formUnion(held)
            candidates = ids.sorted()
        } else {
            // The snapshot is older than the index can answer for: every object of the class.
            var ids = held
            for tag in indexed.tags { ids.formUnion(snapshot.ids(ofType: tag)) }
            candidates = ids.sorted()
        }
        if !deleted.isEmpty { candidates.removeAll { deleted.contains($0) } }
        // In id order, a few at a time: the first that holds the value is the answer.
        var position = 0
        while position < candidates.count {
            let slice = Array(candidates[position..<min(candidates.count, position + 256)])
            position += slice.count
            for (id, object) in zip(slice, try load(slice)) {
                guard let typed = (object ?? cache.object(id)) as? T, typed[keyPath: keyPath] == value else {
                    continue
                }
                return (id, typed)
            }
        }
        return nil
    }

    /// The indexed type of `T` and the number of its unique index on `keyPath` alone.
    private func uniqueIndex<T: PersistentObject, V>(_ keyPath: KeyPath<T, V>) throws(ObjectStoreError) -> (
        IndexedType, Int
    ) {
        guard registry.registration(of: T.self) != nil else {
            throw ObjectStoreError(
                .unregisteredClass, "\(T.self) is not registered with the object store", typeName: "\(T.self)")
        }
        guard let indexed = objectStore.indexes.indexedType(of: T.self, registry: registry),
            let index = indexed.definitions.firstIndex(where: {
                $0.isUnique && $0.keyPaths.count == 1 && $0.keyPaths[0] == keyPath
            })
        else {
            throw ObjectStoreError(
                .invalidQuery,
                "\(T.self) has no unique index on \(keyPath) alone (the key path must start at the class that"
                    + " declares the index: look up through it and cast)",
                typeName: "\(T.self)")
        }
        return (indexed, index)
    }
}
