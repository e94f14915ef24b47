import LogStore

/// An error of the object layer: what went wrong, and which type, field and object it concerns.
///
/// Codes grow over time; match on ``code``. Engine errors arrive as code `store` with the
/// ``LogStoreError`` as ``underlying``.
public struct ObjectStoreError: Error, Sendable, CustomStringConvertible {
    /// What kind of error this is.
    public struct Code: Hashable, Sendable, CustomStringConvertible {
        /// The code's name, e.g. `typeMismatch`.
        public let name: String
        private init(_ name: String) { self.name = name }

        /// A stored object's type tag names no registered class (its type name is given when a
        /// field-name record knows it).
        public static let unregisteredType = Code("unregisteredType")
        /// The object was lost to damage: ``LogStore/Store/salvage(from:to:options:)`` copied the store and put a
        /// placeholder under its id, since other objects still refer to it. The message is the placeholder's
        /// sentence (what was lost); the salvage report says where.
        public static let lostObject = Code("lostObject")
        /// The object is of another type than the one asked for (e.g. a `Rectangle` asked for as a
        /// `Circle`), or a field holds a value of another kind than the one decoded; or
        /// ``ObjectContext/deleteAll(of:includingSubclasses:)`` found an object that the index lists under
        /// the type but whose record is of another (nothing is deleted then).
        public static let typeMismatch = Code("typeMismatch")
        /// A field that has no default is absent from the stored object (and from its old names).
        public static let missingField = Code("missingField")
        /// A stored reference names an object that is no longer live (deleted or collected), or an
        /// object asked for by id does not exist.
        public static let danglingReference = Code("danglingReference")
        /// A reference cycle runs through plain fields only; at least one field of each cycle must be
        /// ``ObjectRef``, ``ObjectList`` or ``LazyRef``. Thrown by a save that would store such a cycle
        /// (nothing is written; the message names each object and field of the cycle, ``objects`` the
        /// stored ones), and by a load of one stored before saves refused them.
        public static let cyclicReference = Code("cyclicReference")
        /// A subclass of a persistent class encoded none of its own stored properties: it does not
        /// override `encode(to:)` / `init(from:)` (or `encodeFields(to:)` / `init(fields:)`), so they
        /// would be lost. The message names the class and the properties.
        public static let incompleteEncoding = Code("incompleteEncoding")
        /// A stored payload is not valid LogStore object encoding.
        public static let corruptPayload = Code("corruptPayload")
        /// A class could not be registered: duplicate or reserved type name, or a tag collision.
        public static let invalidRegistration = Code("invalidRegistration")
        /// An object of an unregistered class was saved or referenced.
        public static let unregisteredClass = Code("unregisteredClass")
        /// An object's `encode(to:)` failed or used the encoder in a way the format cannot store.
        public static let encodingFailed = Code("encodingFailed")
        /// A delete was refused because a live object (named in the message) still refers to the object.
        public static let stillReferenced = Code("stillReferenced")
        /// The object was deleted in this context (or is about to be) and cannot be used.
        public static let deletedObject = Code("deletedObject")
        /// `begin()` inside a transaction, `save()` inside one, or `commit()`/`rollback()` outside one.
        public static let transactionState = Code("transactionState")
        /// A save would overwrite objects that another save changed (or deleted) after this context read
        /// them; ``ObjectStoreError/objects`` names them all and nothing was written. Refresh the objects
        /// (or use ``ObjectStore/update(attempts:_:)``, which reruns the work in a fresh context) and try
        /// again.
        public static let conflict = Code("conflict")
        /// A save met an object that belongs to another context (or another object store): it was loaded
        /// or inserted there. Link objects of the same context; pass ids between contexts and load them.
        public static let foreignObject = Code("foreignObject")
        /// A save would give two objects the same key of a unique index (``IndexDefinition/unique(_:field:name:)``):
        /// ``ObjectStoreError/objects`` names the object saved and the one holding the key, ``field`` the
        /// index, and nothing was written. Checked atomically with the commit, so of two saves racing for one
        /// key exactly one wins.
        public static let uniqueViolation = Code("uniqueViolation")
        /// A save deletes an object whose relationship with delete rule ``DeleteRule/deny`` still holds
        /// objects that the save does not delete too: ``ObjectStoreError/objects`` names the object and
        /// them, ``field`` the relationship, and nothing was written.
        public static let deleteDenied = Code("deleteDenied")
        /// A query cannot be answered as asked (a predicate that throws, a sort it cannot apply).
        public static let invalidQuery = Code("invalidQuery")
        /// The engine failed; see ``underlying``.
        public static let store = Code("store")

        /// The code's name.
        public var description: String { name }
    }

    /// What kind of error this is.
    public var code: Code
    /// A sentence saying what happened.
    public var message: String
    /// The persistent type concerned, when known.
    public var typeName: String?
    /// The field concerned (a coding path such as `layers[2].shapes`), when known.
    public var field: String?
    /// The object concerned, when known.
    public var objectID: ObjectID?
    /// The error that caused this one (a ``LogStoreError`` for code `store`).
    public var underlying: (any Error & Sendable)?
    /// Every object the error concerns, when there are several (for `conflict`: all the objects changed
    /// elsewhere); otherwise ``objectID`` alone, when known.
    public var objects: [ObjectID] = []

    /// Creates an error.
    public init(
        _ code: Code, _ message: String, typeName: String? = nil, field: String? = nil, objectID: ObjectID? = nil,
        underlying: (any Error & Sendable)? = nil
    ) {
        self.code = code
        self.message = message
        self.typeName = typeName
        self.field = field
        self.objectID = objectID
        self.underlying = underlying
        self.objects = objectID.map { [$0] } ?? []
    }

    /// Wraps an engine error.
    init(_ error: LogStoreError) {
        self.init(.store, error.description, underlying: error)
    }

    /// `code: message [type T, field f, object n]`.
    public var description: String {
        var context: [String] = []
        if let typeName { context.append("type \(typeName)") }
        if let field, !field.isEmpty { context.append("field \(field)") }
        if let objectID { context.append("object \(objectID)") }
        let suffix = context.isEmpty ? "" : " [" + context.joined(separator: ", ") + "]"
        return "\(code): \(message)\(suffix)"
    }
}
