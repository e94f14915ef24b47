import LogStore

extension ObjectStore {
    /// Opens the moment `name` that the store at `directory` retained (``LogStore/Store/retain(as:)``), read-only:
    /// the whole object graph exactly as it was at the moment's commit. Contexts load from it as from any
    /// store; a save fails with code `store` (the engine's `readOnly`).
    ///
    /// ```swift
    /// let before = try ObjectStore.open(at: "/var/db/tasks", retained: "before-import", types: [Task.self])
    /// let old = try before.makeContext().objects(of: Task.self)
    /// ```
    /// - throws: ``ObjectStoreError`` `store` when the moment cannot be opened (no such moment: the engine's
    ///   `notFound`), and what ``init(store:types:protocols:tuning:)`` throws.
    public static func open(
        at directory: String, retained name: String, types: [any PersistentObject.Type],
        protocols: [QueryableProtocol] = [], tuning: ObjectStoreTuning = ObjectStoreTuning()
    ) throws(ObjectStoreError) -> ObjectStore {
        try over(
            { () throws(LogStoreError) in try Store.open(at: directory, retained: name) }, types: types,
            protocols: protocols, tuning: tuning)
    }
}
