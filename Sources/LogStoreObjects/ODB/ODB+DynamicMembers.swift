import Synchronization

/// Member-access sugar: `odb.RSS.feeds[feedID].editedName = "x"` (see ``ODBReference``).
///
/// As in an ``ODBPath``, the root table is implied and `root` (in any case) as the first member names it:
/// `odb.root.RSS` is `odb.RSS`. A child of the root that is itself named `root` is `odb.root.root`.
extension ODB {
    /// The root's child `key` as a path reference; `root` is the root table itself.
    public subscript(dynamicMember key: String) -> ODBReference {
        ODBReference(odb: self, path: ODBPath([key]))
    }

    /// The root's child `key` as a path reference; `root` is the root table itself.
    public subscript(key: String) -> ODBReference {
        ODBReference(odb: self, path: ODBPath([key]))
    }

    /// The value of the root's child `key` as a `T`; assigning sets it, assigning nil deletes it. (`root`
    /// names the root table, which holds no value: it reads as nil, and an assignment fails with
    /// `rootTable`.)
    public subscript<T: ODBValueConvertible>(dynamicMember key: String) -> T? {
        get { ODBReference(odb: self, path: ODBPath([key])).get(T.self) }
        set { ODBReference(odb: self, path: ODBPath([key])).set(newValue) }
    }

    /// Calls `handler` with every error of a member-access read or assignment (instead of only keeping
    /// the last one in ``lastAccessError``).
    public func onAccessFailure(_ handler: @escaping @Sendable (ODBError) -> Void) {
        accessFailures.withLock { $0.handler = handler }
    }

    /// The last error of a member-access read or assignment, if any.
    public var lastAccessError: ODBError? { accessFailures.withLock { $0.last } }

    /// Runs `body`, reporting its error to the access-failure handler; nil when it failed.
    func reportingFailure<Result>(_ path: ODBPath, _ body: () throws(ODBError) -> Result) -> Result? {
        do {
            return try body()
        } catch {
            let handler = accessFailures.withLock { state in
                state.last = error
                return state.handler
            }
            handler?(error)
            return nil
        }
    }
}

/// The member-access failures of an ``ODB``.
struct ODBAccessFailures: Sendable {
    var handler: (@Sendable (ODBError) -> Void)?
    var last: ODBError?
}
