@_spi(Engine) import LogStoreFormat
@_spi(Engine) import LogStoreSystem

/// Puts, deletes and root changes that a store applies atomically: all of them become visible, and
/// durable, together, or none does, also across a crash.
///
/// For example:
/// ```swift
/// var batch = WriteBatch()
/// let id = store.newID()
/// batch.put(id, typeTag: 1, payload: Array("hello".utf8))
/// batch.setRoot("main", to: id)
/// try store.write(batch)
/// ```
public struct WriteBatch: Sendable {
    /// One change in a batch.
    public enum Operation: Sendable, Equatable {
        /// Store a record under its id, replacing any earlier one.
        case put(Record)
        /// Delete the object with this id (a tombstone).
        case delete(ObjectID)
        /// Point the named root at an object.
        case setRoot(String, ObjectID)
        /// Remove the named root.
        case removeRoot(String)
    }

    /// A condition the whole batch is written under: the object `id` still has the record of `version`
    /// (the sequence number of the batch that wrote it, see ``Snapshot/version(of:)``), or, when `version`
    /// is nil, is not live.
    public struct Expectation: Sendable, Equatable {
        /// The object.
        public var id: ObjectID
        /// The version it must have; nil: it must not be live.
        public var version: UInt64?
    }

    /// The changes, in the order they apply.
    public private(set) var operations: [Operation] = []
    /// The conditions checked, atomically with the commit, before any change applies.
    public private(set) var expectations: [Expectation] = []

    /// Makes an empty batch.
    public init() {}

    /// Whether the batch has no changes (expectations alone write nothing).
    public var isEmpty: Bool { operations.isEmpty }

    /// Number of changes in the batch.
    public var count: Int { operations.count }

    /// Reserves room for `count` changes.
    public mutating func reserveCapacity(_ count: Int) { operations.reserveCapacity(count) }

    /// Adds a put of a record under `id` (an id from ``Store/newID()``).
    ///
    /// - parameter pinned: keep the object until it is deleted (the default); when false, it lives only
    ///   while a live object or a named root refers to it.
    public mutating func put(
        _ id: ObjectID, typeTag: UInt32, references: [ObjectID] = [], payload: [UInt8], pinned: Bool = true
    ) {
        operations.append(
            .put(Record(id: id, typeTag: typeTag, references: references, payload: payload, isPinned: pinned)))
    }

    /// Adds a put of `record`.
    public mutating func put(_ record: Record) { operations.append(.put(record)) }

    /// Adds a delete of `id`.
    public mutating func delete(_ id: ObjectID) { operations.append(.delete(id)) }

    /// Adds setting the root `name` to `id`.
    public mutating func setRoot(_ name: String, to id: ObjectID) { operations.append(.setRoot(name, id)) }

    /// Adds removing the root `name`.
    public mutating func removeRoot(_ name: String) { operations.append(.removeRoot(name)) }

    /// Writes the batch only if `id` still has the record of `version` when it commits (nil: only if `id`
    /// is not live); otherwise the write fails with ``LogStoreError/Code/conflict`` and changes nothing.
    /// This is optimistic concurrency: read through a ``Snapshot``, note ``Snapshot/version(of:)`` of what
    /// you read, and expect it when you write what you derived from it.
    ///
    /// For example:
    /// ```swift
    /// let view = try store.snapshot()
    /// var batch = WriteBatch()
    /// batch.expect(id, version: view.version(of: id))
    /// batch.put(id, typeTag: 1, payload: Array("new".utf8))
    /// try store.write(batch)   // throws `conflict` if another write changed `id` after `view`
    /// ```
    public mutating func expect(_ id: ObjectID, version: UInt64?) {
        expectations.append(Expectation(id: id, version: version))
    }
}
