import Foundation
import LogStore

extension ObjectContext {
    /// The objects `descriptor` asks for, as of this context's snapshot (see ``FetchDescriptor``).
    ///
    /// What a query sees: the stored objects as of the context's snapshot, and this context's unsaved
    /// changes that it can tell — new objects and changed `@Persistent` models are tested as they are in
    /// memory, and objects it deletes on its next save are left out. An instance of a plain `Codable` class
    /// does not report its changes: until it is saved, the query selects it by its stored state (and
    /// tests the instance). The objects returned are this context's instances.
    /// - throws: ``ObjectStoreError`` `invalidQuery` when the predicate throws; `unregisteredClass`; `store`;
    ///   and what loading an object throws.
    public func fetch<T>(_ descriptor: FetchDescriptor<T>) throws(ObjectStoreError) -> [T] {
        try run(descriptor).objects
    }

    /// The ids of the objects ``fetch(_:)`` returns, in the same order. When the index answers the whole
    /// predicate and the order (no object this context changed is involved), no object is loaded.
    /// - throws: what ``fetch(_:)`` throws.
    public func fetchIDs<T>(_ descriptor: FetchDescriptor<T>) throws(ObjectStoreError) -> [ObjectID] {
        try run(descriptor, idsOnly: true).ids
    }

    /// How many objects ``fetch(_:)`` returns (limit and offset applied). When the index answers the whole
    /// predicate, no object is loaded.
    /// - throws: what ``fetch(_:)`` throws.
    public func fetchCount<T>(_ descriptor: FetchDescriptor<T>) throws(ObjectStoreError) -> Int {
        try run(descriptor, idsOnly: true).ids.count
    }

    /// The results of `descriptor` as ids, each object loaded when it is asked for (so a large result
    /// holds only the objects the caller keeps).
    /// - throws: what ``fetchIDs(_:)`` throws.
    public func fetchLazily<T>(_ descriptor: FetchDescriptor<T>) throws(ObjectStoreError) -> LazyFetchResults<T> {
        LazyFetchResults(context: self, ids: try fetchIDs(descriptor))
    }

    /// How ``fetch(_:)`` would find the objects of `descriptor`: which index and conditions, or a scan.
    /// - throws: what ``fetch(_:)`` throws (it plans at the context's snapshot, building the index if
    ///   needed, but loads no object).
    public func explain<T>(_ descriptor: FetchDescriptor<T>) throws(ObjectStoreError) -> QueryPlan {
        try candidates(descriptor).plan
    }

    // MARK: Running a query

    private struct Candidates {
        var ids: [ObjectID]
        var plan: QueryPlan
        /// Whether the ids are exactly the answer before limit and offset (no object needs testing).
        var exact: Bool
        /// Whether the ids are in the requested order.
        var ordered: Bool
    }

    private func candidates<T>(_ descriptor: FetchDescriptor<T>) throws(ObjectStoreError) -> Candidates {
        let tags = try matchingTags(of: T.self, includingSubclasses: descriptor.includesSubclasses)
        let view = try readView()
        let held = heldCandidates(tags: Set(tags))
        let deleted = confined.state.pendingDeletes
        let analysis = PredicateAnalysis(descriptor.predicate)
        if let indexed = objectStore.indexes.indexedType(of: T.self, registry: registry),
            let choice = QueryPlanner(definitions: indexed.definitions).choose(
                analysis, sort: QueryPlanner.SingleSort(descriptor.sortBy), limited: descriptor.fetchLimit != nil),
            let indexView = try objectStore.indexes.view(of: indexed, at: view)
        {
            var ids = QueryPlanner.ids(choice, in: indexView.data)
            let definition = indexed.definitions[choice.index]
            let absent = indexView.data.absent[choice.index]
            var extras = absent.union(indexView.changedSince).union(held)
            if !descriptor.includesSubclasses || indexed.tags != Set(tags) { extras.insert(ObjectID(0)) }
            // A string prefix is compared by bytes in the index but by characters in `starts(with:)` (a
            // combining mark right after the prefix makes another character): its candidates are tested.
            // NaN, stored or asked for, is equal to itself and after every number in the index, where `==`
            // and `<` say false: its candidates are tested too.
            let exact =
                extras.isEmpty && deleted.isEmpty && analysis.isComplete
                && choice.consumed == analysis.conditions.count && choice.prefix == nil
                && indexView.data.holdsNaN[choice.index].isEmpty
                && !analysis.conditions.contains(where: \.value.isNaN)
            extras.remove(ObjectID(0))
            let ordered = choice.ordered && extras.isEmpty
            if !extras.isEmpty {
                let known = Set(ids)
                ids += extras.filter { !known.contains($0) }.sorted()
            }
            if !deleted.isEmpty { ids.removeAll { deleted.contains($0) } }
            let plan = QueryPlan(
                index: definition.name, answered: choice.described, usesIndexOrder: ordered, candidates: ids.count)
            return Candidates(ids: ids, plan: plan, exact: exact, ordered: ordered)
        }
        var ids: [ObjectID] = []
        for tag in tags { ids += view.ids(ofType: tag) }
        let stored = Set(ids)
        ids += held.filter { !stored.contains($0) }
        ids.sort()
        if !deleted.isEmpty { ids.removeAll { deleted.contains($0) } }
        let plan = QueryPlan(index: nil, answered: [], usesIndexOrder: false, candidates: ids.count)
        return Candidates(ids: ids, plan: plan, exact: descriptor.predicate == nil, ordered: descriptor.sortBy.isEmpty)
    }

