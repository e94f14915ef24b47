/// A table of an ``ODB``, by path: every call resolves the path again, so the handle names whatever
/// table is at that path when it is used (paths are queries, not references).
///
/// For example:
/// ```swift
/// let feed = try odb.ensureTable(["RSS", "feeds", "abc"])
/// try feed.setValue("My feed", forKey: "editedName")
/// let keys = try feed.keys()          // ["editedName"]
/// ```
public struct ODBTable: Sendable {
    /// The database.
    public let odb: ODB
    /// The table's path.
    public let path: ODBPath

    /// A handle for the table at `path` of `odb` (which need not exist yet).
    public init(odb: ODB, path: ODBPath) {
        self.odb = odb
        self.path = path
    }

    /// The keys of the children, sorted case-insensitively.
    /// - throws: ``ODBError`` `notFound` when the table does not exist (any more).
    public func keys() throws(ODBError) -> [String] { try odb.keys(at: path) }

    /// The children, sorted case-insensitively by key.
    /// - throws: ``ODBError`` `notFound` when the table does not exist (any more).
    public func children() throws(ODBError) -> [ODBChild] { try odb.children(at: path) }

    /// The number of children.
    /// - throws: ``ODBError`` `notFound` when the table does not exist (any more).
    public func count() throws(ODBError) -> Int { try odb.count(at: path) }

    /// The value of `key`, or nil.
    /// - throws: what ``ODB/value(at:)`` throws.
    public func value(forKey key: String) throws(ODBError) -> ODBValue? { try odb.value(at: path.appending(key)) }

    /// The value of `key` as a `T`, or nil.
    /// - throws: what ``ODB/value(at:)`` throws.
    public func value<T: ODBValueConvertible>(forKey key: String, as type: T.Type = T.self) throws(ODBError) -> T? {
        try odb.value(at: path.appending(key), as: type)
    }

    /// What `key` holds, or nil.
    /// - throws: what ``ODB/value(at:)`` throws.
    public func object(forKey key: String) throws(ODBError) -> ODBObject? { try odb.object(at: path.appending(key)) }

    /// Sets `key` to `value` (creating the table when missing).
    /// - throws: what ``ODB/setValue(_:at:applicationType:)-(ODBValue,_,_)`` throws.
    public func setValue(_ value: ODBValue, forKey key: String, applicationType: String? = nil) throws(ODBError) {
        try odb.setValue(value, at: path.appending(key), applicationType: applicationType)
    }

    /// Sets `key` to `value` (creating the table when missing).
    /// - throws: what ``ODB/setValue(_:at:applicationType:)-(ODBValue,_,_)`` throws.
    public func setValue<T: ODBValueConvertible>(_ value: T, forKey key: String, applicationType: String? = nil)
        throws(ODBError)
    {
        try odb.setValue(value.odbValue, at: path.appending(key), applicationType: applicationType)
    }

    /// The child table `key`, or nil when there is none.
    /// - throws: ``ODBError`` `notATable` when `key` holds a value.
    public func table(forKey key: String) throws(ODBError) -> ODBTable? { try odb.table(at: path.appending(key)) }

    /// The child table `key`, created when missing (and this table too).
    /// - throws: what ``ODB/ensureTable(_:)`` throws.
    @discardableResult
    public func ensureTable(forKey key: String) throws(ODBError) -> ODBTable {
        try odb.ensureTable(path.appending(key))
    }

    /// Replaces `key` with a new, empty table.
    /// - throws: what ``ODB/createTable(_:)`` throws.
    @discardableResult
    public func createTable(forKey key: String) throws(ODBError) -> ODBTable {
        try odb.createTable(path.appending(key))
    }

    /// Deletes `key` (a value, or a table with everything in it); returns whether it was there.
    /// - throws: what ``ODB/delete(_:)`` throws.
    @discardableResult
    public func delete(forKey key: String) throws(ODBError) -> Bool { try odb.delete(path.appending(key)) }

    /// Deletes every child.
    /// - throws: what ``ODB/deleteAll(in:)`` throws.
    public func deleteAll() throws(ODBError) { try odb.deleteAll(in: path) }
}
