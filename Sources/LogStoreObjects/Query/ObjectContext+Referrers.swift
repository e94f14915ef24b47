import LogStore

extension ObjectContext {
    /// The objects of class `T` whose field `keyPath` refers to `object` (the field holds it, or an
    /// array field holds it among others), as of this context's snapshot and with its unsaved changes as
    /// ``fetch(_:)`` sees them, in id order.
    ///
    /// With an index on the field (``IndexDefinition/references(_:field:name:)``) the referrers are read
    /// from it; otherwise every object of `T` is loaded and tested. For example:
    ///
    /// ```swift
    /// let urgent = try context.referrers(to: urgentLabel, through: \Ticket.labels)
    /// ```
    /// - throws: ``ObjectStoreError`` `unregisteredClass`; `store`; and what loading an object throws.
    public func referrers<T: PersistentObject, V>(to object: any PersistentObject, through keyPath: KeyPath<T, V>)
        throws(ObjectStoreError) -> [T]
    {
        guard let target = id(of: object) else { return [] }
        let tags = try matchingTags(of: T.self, includingSubclasses: true)
        let view = try readView()
        var candidates = heldCandidates(tags: Set(tags))
        var indexed = false
        if let type = objectStore.indexes.indexedType(of: T.self, registry: registry),
            let number = type.definitions.firstIndex(where: { $0.keyPaths == [keyPath as AnyKeyPath] }),
            let index = try objectStore.indexes.view(of: type, at: view)
        {
            // An object whose record lacks the field refers to nothing through it: not a candidate.
            candidates.formUnion(index.data.ids(withKey: CompoundKey(.reference(target)), in: number))
            candidates.formUnion(index.changedSince)
            indexed = true
        }
        if !indexed { for tag in tags { candidates.formUnion(view.ids(ofType: tag)) } }
        let deleted = confined.state.pendingDeletes
        let ids = candidates.filter { !deleted.contains($0) }.sorted()
        var found: [T] = []
        for (id, loaded) in zip(ids, try load(ids)) {
            guard let typed = (loaded ?? cache.object(id)) as? T else { continue }
            let value: Any = typed[keyPath: keyPath]
            if let one = value as? any PersistentObject, one === object {
                found.append(typed)
            } else if let many = value as? [any PersistentObject], many.contains(where: { $0 === object }) {
                found.append(typed)
            }
        }
        return found
    }
}
