/// The tables as of one snapshot, inside ``ODB/read(_:)``; a ``ODBTransaction`` also sees its own changes.
///
/// Use it only inside the closure it is given to, on that closure's thread.
public class ODBReadView {
    let work: ODBWork

    init(work: ODBWork) {
        self.work = work
    }

    /// The value at `path`, or nil when there is none.
    /// - throws: ``ODBError`` `store` or `corruptRecord` when the store cannot be read.
    public final func value(at path: ODBPath) throws(ODBError) -> ODBValue? {
        try object(at: path)?.value
    }

    /// The value at `path` as a `T`, or nil when there is none or it is of another kind.
    /// - throws: what ``value(at:)`` throws.
    public final func value<T: ODBValueConvertible>(at path: ODBPath, as type: T.Type = T.self) throws(ODBError) -> T? {
        try value(at: path).flatMap { T(odbValue: $0) }
    }

    /// What is at `path`, or nil for nothing.
    /// - throws: what ``value(at:)`` throws.
    public final func object(at path: ODBPath) throws(ODBError) -> ODBObject? {
        // A read view takes the warm path of ``ODB/object(at:)`` on its snapshot; a transaction does not
        // (it must note the version of every record it reads, and see its own changes).
        if !work.tracksReads, !path.keys.isEmpty, let root = work.rootID,
            let content = work.cache.content(at: path.keys, below: root, in: work.snapshot)
        {
            return ODBObject(content)
        }
        return try work.object(at: path.keys)
    }

    /// The children of the table at `path`, sorted case-insensitively by key.
    /// - throws: ``ODBError`` `notFound` when there is no table there, `notATable` when it is a value.
    public final func children(at path: ODBPath) throws(ODBError) -> [ODBChild] {
        try work.children(at: path.keys)
    }

    /// The keys of the table at `path`, sorted case-insensitively.
    /// - throws: what ``children(at:)`` throws.
    public final func keys(at path: ODBPath) throws(ODBError) -> [String] {
        try children(at: path).map(\.key)
    }

    /// The number of children of the table at `path`.
    /// - throws: what ``children(at:)`` throws.
    public final func count(at path: ODBPath) throws(ODBError) -> Int {
        try work.count(at: path.keys)
    }
}

/// The changes of one ``ODB/transaction(_:)``, written together when its closure returns.
///
/// Use it only inside the closure it is given to, on that closure's thread.
public final class ODBTransaction: ODBReadView {
    /// Sets the value at `path`, creating missing tables on the way.
    /// - throws: what ``ODB/setValue(_:at:applicationType:)-(ODBValue,_,_)`` throws.
    public func setValue(_ value: ODBValue, at path: ODBPath, applicationType: String? = nil) throws(ODBError) {
        try work.setValue(value, applicationType: applicationType, at: path.keys)
    }

    /// Sets the value at `path` to `value`.
    /// - throws: what ``ODB/setValue(_:at:applicationType:)-(ODBValue,_,_)`` throws.
    public func setValue<T: ODBValueConvertible>(_ value: T, at path: ODBPath, applicationType: String? = nil)
        throws(ODBError)
    {
        try work.setValue(value.odbValue, applicationType: applicationType, at: path.keys)
    }

    /// Creates every missing table on `path`.
    /// - throws: what ``ODB/ensureTable(_:)`` throws.
    public func ensureTable(_ path: ODBPath) throws(ODBError) {
        try work.ensureTable(path.keys)
    }

    /// Replaces whatever is at `path` with a new, empty table.
    /// - throws: what ``ODB/createTable(_:)`` throws.
    public func createTable(_ path: ODBPath) throws(ODBError) {
        try work.createTable(path.keys)
    }

    /// Deletes what is at `path`; returns whether something was there.
    /// - throws: what ``ODB/delete(_:)`` throws.
    @discardableResult
    public func delete(_ path: ODBPath) throws(ODBError) -> Bool {
        try work.delete(path.keys)
    }

    /// Deletes every child of the table at `path`.
    /// - throws: what ``ODB/deleteAll(in:)`` throws.
    public func deleteAll(in path: ODBPath) throws(ODBError) {
        guard let table = try work.existingTable(at: path.keys) else { return }
        try work.removeAll(in: table)
    }
}
