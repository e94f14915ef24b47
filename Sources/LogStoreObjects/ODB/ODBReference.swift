/// A path of an ``ODB`` written as Swift member accesses: `odb.RSS.feeds[feedID].editedName`.
///
/// Reading a member as a `T?` (`String`, `Int`, `Double`, `Bool`, `Date`, `Data`) reads the value at
/// that path; assigning sets it (creating missing tables) and assigning nil deletes it:
/// ```swift
/// odb.RSS.feeds["abc"].editedName = "My feed"
/// let name: String? = odb.RSS.feeds["abc"].editedName
/// ```
/// Swift property setters cannot throw, so an assignment or a read that fails (a value where a table
/// is needed, a closed store) reports the ``ODBError`` to ``ODB/onAccessFailure(_:)``'s handler and
/// keeps it in ``ODB/lastAccessError`` (a failed read gives nil). Use ``ODB/setValue(_:at:applicationType:)-(ODBValue,_,_)``
/// and ``ODB/value(at:)`` where a failure must be handled.
@dynamicMemberLookup
public struct ODBReference: Sendable, CustomStringConvertible {
    /// The database.
    public let odb: ODB
    /// The path named.
    public let path: ODBPath

    /// A reference to `path` in `odb`.
    public init(odb: ODB, path: ODBPath) {
        self.odb = odb
        self.path = path
    }

    /// The child `key` of this path.
    public subscript(dynamicMember key: String) -> ODBReference {
        ODBReference(odb: odb, path: path.appending(key))
    }

    /// The child `key` of this path (for keys that are not Swift identifiers, or held in variables).
    public subscript(key: String) -> ODBReference {
        ODBReference(odb: odb, path: path.appending(key))
    }

    /// The value of the child `key` as a `T`; assigning sets it, assigning nil deletes it.
    public subscript<T: ODBValueConvertible>(dynamicMember key: String) -> T? {
        get { self[key].get(T.self) }
        nonmutating set { self[key].set(newValue) }
    }

    /// The value of the child `key` as a `T`; assigning sets it, assigning nil deletes it.
    public subscript<T: ODBValueConvertible>(key: String) -> T? {
        get { self[key].get(T.self) }
        nonmutating set { self[key].set(newValue) }
    }

    /// The value at this path, or nil (a failure is reported as the type's documentation says).
    public var value: ODBValue? {
        get { odb.reportingFailure(path) { () throws(ODBError) in try odb.value(at: path) } ?? nil }
        nonmutating set {
            odb.reportingFailure(path) { () throws(ODBError) in
                if let newValue { try odb.setValue(newValue, at: path) } else { try odb.delete(path) }
            }
        }
    }

    /// The table at this path, as a handle.
    public var table: ODBTable { ODBTable(odb: odb, path: path) }

    /// The path, dot-separated.
    public var description: String { path.description }

    func get<T: ODBValueConvertible>(_ type: T.Type) -> T? {
        value.flatMap { T(odbValue: $0) }
    }

    func set<T: ODBValueConvertible>(_ newValue: T?) {
        value = newValue?.odbValue
    }
}
