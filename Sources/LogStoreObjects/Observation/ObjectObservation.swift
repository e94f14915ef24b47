import LogStore

/// Fresh values read from an object store, now and again after every committed batch that may change
/// them: an `AsyncSequence` made by ``ObjectStore/observe(_:includingSubclasses:)``,
/// ``ObjectStore/observe(id:as:)`` or ``ObjectStore/observe(types:_:)``.
///
/// Each element is read in a new context, in one snapshot, in the isolation of the task that iterates
/// (on the main actor for a loop that runs there), so the objects it holds may be used there directly.
/// The first element is read at once; each later one after a committed batch wrote, deleted or freed an
/// object of a type it follows (its id, for ``ObjectStore/observe(id:as:)``). Batches that land while an
/// element is read or used are coalesced into the next read, which sees all of them. An observer that
/// falls behind the store's kept changes reads again too. The sequence ends when the store is closed or
/// failed (a write or sync failed), or the task is cancelled.
public struct ObjectObservation<Value>: AsyncSequence {
    /// The values read after each change.
    public typealias Element = Value
    /// What a read throws.
    public typealias Failure = any Error

    let objects: ObjectStore
    /// The type tags the values depend on (nil: ask `fetch`'s types each time), or one id.
    let scope: Scope
    let fetch: (ObjectContext) throws -> Value

    enum Scope {
        /// Batches that touch an object of one of these types, given the reading context; nil: every
        /// batch that changes an object (a protocol type, whose conforming classes a batch of a class with
        /// no objects yet cannot tell before they are read).
        case types((ObjectContext) throws -> Set<UInt32>?)
        /// Batches that touch this object.
        case object(ObjectID)
    }

    /// Makes an iterator; the feed of committed batches starts when the first element is read.
    public func makeAsyncIterator() -> Iterator {
        Iterator(objects: objects, scope: scope, fetch: fetch)
    }

    /// Reads an observation.
    public struct Iterator: AsyncIteratorProtocol {
        let objects: ObjectStore
        let scope: Scope
        let fetch: (ObjectContext) throws -> Value
        var feed: StoreChanges.Iterator?
        /// The sequence of the snapshot the last element was read in.
        var seen: UInt64 = 0
        /// The tags the last read depended on (nil: any).
        var tags: Set<UInt32>? = []

        /// The next fresh value: at once the first time, then after a batch that may change it; nil
        /// when the store is closed or the task cancelled.
        /// - throws: what reading the value throws (``ObjectStoreError``).
        public mutating func next(isolation actor: isolated (any Actor)? = #isolation) async throws -> Value? {
            if Task.isCancelled { return nil }
            guard var feed else {
                // The feed starts before the first read: no batch after that read is missed.
                do {
                    feed = try objects.store.changes().makeAsyncIterator()
                } catch {
                    if error.code == .closed { return nil }
                    throw ObjectStoreError(error)
                }
                return try read()
            }
            defer { self.feed = feed }
            while let change = await feed.next() {
                switch change {
                case .missed(_, let through) where through > seen:
                    return try read()
                case .rewound:
                    return try read()
                case .batch(let batch) where batch.sequence > seen && concerns(batch):
                    return try read()
                default:
                    continue
                }
            }
            return nil
        }

        /// ``next(isolation:)`` outside any actor.
        public mutating func next() async throws -> Value? {
            try await next(isolation: nil)
        }

        /// Whether `batch` may change what this observation reads.
        private func concerns(_ batch: CommittedBatch) -> Bool {
            switch scope {
            case .object(let id):
                return batch.touches(id)
            case .types:
                guard let tags else {
                    return !batch.written.isEmpty || !batch.deleted.isEmpty || !batch.freed.isEmpty
                }
                return batch.written.contains { tags.contains($0.typeTag) }
                    || batch.deleted.contains { tags.contains($0.typeTag) }
                    || batch.freed.contains { tags.contains($0.typeTag) }
            }
        }

        /// Reads the value in a new context, noting the snapshot it read.
        private mutating func read() throws -> Value {
            let context = objects.makeContext()
            let view = try context.readView()
            if case .types(let tagsOf) = scope { tags = try tagsOf(context) }
            let value = try fetch(context)
            seen = view.sequence
            return value
        }
    }
}

extension ObjectStore {
    /// Every object of class `type` (subclasses included unless `includingSubclasses` is false), or of the
    /// classes conforming to the protocol type `type`, read fresh now and after every committed batch that
    /// writes, deletes or frees one of them (see ``ObjectObservation``).
    ///
    /// For example, a list that follows the store:
    /// ```swift
    /// for try await tasks in objects.observe(TaskItem.self) {
    ///     show(tasks)          // every task, in one snapshot, each time tasks change
    /// }
    /// ```
    public func observe<T>(_ type: T.Type, includingSubclasses: Bool = true) -> ObjectObservation<[T]> {
        ObjectObservation(
            objects: self,
            scope: .types { context in Set(try context.matchingTags(of: type, includingSubclasses: includingSubclasses))
            },
            fetch: { context in try context.objects(of: type, includingSubclasses: includingSubclasses) })
    }

    /// The object `id`, read fresh now and after every committed batch that writes, deletes or frees it;
    /// nil while it is not stored (see ``ObjectObservation``).
    ///
    /// For example:
    /// ```swift
    /// for try await task in objects.observe(id: taskID, as: TaskItem.self) {
    ///     guard let task else { break }   // deleted
    ///     show(task.title)
    /// }
    /// ```
    public func observe<T>(id: ObjectID, as type: T.Type = T.self) -> ObjectObservation<T?> {
        ObjectObservation(objects: self, scope: .object(id), fetch: { context in try context.object(id: id, as: type) })
    }

    /// What `fetch` reads from a new context, now and after every committed batch that writes, deletes or
    /// frees an object of one of `types` (classes, with their subclasses, or protocol types): for values
    /// that combine several types, counts, or a filtered selection (see ``ObjectObservation``).
    ///
    /// For example:
    /// ```swift
    /// for try await late in objects.observe(types: [TaskItem.self]) { context in
    ///     try context.objects(of: TaskItem.self).filter { $0.due < .now && !$0.done }.count
    /// } {
    ///     badge = late
    /// }
    /// ```
    public func observe<Value>(types: [Any.Type], _ fetch: @escaping (ObjectContext) throws -> Value)
        -> ObjectObservation<Value>
    {
        ObjectObservation(
            objects: self,
            scope: .types { context in
                var tags = Set<UInt32>()
                for type in types {
                    guard type is AnyClass else { return nil }
                    tags.formUnion(try context.matchingTags(ofAny: type))
                }
                return tags
            },
            fetch: fetch)
    }
}

extension ObjectContext {
    /// ``matchingTags(of:includingSubclasses:)`` for a type known only at run time (subclasses included).
    func matchingTags(ofAny type: Any.Type) throws(ObjectStoreError) -> [UInt32] {
        func open<T>(_: T.Type) throws(ObjectStoreError) -> [UInt32] {
            try matchingTags(of: T.self, includingSubclasses: true)
        }
        return try open(type)
    }
}
