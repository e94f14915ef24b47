import LogStore

/// An error of the object database (``ODB``): what went wrong and at which path.
///
/// Codes grow over time; match on ``code``. Engine errors arrive as code `store` with the
/// ``LogStoreError`` as ``underlying``.
public struct ODBError: Error, Sendable, CustomStringConvertible {
    /// What kind of error this is.
    public struct Code: Hashable, Sendable, CustomStringConvertible {
        /// The code's name, e.g. `notATable`.
        public let name: String
        private init(_ name: String) { self.name = name }

        /// Something on the path (named by ``ODBError/path``) is a value where a table is needed: e.g.
        /// `ensureTable(["a", "b"])` when `a` is a string.
        public static let notATable = Code("notATable")
        /// The path (or the parent table an operation needs) does not exist: e.g. `createTable` under a
        /// missing parent.
        public static let notFound = Code("notFound")
        /// The path is not valid: an empty key, or an empty path where a key is needed.
        public static let invalidPath = Code("invalidPath")
        /// The root table cannot be deleted or replaced.
        public static let rootTable = Code("rootTable")
        /// Concurrent writers kept changing the records a change read, more often than the retry limit;
        /// nothing was written.
        public static let conflict = Code("conflict")
        /// A stored table or bucket record is not valid ODB encoding (``ODBError/objectID`` names it).
        public static let corruptRecord = Code("corruptRecord")
        /// A JSON document cannot be imported (the message says where and why).
        public static let invalidJSON = Code("invalidJSON")
        /// The engine failed; see ``ODBError/underlying``.
        public static let store = Code("store")

        /// The code's name.
        public var description: String { name }
    }

    /// What kind of error this is.
    public var code: Code
    /// A sentence saying what happened.
    public var message: String
    /// The path concerned (keys as given, without `root`), when known.
    public var path: [String]?
    /// The record concerned, when known.
    public var objectID: ObjectID?
    /// The error that caused this one (a ``LogStoreError`` for code `store`).
    public var underlying: (any Error & Sendable)?

    /// Creates an error.
    public init(
        _ code: Code, _ message: String, path: [String]? = nil, objectID: ObjectID? = nil,
        underlying: (any Error & Sendable)? = nil
    ) {
        self.code = code
        self.message = message
        self.path = path
        self.objectID = objectID
        self.underlying = underlying
    }

    /// Wraps an engine error.
    init(_ error: LogStoreError, path: [String]? = nil) {
        self.init(.store, error.description, path: path, underlying: error)
    }

    /// `code: message (path …, object …)`.
    public var description: String {
        var text = "\(code): \(message)"
        if let path { text += " (path \(ODBPath(path).description))" }
        if let objectID { text += " (record \(objectID))" }
        return text
    }
}
