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
    /// Which collector freed ``freed``: reference counting (the batch dropped the last reference, or
    /// deleted an object that held it) or a mark-sweep pass (a batch of the collector's own).
    public var freedBy: Collector
    /// The lists. The change feed hands the same batch to every observer, so a copy must be cheap: a batch
    /// that wrote one object and did nothing else (a single put) holds it inline, and a copy touches no
    /// shared memory; any other keeps its lists in one shared, immutable box.
    @usableFromInline var contents: Contents

    /// Objects stored or replaced by the batch, in the batch's order (an id put twice is listed twice).
    public var written: ObjectChanges {
        @inlinable get {
            switch contents {
            case .oneWritten(let change): return ObjectChanges(one: change)
            case .lists(let lists): return ObjectChanges(lists.parts.written)
            }
        }
        set { replaceParts { $0.written = Array(newValue) } }
    }
    /// Objects the batch deleted on purpose (a delete operation), with the type they had.
    public var deleted: ObjectChanges {
        @inlinable get {
            switch contents {
            case .oneWritten: return ObjectChanges()
            case .lists(let lists): return ObjectChanges(lists.parts.deleted)
            }
        }
        set { replaceParts { $0.deleted = Array(newValue) } }
    }
    /// Objects the engine freed with this batch because nothing keeps them alive any more, with the
    /// type they had; ``freedBy`` says which collector.
    public var freed: ObjectChanges {
        @inlinable get {
            switch contents {
            case .oneWritten: return ObjectChanges()
            case .lists(let lists): return ObjectChanges(lists.parts.freed)
            }
        }
        set { replaceParts { $0.freed = Array(newValue) } }
    }
    /// Roots the batch pointed at an object, in the batch's order.
    public var rootsSet: [RootChange] {
        @inlinable get {
            switch contents {
            case .oneWritten: return []
            case .lists(let lists): return lists.parts.rootsSet
            }
        }
        set { replaceParts { $0.rootsSet = newValue } }
    }
    /// Roots the batch removed, in the batch's order.
    public var rootsRemoved: [String] {
        @inlinable get {
            switch contents {
            case .oneWritten: return []
            case .lists(let lists): return lists.parts.rootsRemoved
            }
        }
        set { replaceParts { $0.rootsRemoved = newValue } }
    }

    /// Makes a batch description.
    public init(
        sequence: UInt64, written: ObjectChanges = [], deleted: ObjectChanges = [], freed: ObjectChanges = [],
        freedBy: Collector = .referenceCounting, rootsSet: [RootChange] = [], rootsRemoved: [String] = []
    ) {
        self.init(
            sequence: sequence, freedBy: freedBy,
            parts: Parts(
                written: Array(written), deleted: Array(deleted), freed: Array(freed), rootsSet: rootsSet,
                rootsRemoved: rootsRemoved))
    }

    init(sequence: UInt64, freedBy: Collector, parts: Parts) {
        self.sequence = sequence
        self.freedBy = freedBy
        contents = Contents(parts)
    }

    /// The lists of a batch, as the engine builds them (appending one by one) before it makes the batch.
    @usableFromInline
    struct Parts: Sendable, Equatable {
        @usableFromInline var written: [ObjectChange] = []
        @usableFromInline var deleted: [ObjectChange] = []
        @usableFromInline var freed: [ObjectChange] = []
        @usableFromInline var rootsSet: [RootChange] = []
        @usableFromInline var rootsRemoved: [String] = []
    }

    /// A batch's lists: one written object inline, or a shared box.
    @usableFromInline
    enum Contents: Sendable {
        case oneWritten(ObjectChange)
        case lists(Lists)

        init(_ parts: Parts) {
            if parts.written.count == 1, parts.deleted.isEmpty, parts.freed.isEmpty, parts.rootsSet.isEmpty,
                parts.rootsRemoved.isEmpty, let change = parts.written.first
            {
                self = .oneWritten(change)
            } else {
                self = .lists(Lists(parts))
            }
        }

        var parts: Parts {
            switch self {
            case .oneWritten(let change): return Parts(written: [change])
            case .lists(let lists): return lists.parts
            }
        }
    }

    /// The shared box of a batch's lists: immutable once made.
    @usableFromInline
    final class Lists: Sendable {
        @usableFromInline let parts: Parts
        init(_ parts: Parts) { self.parts = parts }
    }

    private mutating func replaceParts(_ change: (inout Parts) -> Void) {
        var parts = contents.parts
        change(&parts)
        contents = Contents(parts)
    }

    /// Whether two descriptions say the same: sequence, collector and every list.
    public static func == (left: CommittedBatch, right: CommittedBatch) -> Bool {
        left.sequence == right.sequence && left.freedBy == right.freedBy && left.contents.parts == right.contents.parts
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

/// The objects a batch wrote, deleted or freed, in the batch's order: a random-access collection of
/// ``ObjectChange`` (compare it with an array literal, or make an `Array` of it).
public struct ObjectChanges: RandomAccessCollection, Sendable, Hashable, ExpressibleByArrayLiteral,
    CustomStringConvertible
{
    @usableFromInline enum Storage: Sendable {
        case one(ObjectChange)
        case many([ObjectChange])
    }
    @usableFromInline let storage: Storage

    /// No objects.
    @inlinable public init() { storage = .many([]) }
    /// The objects of `changes`, in order.
    @inlinable public init(_ changes: [ObjectChange]) { storage = .many(changes) }
    /// One object, held inline.
    @inlinable init(one change: ObjectChange) { storage = .one(change) }
    /// The objects listed.
    public init(arrayLiteral elements: ObjectChange...) { storage = .many(elements) }

    /// The first position: 0.
    @inlinable public var startIndex: Int { 0 }
    /// The position after the last object: the count.
    @inlinable public var endIndex: Int {
        switch storage {
        case .one: return 1
        case .many(let changes): return changes.count
        }
    }
    /// The object at `position`, which must be below ``endIndex`` (as for an array).
    @inlinable public subscript(position: Int) -> ObjectChange {
        switch storage {
        case .one(let change): return CollectionOfOne(change)[position]
        case .many(let changes): return changes[position]
        }
    }

    /// Whether both list the same objects in the same order.
    public static func == (left: ObjectChanges, right: ObjectChanges) -> Bool { left.elementsEqual(right) }

    /// Hashes the objects in order.
    public func hash(into hasher: inout Hasher) {
        hasher.combine(count)
        for change in self { hasher.combine(change) }
    }

    /// The objects, as an array prints them.
    public var description: String { Array(self).description }
}
