import LogStore

/// Queries by a protocol type: which registered classes conform.
///
/// Swift can test an instance against a protocol type given at run time (`object is T`), but not a class
/// (`Circle.self is any Shape.Type` needs the protocol named in the source). So when neither the store's
/// `protocols:` nor the class's ``PersistentModel/declaredConformances`` tell, the first query loads one
/// object of the class, in a context of its own reading this context's snapshot, and tests it; the answer
/// is kept in the object store's ``ConformanceCache``. A class with no stored objects is not looked at: it
/// adds nothing to the answer.
extension ObjectContext {
    /// The tags of the registered classes a query by `type` reads (see
    /// ``TypeRegistry/tags(matching:includingSubclasses:conforms:)``).
    /// - throws: ``ObjectStoreError`` `unregisteredClass`; when an object had to be loaded, what
    ///   ``object(id:as:)`` throws.
    func matchingTags<T>(of type: T.Type, includingSubclasses: Bool) throws(ObjectStoreError) -> [UInt32] {
        try registry.tags(matching: type, includingSubclasses: includingSubclasses) {
            registered throws(ObjectStoreError) -> Bool in
            try objects(of: registered, conformTo: T.self)
        }
    }

    /// Whether the objects of the class `registered` are `T`s: as found before, or by loading one of
    /// them from this context's snapshot; false when the snapshot holds none.
    private func objects<T>(of registered: RegisteredType, conformTo _: T.Type) throws(ObjectStoreError) -> Bool {
        let cache = objectStore.conformances
        if let known = cache.answer(registered.type, T.self) { return known }
        let view = try readView()
        for tag in registered.allTags where view.count(ofType: tag) > 0 {
            // A context of its own: this one's identity cache, holds and snapshot stay as they are.
            let probe = objectStore.makeContext()
            probe.confined.state.snapshot = view
            for id in view.ids(ofType: tag) {
                guard let object = try probe.load(id) else { continue }
                let conforms = object is T
                cache.record(conforms, registered.type, T.self)
                return conforms
            }
        }
        return false
    }
}
