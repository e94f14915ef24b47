import LogStore

extension ObjectContext {
    /// The ids of the stored objects of class `type` (and its subclasses, unless `includingSubclasses` is
    /// false) in this context's snapshot (see ``refresh()``), from the index alone, in id order.
    ///
    /// `type` may be a protocol type: `(any Shape).self` finds the objects of every registered class that
    /// conforms to `Shape`, and `(any PersistentObject).self` every object. Whether a class conforms is
    /// told by the protocol's ``QueryableProtocol`` entry when the store lists one in `protocols:`, else by
    /// the class's ``PersistentModel/declaredConformances`` (what `@Persistent` records), else by loading
    /// one of the class's stored objects, once per class and protocol for the life of the
    /// ``ObjectStore``: the first query by a protocol may decode one object (with what it references
    /// eagerly) of each class it cannot otherwise tell, in a context of its own, so this context's
    /// loaded objects and changes are untouched. A class with no stored objects is never loaded. A
    /// protocol no class conforms to gives no ids. For example:
    ///
    /// ```swift
    /// let shapes = try context.ids(of: (any Shape).self)     // Circles and Rectangles
    /// ```
    /// - throws: ``ObjectStoreError`` `unregisteredClass` when `type` is a class left out of the
    ///   ``ObjectStore``'s `types:`; `store`; for a protocol type, what ``object(id:as:)`` throws when
    ///   loading an object to tell whether its class conforms fails.
    public func ids<T>(of type: T.Type, includingSubclasses: Bool = true) throws(ObjectStoreError) -> [ObjectID] {
        var ids: [ObjectID] = []
        let tags = try matchingTags(of: type, includingSubclasses: includingSubclasses)
        let view = try readView()
        for tag in tags { ids += view.ids(ofType: tag) }
        return ids.sorted()
    }

    /// The stored objects of class `type` (and its subclasses, unless `includingSubclasses` is false), or
    /// of the classes conforming to the protocol type `type` (`(any Shape).self`, see
    /// ``ids(of:includingSubclasses:)``).
    /// - throws: what ``ids(of:includingSubclasses:)`` and ``object(id:as:)`` throw.
    public func objects<T>(of type: T.Type, includingSubclasses: Bool = true) throws(ObjectStoreError) -> [T] {
        let ids = try ids(of: type, includingSubclasses: includingSubclasses)
        var objects: [T] = []
        objects.reserveCapacity(ids.count)
        try load(ids) { id, object throws(ObjectStoreError) in
            guard let object else { return }
            guard let typed = object as? T else {
                throw ObjectStoreError(
                    .typeMismatch, "object \(id) is a \(Swift.type(of: object).typeName), expected \(T.self)",
                    typeName: Swift.type(of: object).typeName, objectID: id)
            }
            objects.append(typed)
        }
        return objects
    }

    /// How many objects of class `type` are stored (subclasses included unless `includingSubclasses` is
    /// false), or of the classes conforming to the protocol type `type` (`(any Shape).self`), from the
    /// index alone (but for the objects a query by a protocol may load once, see
    /// ``ids(of:includingSubclasses:)``).
    /// - throws: what ``ids(of:includingSubclasses:)`` throws.
    public func count<T>(of type: T.Type, includingSubclasses: Bool = true) throws(ObjectStoreError) -> Int {
        let tags = try matchingTags(of: type, includingSubclasses: includingSubclasses)
        let view = try readView()
        return tags.reduce(0) { $0 + view.count(ofType: $1) }
    }

    /// How many persistent objects are stored, of every type (not counting the store's field-name records
    /// nor the tables of an ``ODB`` kept in the same store).
    /// - throws: ``ObjectStoreError`` `store`.
    public func count() throws(ObjectStoreError) -> Int {
        let view = try readView()
        return view.count() - view.count(ofType: TypeNames.keyRecordTag) - view.count(ofType: IndexCatalog.tag)
            - view.count(ofType: ODBFormat.tableTag)
            - view.count(ofType: ODBFormat.bucketTag)
    }

    /// Deletes every stored object of class `type` (subclasses included unless `includingSubclasses` is
    /// false), or of the classes conforming to the protocol type `type` (`(any Shape).self`, see
    /// ``ids(of:includingSubclasses:)``), on the next save. The save fails (engine `stillReferenced`) when an object that is not
    /// deleted still references one of them.
    ///
    /// The objects are listed from the index, whose type tags may come from a hint file; each one's record
    /// is read (its frame header, not its payload) to check its type before anything is marked, so an
    /// object of another type is never deleted.
    /// - throws: ``ObjectStoreError`` `unregisteredClass` when `type` is a class left out of the
    ///   ``ObjectStore``'s `types:`; `typeMismatch` when the index lists an object whose record is of
    ///   another type (the index disagrees with the segment: nothing is marked; open the store again after
    ///   deleting its hint files, or run `verify`); `store`; for a protocol type, what
    ///   ``object(id:as:)`` throws when loading an object to tell whether its class conforms fails.
    public func deleteAll<T>(of type: T.Type, includingSubclasses: Bool = true) throws(ObjectStoreError) {
        let tags = try matchingTags(of: type, includingSubclasses: includingSubclasses)
        let view = try readView()
        var ids: [ObjectID] = []
        for tag in tags { ids += view.ids(ofType: tag) }
        for id in ids {
            let stored: UInt32?
            do {
                stored = try view.header(of: id)?.typeTag
            } catch {
                throw ObjectStoreError(error)
            }
            guard let stored, !tags.contains(stored) else { continue }
            let name = registry.type(forTag: stored)?.name ?? "type tag \(stored)"
            throw ObjectStoreError(
                .typeMismatch,
                "object \(id) is listed as a \(T.self) by the index, but its record is a \(name): the index"
                    + " disagrees with the segment (a damaged hint file?); nothing is deleted",
                typeName: name, objectID: id)
        }
        for id in ids { markDeleted(id) }
    }

    /// Deletes every stored object and removes every named root, on the next save. The tables of an
    /// ``ODB`` kept in the same store (its root `odb.root` and its records) are left alone.
    /// - throws: ``ObjectStoreError`` `store`.
    public func removeAll() throws(ObjectStoreError) {
        let view = try readView()
        for name in view.roots().keys.sorted() where name != ODBFormat.rootName {
            confined.state.pendingRoots.append((name, nil))
        }
        for id in view.ids() {
            let header: (typeTag: UInt32, references: [ObjectID])?
            do {
                header = try view.header(of: id)
            } catch {
                throw ObjectStoreError(error)
            }
            guard let header, header.typeTag != TypeNames.keyRecordTag, header.typeTag != IndexCatalog.tag,
                header.typeTag != ODBFormat.tableTag,
                header.typeTag != ODBFormat.bucketTag
            else { continue }
            markDeleted(id)
        }
        for (id, slot) in cache.state.slots.entries where slot.storedHash == nil { forget(id) }
    }

    func markDeleted(_ id: ObjectID) {
        cache.slot(id)?.strongHold = nil
        confined.state.pendingDeletes.insert(id)
    }
}
