/// What one committed batch did to the store: the objects it wrote and deleted, the objects the engine
/// freed with it and why, and the roots it changed.
///
/// ``Store/write(_:)`` returns it for the caller's batch, and ``Store/changes(after:)`` delivers one per
/// committed batch, in commit order, to every observer (in this process, and to followers in others).
/// Ids reserved without a write and the work of compaction (records moved, segments replaced) change
/// nothing readers see and are not reported.
///
/// For example:
/// ```swift
/// let batch = try store.write { $0.delete(note) }
/// print(batch.sequence, batch.deleted, batch.freed)   // the note, and what only it referred to
/// ```
public struct CommittedBatch: Sendable, Equatable {
    /// The batch's sequence number: the version its records have from now on. Sequences grow by one per
    /// committed batch.
    public var sequence: UInt64
    /// Objects stored or replaced by the batch, in the batch's order (an id put twice is listed twice).
    public var written: [ObjectChange]
    /// Objects the batch deleted on purpose (a delete operation), with the type they had.
    public var deleted: [ObjectChange]
    /// Objects the engine freed with this batch because nothing keeps them alive any more, with the
    /// type they had; ``freedBy`` says which collector.
    public var freed: [ObjectChange]
    /// Which collector freed ``freed``: reference counting (the batch dropped the last reference, or
    /// deleted an object that held it) or a mark-sweep pass (a batch of the collector's own).
    public var freedBy: Collector
    /// Roots the batch pointed at an object, in the batch's order.
    public var rootsSet: [RootChange]
    /// Roots the batch removed, in the batch's order.
    public var rootsRemoved: [String]

    /// Makes a batch description.
    public init(
        sequence: UInt64, written: [ObjectChange] = [], deleted: [ObjectChange] = [], freed: [ObjectChange] = [],
        freedBy: Collector = .referenceCounting, rootsSet: [RootChange] = [], rootsRemoved: [String] = []
    ) {
        self.sequence = sequence
        self.written = written
        self.deleted = deleted
        self.freed = freed
        self.freedBy = freedBy
        self.rootsSet = rootsSet
        self.rootsRemoved = rootsRemoved
    }

    /// The collector that freed objects.
    public enum Collector: String, Sendable, Equatable {
        /// Reference counting, in the batch that dropped the last reference.
        case referenceCounting
        /// A mark-sweep pass (``Store/collectGarbage()`` or the background collector).
        case markSweep
    }

    /// Whether the batch stored, deleted or freed `id`.
    public func touches(_ id: ObjectID) -> Bool {
        written.contains { $0.id == id } || deleted.contains { $0.id == id } || freed.contains { $0.id == id }
    }

    /// Every object the batch stored, deleted or freed, each once.
    public var changedIDs: Set<ObjectID> {
        var ids = Set<ObjectID>()
        ids.reserveCapacity(written.count + deleted.count + freed.count)
        for change in written { ids.insert(change.id) }
        for change in deleted { ids.insert(change.id) }
        for change in freed { ids.insert(change.id) }
        return ids
    }
}

/// One object a batch changed: its id and its type tag (for a deleted or freed object, the tag it had).
public struct ObjectChange: Sendable, Hashable {
    /// The object's id.
    public var id: ObjectID
    /// Its type tag.
    public var typeTag: UInt32

    /// Makes a change.
    public init(id: ObjectID, typeTag: UInt32) {
        self.id = id
        self.typeTag = typeTag
    }
}

/// One root a batch pointed at an object.
public struct RootChange: Sendable, Hashable {
    /// The root's name.
    public var name: String
    /// The object it names from this batch on.
    public var target: ObjectID

    /// Makes a root change.
    public init(name: String, target: ObjectID) {
        self.name = name
        self.target = target
    }
}
