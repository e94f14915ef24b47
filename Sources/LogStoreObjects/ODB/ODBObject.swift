import LogStore

/// What is at a path of an ``ODB``: a table, or a value with its optional application type.
public enum ODBObject: Sendable, Equatable {
    /// A table.
    case table
    /// A value, with the application type it was stored with (e.g. `"OPML"` on a string), if any.
    case value(ODBValue, applicationType: String?)

    /// The value, or nil for a table.
    public var value: ODBValue? {
        guard case .value(let value, _) = self else { return nil }
        return value
    }

    /// The application type of a value, or nil.
    public var applicationType: String? {
        guard case .value(_, let applicationType) = self else { return nil }
        return applicationType
    }

    /// Whether this is a table.
    public var isTable: Bool { self == .table }
}

/// One child of a table: its key, spelled as it was created, and what it is.
public struct ODBChild: Sendable, Equatable {
    /// The key as it was created.
    public let key: String
    /// The child.
    public let object: ODBObject

    /// Makes a child.
    public init(key: String, object: ODBObject) {
        self.key = key
        self.object = object
    }
}

extension ODBObject {
    /// What `content` shows of itself (nil for nothing).
    init?(_ content: ODBContent?) {
        switch content {
        case nil: return nil
        case .table: self = .table
        case .value(let value, let applicationType)?: self = .value(value, applicationType: applicationType)
        }
    }
}

extension ODBWork {
    /// What is at `keys`, as the public API shows it.
    func object(at keys: [String]) throws(ODBError) -> ODBObject? {
        if keys.isEmpty { return .table }
        switch try content(at: keys) {
        case nil: return nil
        case .table: return .table
        case .value(let value, let applicationType): return .value(value, applicationType: applicationType)
        }
    }

    /// The children of the table at `keys`, sorted by folded key.
    /// - throws: ``ODBError`` `notFound` when there is no table there, `notATable` for a value.
    func children(at keys: [String]) throws(ODBError) -> [ODBChild] {
        guard let table = try existingTable(at: keys) else { return [] }
        return try entries(of: table).map { entry in
            switch entry.content {
            case .table: ODBChild(key: entry.key, object: .table)
            case .value(let value, let type): ODBChild(key: entry.key, object: .value(value, applicationType: type))
            }
        }
    }

    /// The number of children of the table at `keys`.
    /// - throws: what ``children(at:)`` throws.
    func count(at keys: [String]) throws(ODBError) -> Int {
        guard let table = try existingTable(at: keys) else { return 0 }
        return try count(of: table)
    }

    /// The table at `keys`; nil for the root of a store that has none yet (an empty table).
    /// - throws: ``ODBError`` `notFound` when there is no table there, `notATable` for a value.
    func existingTable(at keys: [String]) throws(ODBError) -> ObjectID? {
        if keys.isEmpty && rootID == nil { return nil }
        guard let table = try tableID(at: keys) else {
            throw ODBError(.notFound, "table \(ODBPath(trusted: keys)) does not exist", path: keys)
        }
        return table
    }
}