    /// The objects of `tags` this context will write on its next save that a query must test in memory:
    /// new ones, and models (`@Persistent`) changed since they were loaded. (An instance of a plain
    /// `Codable` class does not report its changes: a query sees its stored state until it is saved.)
    func heldCandidates(tags: Set<UInt32>) -> Set<ObjectID> {
        var ids: Set<ObjectID> = []
        // Read in place: a context may hold many unchanged plain instances, which are skipped first.
        for slot in cache.state.held where slot.storedHash == nil || slot.isTracked {
            guard slot.strongHold != nil, cache.state.slots[slot.id] === slot, let object = slot.object,
                let registered = registry.type(of: object), tags.contains(registered.tag)
            else { continue }
            ids.insert(slot.id)
        }
        return ids
    }

    private func run<T>(_ descriptor: FetchDescriptor<T>, idsOnly: Bool = false) throws(ObjectStoreError)
        -> (ids: [ObjectID], objects: [T])
    {
        let found = try candidates(descriptor)
        let offset = max(0, descriptor.fetchOffset ?? 0)
        let limit = descriptor.fetchLimit.map { max(0, $0) }
        func page<E>(_ all: [E]) -> [E] {
            let start = min(offset, all.count)
            let end = limit.map { min(all.count, start + $0) } ?? all.count
            return start == 0 && end == all.count ? all : Array(all[start..<end])
        }
        if idsOnly && found.exact && (found.ordered || descriptor.sortBy.isEmpty) {
            return (page(found.ids), [])
        }
        // Ids and objects in two arrays, not an array of pairs: `T` is generic here, and a pair of it costs
        // generic metadata and value-witness calls per element.
        var matchedIDs: [ObjectID] = []
        var matched: [T] = []
        matchedIDs.reserveCapacity(found.ids.count)
        matched.reserveCapacity(found.ids.count)
        // In the requested order already: stop loading once the page is full.
        let wanted = found.ordered ? limit.map { offset + $0 } : nil
        // Taken out of the descriptor once: each copy of a `Predicate` instantiates generic metadata (so
        // the loop below binds it only for an object it tests).
        let predicate = descriptor.predicate
        let hasPredicate = predicate != nil
        var position = 0
        // Without a limit every candidate is loaded: in one load session (each costs a decoder and a
        // catalog snapshot); with one, a few at a time, so loading stops soon after the page is full.
        let batch = wanted == nil ? max(1, found.ids.count) : 256
        while position < found.ids.count {
            if let wanted, matched.count >= wanted { break }
            let slice =
                position == 0 && batch >= found.ids.count
                ? found.ids : Array(found.ids[position..<min(found.ids.count, position + batch)])
            position += slice.count
            try load(slice) { id, object throws(ObjectStoreError) in
                guard let typed = (object ?? cache.object(id)) as? T else { return }
                // When the index answers the whole predicate, a model with no unsaved change (its stored
                // values) needs no test; any other instance is tested as it is in memory.
                if hasPredicate, !found.exact || cache.slot(id)?.isUnchangedModel != true, let predicate {
                    do {
                        guard try predicate.evaluate(typed) else { return }
                    } catch {
                        throw ObjectStoreError(
                            .invalidQuery, "the predicate failed on object \(id): \(error)", objectID: id)
                    }
                }
                matchedIDs.append(id)
                matched.append(typed)
            }
        }
        if !found.ordered && !descriptor.sortBy.isEmpty {
            let sorting = descriptor.sortBy
            let order = matched.indices.sorted { lhs, rhs in
                for descriptor in sorting {
                    switch descriptor.compare(matched[lhs], matched[rhs]) {
                    case .orderedAscending: return true
                    case .orderedDescending: return false
                    case .orderedSame: continue
                    }
                }
                return matchedIDs[lhs] < matchedIDs[rhs]
            }
            matchedIDs = order.map { matchedIDs[$0] }
            matched = order.map { matched[$0] }
        }
        return (page(matchedIDs), idsOnly ? [] : page(matched))
    }
}

/// The results of a query as ids, each object loaded when asked for (``ObjectContext/fetchLazily(_:)``).
/// Use it on the context's thread, like the context.
public struct LazyFetchResults<T> {
    let context: ObjectContext
    /// The ids of the results, in order.
    public let ids: [ObjectID]

    /// How many results there are.
    public var count: Int { ids.count }

    /// The result at `index` (0 ..< ``count``), loaded now.
    /// - throws: ``ObjectStoreError`` `danglingReference` when the object is no longer stored (deleted after
    ///   the query in another context and this context moved on), `typeMismatch`, and what loading throws.
    public func object(at index: Int) throws(ObjectStoreError) -> T {
        guard ids.indices.contains(index) else {
            throw ObjectStoreError(.invalidQuery, "result \(index) of \(ids.count) does not exist")
        }
        let id = ids[index]
        guard let object = try context.load(id) else {
            throw ObjectStoreError(.danglingReference, "object \(id) of the results is no longer stored", objectID: id)
        }
        guard let typed = object as? T else {
            throw ObjectStoreError(.typeMismatch, "object \(id) is not a \(T.self)", objectID: id)
        }
        return typed
    }

    /// Calls `body` with each result in order, loading one at a time.
    /// - throws: what ``object(at:)`` and `body` throw.
    public func forEach(_ body: (T) throws -> Void) throws {
        for index in ids.indices { try body(try object(at: index)) }
    }
}
