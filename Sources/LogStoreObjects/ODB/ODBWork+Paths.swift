import LogStore

/// Path operations on a work: resolving, creating and replacing along a path.
extension ODBWork {
    /// The table at `keys`, nil when something on the path is missing.
    /// - throws: ``ODBError`` `notATable` when a value is on the path (or at its end).
    func tableID(at keys: [String]) throws(ODBError) -> ObjectID? {
        guard var current = rootID else { return nil }
        for (index, key) in keys.enumerated() {
            switch try content(of: key, in: current) {
            case nil: return nil
            case .table(let id): current = id
            case .value:
                throw ODBError(
                    .notATable, "\(ODBPath(trusted: Array(keys[...index]))) is a value, not a table",
                    path: Array(keys[...index]))
            }
        }
        return current
    }

    /// What is at `keys`: nil when nothing is (a value on the way also means nothing is there).
    func content(at keys: [String]) throws(ODBError) -> ODBContent? {
        guard var current = rootID else { return nil }
        guard let last = keys.last else { return .table(current) }
        for key in keys.dropLast() {
            guard case .table(let id) = try content(of: key, in: current) else { return nil }
            current = id
        }
        return try content(of: last, in: current)
    }

    /// The table at `keys`, creating every missing table on the way; never deletes anything.
    /// - throws: ``ODBError`` `notATable` naming the first value on the path, `invalidPath` for an empty key.
    @discardableResult
    func ensureTable(_ keys: [String]) throws(ODBError) -> ObjectID {
        var current = rootForWriting()
        for (index, key) in keys.enumerated() {
            switch try content(of: key, in: current) {
            case .table(let id):
                current = id
            case .value:
                throw ODBError(
                    .notATable, "\(ODBPath(trusted: Array(keys[...index]))) is a value, not a table",
                    path: Array(keys[...index]))
            case nil:
                try Self.checkKey(key, keys)
                let id = newTable()
                try set(key, to: .table(id), in: current)
                current = id
            }
        }
        return current
    }

    /// Replaces whatever is at `keys` with a new, empty table; the parent must exist.
    /// - throws: ``ODBError`` `rootTable` for the root, `notFound` when the parent is missing, `notATable`
    ///   when it is a value.
    @discardableResult
    func createTable(_ keys: [String]) throws(ODBError) -> ObjectID {
        guard let key = keys.last else {
            throw ODBError(.rootTable, "the root table cannot be replaced", path: [])
        }
        try Self.checkKey(key, keys)
        let parent = try existingParent(of: keys)
        let id = newTable()
        try set(key, to: .table(id), in: parent)
        return id
    }

    /// Sets the value at `keys`, creating missing parent tables.
    /// - throws: ``ODBError`` `rootTable` for the root's path, `notATable` when a value is on the way.
    func setValue(_ value: ODBValue, applicationType: String?, at keys: [String]) throws(ODBError) {
        guard let key = keys.last else {
            throw ODBError(.rootTable, "the root table cannot be replaced by a value", path: [])
        }
        try Self.checkKey(key, keys)
        let parent = try ensureTable(Array(keys.dropLast()))
        try set(key, to: .value(value, applicationType: applicationType), in: parent)
    }

    /// Deletes what is at `keys` (a table with everything in it); false when nothing was there.
    /// - throws: ``ODBError`` `rootTable` for the root.
    func delete(_ keys: [String]) throws(ODBError) -> Bool {
        guard let key = keys.last else {
            throw ODBError(.rootTable, "the root table cannot be deleted", path: [])
        }
        let parent: ObjectID?
        do {
            parent = try tableID(at: Array(keys.dropLast()))
        } catch {
            if error.code == .notATable { return false }
            throw error
        }
        guard let parent else { return false }
        return try remove(key, from: parent) != nil
    }

    /// The parent table of `keys`, which must exist.
    func existingParent(of keys: [String]) throws(ODBError) -> ObjectID {
        let parentKeys = Array(keys.dropLast())
        if parentKeys.isEmpty { return rootForWriting() }
        guard let parent = try tableID(at: parentKeys) else {
            throw ODBError(.notFound, "table \(ODBPath(trusted: parentKeys)) does not exist", path: parentKeys)
        }
        return parent
    }

    /// Keys are non-empty.
    static func checkKey(_ key: String, _ keys: [String]) throws(ODBError) {
        guard !key.isEmpty else { throw ODBError(.invalidPath, "a key cannot be empty", path: keys) }
    }
}
