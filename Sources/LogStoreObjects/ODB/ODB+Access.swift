import LogStore

/// Reading and changing one path at a time: each call is atomic and sees the store as it is then.
extension ODB {
    /// The value at `path`, or nil when there is none (nothing there, a table, or a value on the way).
    ///
    /// For example:
    /// ```swift
    /// let name = try odb.value(at: ["RSS", "feeds", "abc", "editedName"])?.stringValue
    /// ```
    /// - throws: ``ODBError`` `store` or `corruptRecord` when the store cannot be read.
    public func value(at path: ODBPath) throws(ODBError) -> ODBValue? {
        try object(at: path)?.value
    }

    /// The value at `path` as a `T`, or nil when there is none or it is of another kind.
    /// - throws: what ``value(at:)`` throws.
    public func value<T: ODBValueConvertible>(at path: ODBPath, as type: T.Type = T.self) throws(ODBError) -> T? {
        try value(at: path).flatMap { T(odbValue: $0) }
    }

    /// What is at `path`: a table, a value (with its application type), or nil for nothing.
    /// - throws: what ``value(at:)`` throws.
    public func object(at path: ODBPath) throws(ODBError) -> ODBObject? {
        // The warm path: every table on the way decoded in the cache at the snapshot's version.
        if let root = knownRoot, !path.keys.isEmpty {
            let snapshot: Snapshot
            do {
                snapshot = try store.snapshot()
            } catch {
                throw ODBError(error)
            }
            if let content = cache.content(at: path.keys, below: root, in: snapshot) { return ODBObject(content) }
        }
        return try reading { work throws(ODBError) in try work.object(at: path.keys) }
    }

    /// The table at `path`, or nil when nothing is there.
    /// - throws: ``ODBError`` `notATable` when a value is there or on the way.
    public func table(at path: ODBPath) throws(ODBError) -> ODBTable? {
        if path.isRoot { return ODBTable(odb: self, path: path) }
        return try reading { work throws(ODBError) in
            try work.tableID(at: path.keys) == nil ? nil : ODBTable(odb: self, path: path)
        }
    }

    /// The children of the table at `path`, sorted case-insensitively by key.
    /// - throws: ``ODBError`` `notFound` when there is no table there, `notATable` when it is a value.
    public func children(at path: ODBPath) throws(ODBError) -> [ODBChild] {
        try reading { work throws(ODBError) in try work.children(at: path.keys) }
    }

    /// The keys of the table at `path`, sorted case-insensitively.
    /// - throws: what ``children(at:)`` throws.
    public func keys(at path: ODBPath) throws(ODBError) -> [String] {
        try children(at: path).map(\.key)
    }

    /// The number of children of the table at `path`.
    /// - throws: what ``children(at:)`` throws.
    public func count(at path: ODBPath) throws(ODBError) -> Int {
        try reading { work throws(ODBError) in try work.count(at: path.keys) }
    }

    /// Creates every missing table on `path` and returns the table; never deletes anything.
    ///
    /// For example:
    /// ```swift
    /// let feed = try odb.ensureTable(["RSS", "feeds", "abc"])
    /// ```
    /// - throws: ``ODBError`` `notATable` naming the first value on the path (nothing is changed then),
    ///   `invalidPath` for an empty key.
    @discardableResult
    public func ensureTable(_ path: ODBPath) throws(ODBError) -> ODBTable {
        _ = try changing { work throws(ODBError) in try work.ensureTable(path.keys) }
        return ODBTable(odb: self, path: path)
    }

    /// Replaces whatever is at `path` (a value, or a table with everything in it) with a new, empty
    /// table. The parent table must exist.
    /// - throws: ``ODBError`` `notFound` when the parent does not exist, `notATable` when it is a value,
    ///   `rootTable` for the root.
    @discardableResult
    public func createTable(_ path: ODBPath) throws(ODBError) -> ODBTable {
        _ = try changing { work throws(ODBError) in try work.createTable(path.keys) }
        return ODBTable(odb: self, path: path)
    }

    /// Sets the value at `path`, creating or replacing it (a table there is replaced, with everything
    /// in it); missing tables on the way are created.
    ///
    /// For example:
    /// ```swift
    /// try odb.setValue(.string("<opml/>"), at: ["RSS", "subscriptions"], applicationType: "OPML")
    /// ```
    /// - parameter applicationType: the application's name for the value's encoding, kept with it.
    /// - throws: ``ODBError`` `notATable` when a value is on the way, `rootTable` for the root,
    ///   `invalidPath` for an empty key.
    public func setValue(_ value: ODBValue, at path: ODBPath, applicationType: String? = nil) throws(ODBError) {
        try changing { work throws(ODBError) in
            try work.setValue(value, applicationType: applicationType, at: path.keys)
        }
    }

    /// Sets the value at `path` to `value` (a `String`, `Int`, `Double`, `Bool`, `Date` or `Data`).
    /// - throws: what ``setValue(_:at:applicationType:)-(ODBValue,_,_)`` throws.
    public func setValue<T: ODBValueConvertible>(_ value: T, at path: ODBPath, applicationType: String? = nil)
        throws(ODBError)
    {
        try setValue(value.odbValue, at: path, applicationType: applicationType)
    }

    /// Deletes what is at `path`: a value, or a table with everything in it.
    /// - returns: whether something was there.
    /// - throws: ``ODBError`` `rootTable` for the root.
    @discardableResult
    public func delete(_ path: ODBPath) throws(ODBError) -> Bool {
        try changing { work throws(ODBError) in try work.delete(path.keys) }
    }

    /// Deletes every child of the table at `path`.
    /// - throws: ``ODBError`` `notFound` when there is no table there, `notATable` when it is a value.
    public func deleteAll(in path: ODBPath) throws(ODBError) {
        try changing { work throws(ODBError) in
            guard let table = try work.existingTable(at: path.keys) else { return }
            try work.removeAll(in: table)
        }
    }

    /// Runs `body` with a view of one snapshot: every read in it sees the same moment.
    ///
    /// For example:
    /// ```swift
    /// let (name, url) = try odb.read { view in
    ///     (try view.value(at: ["feed", "name"]), try view.value(at: ["feed", "url"]))
    /// }
    /// ```
    /// - throws: what `body` throws, and ``ODBError`` `store` when no snapshot can be taken.
    public func read<Result>(_ body: (ODBReadView) throws -> Result) throws -> Result {
        let view = ODBReadView(work: try ODBWork(store: store, cache: cache, knownRoot: knownRoot, tracksReads: false))
        return try body(view)
    }

    /// Runs `body` as one atomic transaction: its changes are written together, or none is. Reads in it
    /// see one snapshot plus its own changes. When a table it read was changed by another writer before
    /// it committed, `body` runs again on a fresh snapshot (up to ``maxAttempts`` times in all), so keep
    /// side effects out of it.
    ///
    /// For example:
    /// ```swift
    /// try odb.transaction { tx in
    ///     let count = try tx.value(at: ["stats", "count"], as: Int.self) ?? 0
    ///     try tx.setValue(.int(count + 1), at: ["stats", "count"])
    /// }
    /// ```
    /// - throws: what `body` throws (nothing is written then), ``ODBError`` `conflict` after the last
    ///   attempt, or `store`.
    public func transaction<Result>(_ body: (ODBTransaction) throws -> Result) throws -> Result {
        try retryingOnConflict("transaction", { work in try body(ODBTransaction(work: work)) }, wrap: { $0 })
    }
}
