import LogStore

/// A store of persistent objects: an engine ``Store``, the registered classes and the field-name catalog.
///
/// One `ObjectStore` per store directory and process; it is `Sendable`, so any thread may make contexts
/// from it. Each thread or task works through its own ``ObjectContext``. For example:
///
/// ```swift
/// let objects = try ObjectStore.open(at: path, types: [Contents.self, Page.self, Layer.self,
///                                                      Circle.self, Rectangle.self])
/// let context = objects.makeContext()
/// ```
public final class ObjectStore: Sendable {
    /// The engine underneath (for compaction, verification, statistics).
    public let store: Store
    let registry: TypeRegistry
    let catalog: KeyCatalog
    /// Which registered classes conform to the protocols queries named, as loading their objects told.
    let conformances = ConformanceCache()
    /// Lets runs of ``update(attempts:_:)`` that keep conflicting through first.
    let contention = ContentionGate()
    /// The indexes the registered classes declare (and those their relationships keep).
    let indexes: ObjectIndexes
    /// The relationships the registered classes declare.
    let relationships: RelationshipTable

    /// What opening repaired: the torn tail of the last, unacknowledged write cut after a crash (its bytes
    /// saved to a side file next to the segment), or nil when the log was clean. Only a crash can leave a
    /// torn tail; after a clean close any damage fails the open instead. Check it after opening when
    /// you want to tell your user that the moments before a crash were not saved.
    public var recovery: RecoveryReport? { store.recovery }

    /// What opening noticed without it being damage (a hint file it could not use, a missing identity
    /// file in a store made before identity files existed).
    public var openNotes: [String] { store.openNotes }

    /// An object store over an open engine store.
    /// - parameters:
    ///   - store: the engine store; the object store does not close it.
    ///   - types: every persistent class the contexts may load or save, subclasses included.
    ///   - protocols: optional: protocols queries by type may name, each with a test of whether a class
    ///     conforms, so that a query by one of them loads no object to find out (see
    ///     ``QueryableProtocol``). Queries by any other protocol work without it.
    ///   - tuning: settings most users never need (see ``ObjectStoreTuning``).
    /// - throws: ``ObjectStoreError`` `invalidRegistration` (duplicate or colliding type names, a protocol
    ///   listed twice), or `corruptPayload` / `store` when the stored field names cannot be read.
    public init(
        store: Store, types: [any PersistentObject.Type], protocols: [QueryableProtocol] = [],
        tuning: ObjectStoreTuning = ObjectStoreTuning()
    ) throws(ObjectStoreError) {
        self.store = store
        self.registry = try TypeRegistry(types, protocols: protocols, usingFieldCoding: tuning.usesFieldCoding)
        self.catalog = try KeyCatalog(loadingFrom: store)
        self.relationships = try RelationshipTable(registry: registry)
        self.indexes = try ObjectIndexes(
            registry: registry, relationships: relationships, store: store, catalog: catalog,
            inBackground: tuning.appliesIndexesInBackground, backlogLimit: tuning.indexBacklogLimit)
        try IndexCatalog.record(indexes.types, registered: Set(registry.types.map(\.name)), in: store)
    }

    /// Opens (or creates) the store in `directory` and makes an object store over it.
    /// - throws: ``ObjectStoreError`` `store` when the engine cannot open the directory, and what
    ///   ``init(store:types:protocols:tuning:)`` throws.
    public static func open(
        at directory: String, options: StoreOptions = StoreOptions(), types: [any PersistentObject.Type],
        protocols: [QueryableProtocol] = [], tuning: ObjectStoreTuning = ObjectStoreTuning()
    ) throws(ObjectStoreError) -> ObjectStore {
        try over(
            { () throws(LogStoreError) in try Store.open(at: directory, options: options) }, types: types,
            protocols: protocols, tuning: tuning)
    }

    /// An object store over the engine store `open` opens (closed again when the object store cannot be made).
    static func over(
        _ open: () throws(LogStoreError) -> Store, types: [any PersistentObject.Type], protocols: [QueryableProtocol],
        tuning: ObjectStoreTuning
    ) throws(ObjectStoreError) -> ObjectStore {
        let store: Store
        do {
            store = try open()
        } catch {
            throw ObjectStoreError(error)
        }
        do {
            return try ObjectStore(store: store, types: types, protocols: protocols, tuning: tuning)
        } catch {
            try? store.close()
            throw error
        }
    }

    /// How many objects queries by a protocol type loaded to find out whether their class conforms (at
    /// most one per class and protocol: the answer is kept).
    @_spi(Testing) public var conformanceProbes: Int { conformances.probes }

    /// What the indexes' applier has still to do (0 once it has applied every batch committed so far).
    @_spi(Testing) public var indexBacklog: Int { indexes.backlog }

    /// How many index builds read an index file instead of every record of their class.
    @_spi(Testing) public var indexFilesRead: Int { indexes.filesRead }

    /// Why index files could not be read or written since the open (each such index is built from the
    /// records instead).
    public var indexFileNotes: [String] { indexes.fileNotes }

    /// A new context: its own identity cache and unsaved changes, for use on one thread or task at a time.
    public func makeContext() -> ObjectContext {
        ObjectContext(self)
    }

    /// Writes the index files of the indexes built since the open (so the next open reads them instead of
    /// every record of their classes), then closes the engine store. Contexts fail with code `store`
    /// afterwards.
    /// - throws: ``ObjectStoreError`` `store` when the final flush fails.
    public func close() throws(ObjectStoreError) {
        indexes.writeFiles()
        do {
            try store.close()
        } catch {
            throw ObjectStoreError(error)
        }
    }

    /// The type name stored under `tag`: a registered class's, or one a field-name record remembers.
    func typeName(forTag tag: UInt32) -> String? {
        if let registered = registry.type(forTag: tag) { return registered.name }
        for name in catalog.snapshot().names where name.hasPrefix(TypeNames.catalogTypePrefix) {
            let typeName = String(name.dropFirst(TypeNames.catalogTypePrefix.count))
            if TypeNames.tag(for: typeName) == tag { return typeName }
        }
        return nil
    }
}
