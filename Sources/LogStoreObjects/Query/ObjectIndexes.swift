import Foundation
import LogStore
@_spi(Engine) import LogStoreSystem
import Synchronization

/// The indexes of an ``ObjectStore``: kept in memory, built from the records on first use, and kept up to
/// date by the engine's batch hooks in commit order.
///
/// How an index stays exact:
/// - The engine calls ``accepted(_:_:)`` for every batch it accepts, in sequence order, under its commit
///   lock. For each type whose index is built (or being built) it queues the batch's puts, deletes and
///   frees of that type (a *delta*, with the keys the unique check read, below). A type with a unique
///   index has the delta applied at once to its keys and unique tables (the next commit's check needs
///   them); its ordered entries change through a log (``TypeIndexData/entryLog``).
/// - The *applier*, on a queue of its own, then applies the entry logs, and the queued deltas of the other
///   types, off the committing thread (``ObjectIndexes+Applier``).
/// - A query at snapshot `T` waits for the applier to put back what it has of its type, then applies the
///   queued deltas up to `T` and the entry log itself (reading each put's keys from its payload). When the
///   hooks did not see every batch up to `T` (another process wrote: a follower), it compares every
///   object's version at `T` with the one it indexed and reads the changed records (a *catch-up scan*);
///   building an index is the same scan from nothing.
/// - A query at a snapshot older than the index reads the index as it is and adds the objects that
///   batches after its snapshot changed (kept for the last 65,536 changed objects), testing each as of its
///   snapshot; older still, it scans the type.
/// - ``validate(_:)`` runs under the same commit lock before a batch is accepted: it applies every queued
///   delta left and refuses a batch that would give two objects one key of a unique index. It reads only
///   keys and unique tables, which the applier never takes for a type with a unique index.
///
/// Locks: `maintenance` (one scan at a time, held while reading the store), then `state` (never held
/// while calling the store: the hooks take it under the engine's commit lock).
final class ObjectIndexes: Sendable {
    let types: [IndexedType]
    /// The indexed types whose objects include those carrying a tag: a class with indexes of its own and
    /// each superclass with indexes (a subclass object is in its superclass's indexes too).
    private let typesByTag: [UInt32: [Int]]
    /// For each tag of ``typesByTag``, the number of the most specific of its types (the fewest tags).
    private let mostSpecificByTag: [UInt32: Int]
    let store: Store
    let catalog: KeyCatalog
    let state: ConditionLock<State>
    let maintenance: ConditionLock<Bool>
    /// Where the applier runs (see ``scheduleApplier(_:)``).
    let applierQueue = DispatchQueue(label: "logstore.index-applier")

    /// How many changed objects the history keeps for queries at older snapshots.
    static let historyLimit = 65_536

    struct Delta: Sendable {
        var sequence: UInt64
        var puts: [Record]
        var removed: [ObjectID]
        /// The keys of puts that ``validate(_:)`` read for the unique check (the last put of each id).
        var keys = IDTable<[[CompoundKey]]>()
    }

    struct TypeState: Sendable {
        /// The indexes, exact as of `sequence`; nil until built (and while a scan has them).
        var data: TypeIndexData?
        var sequence: UInt64 = 0
        /// Whether the hooks queue this type's deltas, and from which sequence number on.
        var recordFrom: UInt64?
        var pending: [Delta] = []
        /// The objects each applied delta changed, oldest first, covering every batch after `historyFloor`.
        var history: [(sequence: UInt64, ids: [ObjectID])] = []
        var historyCount = 0
        var historyFloor: UInt64 = 0
        /// Whether the data changed since it was read from or written to the type's ``IndexFile``.
        var changedSinceFile = true
        /// Whether the applier has the data out (``data`` nil meanwhile), or only its ordered entries (the
        /// rest of ``data`` stays: the unique check and equality lookups go on): whoever needs what it has
        /// waits for it to be put back.
        var applying = false

        /// Threads waiting for the applier to put this type's data back: while there are any, the applier
        /// takes nothing more of the type (they apply what is left themselves), so that commits coming one
        /// after another cannot keep a query waiting.
        var waiting = 0

        /// How many changes wait for the applier: entry changes logged, and puts and removals queued.
        var backlog: Int {
            pending.reduce(data?.entryLog.count ?? 0) { $0 + $1.puts.count + $1.removed.count }
        }

        /// Whether the indexes are built (the data here, or out with the applier).
        var isBuilt: Bool { data != nil || applying }

        /// Whether the applier has the whole data out.
        var applierHasData: Bool { applying && data == nil }

        /// Takes the queued deltas up to `target` out of the queue, oldest first.
        mutating func takeDeltas(through target: UInt64) -> [Delta] {
            var count = 0
            while count < pending.count && pending[count].sequence <= target { count += 1 }
            if count == pending.count {
                let all = pending
                pending = []
                return all
            }
            let taken = Array(pending[..<count])
            pending.removeFirst(count)
            return taken
        }

        /// Puts back `data` with `applied` (each applied delta's changed objects) applied, exact through
        /// `target`, and notes them in the history.
        mutating func finishApplying(
            _ data: TypeIndexData, _ applied: [(sequence: UInt64, ids: [ObjectID])], through target: UInt64
        ) {
            for entry in applied {
                history.append(entry)
                historyCount += entry.ids.count
                if !entry.ids.isEmpty { changedSinceFile = true }
            }
            if target > sequence { sequence = target }
            while historyCount > ObjectIndexes.historyLimit, let first = history.first {
                history.removeFirst()
                historyCount -= first.ids.count
                historyFloor = first.sequence
            }
            self.data = data
        }

        /// What the unique index `index` says of `key` at sequence `target`. Changes nothing: `mutating` so
        /// that a call on an element of the state's array reads it in place (a call on a copy retains each
        /// of its tables, a third of a lookup's time).
        mutating func uniqueHolder(of key: CompoundKey, in index: Int, at target: UInt64) -> UniqueAnswer {
            guard target == sequence, recordFrom != nil, data?.absent[index].isEmpty == true,
                let found = data?.holder(of: key, in: index), found.exact
            else { return .unanswered }
            return .holder(found.id)
        }

        /// Whether the index is built and kept, but not yet at sequence `target` (queued deltas reach it).
        /// Changes nothing (`mutating` as ``uniqueHolder(of:in:at:)`` is).
        mutating func isBehind(_ target: UInt64) -> Bool { data != nil && recordFrom != nil && target > sequence }
    }

    struct State: Sendable {
        /// The sequence number of the last batch the hooks saw.
        var lastAccepted: UInt64
        var types: [TypeState]
        /// Catch-up scans done (for tests and statistics).
        var scans = 0
        /// Index files read at a build instead of the records (for tests and statistics).
        var filesRead = 0
        /// Why index files could not be read or written (each is then rebuilt from the records).
        var fileNotes: [String] = []
        /// The keys the last ``validate(_:)`` read, per indexed type, for the batch it checked: the
        /// engine calls `accepted` for that batch next (under the same lock), or validates another.
        var validatedKeys: [Int: IDTable<[[CompoundKey]]>] = [:]
        /// How many operations the batch ``validatedKeys`` belong to has (a second check that `accepted`
        /// takes them for that batch).
        var validatedCount = 0
        /// Whether a run of the applier is queued or running (it clears this when it finds nothing to do).
        var applierScheduled = false
        /// Deltas the commit hooks applied, left for the applier to free (their records and keys are many
        /// small allocations, whose freeing would lengthen the commit).
        var appliedDeltas: [[Delta]] = []
    }

    /// Whether the applier runs (``ObjectStoreTuning/appliesIndexesInBackground``); without it each commit
    /// applies its batch whole.
    let inBackground: Bool
    /// How many changes of one type may wait for the applier (``ObjectStoreTuning/indexBacklogLimit``).
    let backlogLimit: Int

    init(
        registry: TypeRegistry, relationships: RelationshipTable, store: Store, catalog: KeyCatalog,
        inBackground: Bool, backlogLimit: Int
    ) throws(ObjectStoreError) {
        self.inBackground = inBackground
        self.backlogLimit = max(backlogLimit, 0)
        let all = try IndexedType.all(in: registry, relationships: relationships)
        types = all
        var byTag: [UInt32: [Int]] = [:]
        for type in all { for tag in type.tags { byTag[tag, default: []].append(type.number) } }
        typesByTag = byTag
        mostSpecificByTag = byTag.compactMapValues { numbers in
            numbers.min { all[$0].tags.count < all[$1].tags.count }
        }
        self.store = store
        self.catalog = catalog
        state = ConditionLock(State(lastAccepted: 0, types: Array(repeating: TypeState(), count: types.count)))
        maintenance = ConditionLock(false)
        guard !types.isEmpty else { return }
        let accepted = store.installBatchHooks(
            BatchHooks(
                validate: { [weak self] operations in try self?.validate(operations) },
                accepted: { [weak self] operations, batch in self?.accepted(operations, batch) }))
        state.withLock { $0.lastAccepted = accepted }
    }

    /// The most specific indexed type whose objects include those carrying `tag`: the class's own
    /// indexes, or else those of its nearest superclass with indexes (its set of tags is the smallest).
    func indexedType(forTag tag: UInt32) -> IndexedType? {
        mostSpecificByTag[tag].map { types[$0] }
    }

    /// The numbers of the indexed types that objects carrying `tag` belong to (empty when none).
    private func numbers(forTag tag: UInt32) -> [Int] { typesByTag[tag] ?? [] }

    /// The indexed type of the class `type` (its own indexes, or those it inherits).
    func indexedType(of type: any PersistentObject.Type, registry: TypeRegistry) -> IndexedType? {
        guard let tag = registry.registration(of: type)?.tag else { return nil }
        return indexedType(forTag: tag)
    }

    var scanCount: Int { state.withLock { $0.scans } }

    // MARK: Hooks (under the engine's commit lock)

    private func accepted(_ operations: [WriteBatch.Operation], _ batch: CommittedBatch) {
        let overloaded = state.withLock { state -> [Int] in
            state.lastAccepted = batch.sequence
            let validated = state.validatedCount == operations.count ? state.validatedKeys : [:]
            state.validatedKeys = [:]
            guard state.types.contains(where: { $0.recordFrom != nil }) else { return [] }
            var overloaded: [Int] = []
            // Per type, changed in place (`deltas[number]?`): a copy taken out and stored back would copy the
            // whole list on every append.
            var deltas = [Delta?](repeating: nil, count: state.types.count)
            func records(_ number: Int) -> Bool {
                guard let from = state.types[number].recordFrom, batch.sequence >= from else { return false }
                if deltas[number] == nil { deltas[number] = Delta(sequence: batch.sequence, puts: [], removed: []) }
                return true
            }
            // The types of the last put's tag, and the others (puts of one class come together).
            var lastTag: UInt32?
            var ofTag: [Int] = []
            var others: [Int] = []
            for operation in operations {
                guard case .put(let record) = operation else { continue }
                if record.typeTag != lastTag {
                    lastTag = record.typeTag
                    ofTag = numbers(forTag: record.typeTag)
                    others = types.indices.filter { !types[$0].tags.contains(record.typeTag) }
                }
                for number in ofTag where records(number) { deltas[number]?.puts.append(record) }
                // An id that changed type leaves the index of the type it had. While a scan or the applier
                // holds a type's data, any id may be in it: the removal is queued (removing an id the index
                // lacks changes nothing).
                for number in others
                where (state.types[number].data == nil || state.types[number].data?.version(of: record.id) != nil)
                    && records(number)
                {
                    deltas[number]?.removed.append(record.id)
                }
            }
            for change in Array(batch.deleted) + Array(batch.freed) {
                for number in numbers(forTag: change.typeTag) where records(number) {
                    deltas[number]?.removed.append(change.id)
                }
            }
            for number in deltas.indices {
                guard var change = deltas[number] else { continue }
                deltas[number] = nil
                // Only keys read from this batch's own puts (each put of the type has its keys there).
                if let keys = validated[number], change.puts.allSatisfy({ keys.contains($0.id) }) {
                    change.keys = keys
                }
                state.types[number].pending.append(change)
                guard state.types[number].isBuilt else { continue }
                guard inBackground else {
                    // Everything now, on the committing thread.
                    apply(through: batch.sequence, to: &state.types[number], types[number], nil)
                    state.types[number].data?.flushEntries()
                    continue
                }
                // The keys and unique tables of a type with a unique index change now (the next unique check
                // needs them), its ordered entries on the applier; the other types' deltas wait whole for
                // the applier.
                if types[number].hasUnique, state.types[number].data != nil {
                    let applied = apply(through: batch.sequence, to: &state.types[number], types[number], nil)
                    state.appliedDeltas.append(applied)
                }
                if state.types[number].backlog > backlogLimit { overloaded.append(number) }
                scheduleApplier(&state)
            }
            return overloaded
        }
        // More waits for the applier than it may: this commit applies it (after the applier's current run).
        for number in overloaded {
            whenApplierDone(number) { state in
                apply(through: state.lastAccepted, to: &state.types[number], types[number], nil)
                state.types[number].data?.flushEntries()
            }
        }
    }

    private func validate(_ operations: [WriteBatch.Operation]) throws {
        var unique: Set<Int> = []
        for operation in operations {
            if case .put(let record) = operation {
                for number in numbers(forTag: record.typeTag) where types[number].hasUnique { unique.insert(number) }
            }
        }
        // Without puts of a type with a unique index, keys left by an earlier check need no clearing: they
        // are only ever used for puts of such a type, which this batch has none of.
        guard !unique.isEmpty else { return }
        let keys = catalog.snapshot()
        let numbers = unique.sorted()
        // Once the applier does not have the whole data of any type checked (it never takes the data of a
        // type with a unique index: a guard, should that change; the check needs them exact through
        // the last accepted batch).
        let outcome = state.waitUntil { state -> Result<Void, any Error>? in
            guard !numbers.contains(where: { state.types[$0].applierHasData }) else { return nil }
            do {
                state.validatedKeys = [:]
                state.validatedCount = operations.count
                for number in numbers {
                    let type = types[number]
                    guard state.types[number].data != nil, state.types[number].recordFrom != nil else {
                        throw IndexNotReady(type: number)
                    }
                    apply(through: state.lastAccepted, to: &state.types[number], type, keys)
                    guard let data = state.types[number].data else { throw IndexNotReady(type: number) }
                    state.validatedKeys[number] = try UniqueCheck(type: type, data: data, keys: keys).check(operations)
                }
                return .success(())
            } catch {
                return .failure(error)
            }
        }
        try outcome.get()
    }

    // MARK: Applying deltas

    /// Applies the queued deltas up to `sequence` (under the state lock, the type's data not with the
    /// applier). `keys` is the catalog to read put payloads with (taken when first needed if nil: puts whose
    /// keys the unique check read need none).
    /// Returns the deltas it took from the queue (those the index already held included).
    @discardableResult
    func apply(
        through sequence: UInt64, to typeState: inout TypeState, _ type: IndexedType, _ keys: KeyCatalog.Snapshot?
    ) -> [Delta] {
        guard var data = typeState.data else { return [] }
        typeState.data = nil
        let deltas = typeState.takeDeltas(through: sequence)
        let applied = Self.applyDeltas(deltas, after: typeState.sequence, to: &data, type, keys: keys, catalog: catalog)
        typeState.finishApplying(data, applied, through: sequence)
        return deltas
    }

    /// Applies `deltas` (in sequence order) to `data`, skipping those at or before `after` (already in it);
    /// returns the objects each applied delta changed, for the history. Touches no shared state: the
    /// applier calls it without holding the state lock.
    static func applyDeltas(
        _ deltas: [Delta], after applied: UInt64, to data: inout TypeIndexData, _ type: IndexedType,
        keys: KeyCatalog.Snapshot?, catalog: KeyCatalog
    ) -> [(sequence: UInt64, ids: [ObjectID])] {
        var reader: IndexKeyReader?
        func readKeys(_ record: Record) -> [[CompoundKey]] {
            if reader == nil {
                reader = IndexKeyReader(
                    definitions: type.definitions, aliases: type.aliases, catalog: keys ?? catalog.snapshot())
            }
            return reader?.keys(payload: record.payload, references: record.references) ?? []
        }
        var history: [(sequence: UInt64, ids: [ObjectID])] = []
        history.reserveCapacity(deltas.count)
        for delta in deltas where delta.sequence > applied {
            var changed: [ObjectID] = []
            changed.reserveCapacity(delta.puts.count + delta.removed.count)
            for record in delta.puts {
                data.set(record.id, version: delta.sequence, keys: delta.keys[record.id] ?? readKeys(record))
                changed.append(record.id)
            }
            for id in delta.removed {
                // A removal queued for an id the indexes do not hold changes nothing and is not history.
                if data.remove(id) { changed.append(id) }
            }
            history.append((delta.sequence, changed))
        }
        return history
    }

    // MARK: Reading

    /// What a query at one snapshot reads: the index (exact as of `sequence`, at or after the snapshot's),
    /// and the objects changed after the snapshot (to test as of the snapshot).
    struct View {
        let data: TypeIndexData
        let changedSince: Set<ObjectID>
    }

    /// The indexes of `type` for a query at `snapshot`: built or caught up as needed; nil when the snapshot
    /// is older than what the index can answer for (the query then scans the type).
    /// - throws: ``ObjectStoreError`` `store` when reading the store fails.
    func view(of type: IndexedType, at snapshot: Snapshot) throws(ObjectStoreError) -> View? {
        let target = snapshot.sequence
        if case .ready(let view) = readiness(type, target) { return view }
        return try maintenance.withLock { _ throws(ObjectStoreError) -> View? in
            switch readiness(type, target) {
            case .ready(let view): return view
            case .tooOld: return nil
            case .needsScan:
                try scan(type, at: snapshot)
                if case .ready(let view) = readiness(type, target) { return view }
                return nil
            }
        }
    }

    /// ``readyView(_:_:_:)`` once the applier does not have the type's data.
    private func readiness(_ type: IndexedType, _ target: UInt64) -> Readiness {
        whenApplierDone(type.number) { state in readyView(type, target, &state) }
    }

    /// Runs `body` under the state lock once the applier has none of type `number`'s data (waiting for it to
    /// put back what it has, and keeping it from taking the type again meanwhile).
    func whenApplierDone<Result>(_ number: Int, _ body: (inout State) -> Result) -> Result {
        state.withLock { $0.types[number].waiting += 1 }
        return state.waitUntil { state -> Result? in
            guard !state.types[number].applying else { return nil }
            state.types[number].waiting -= 1
            return .some(body(&state))
        }
    }

    /// What the unique index alone says of one key at one snapshot.
    enum UniqueAnswer {
        /// The object holding the key (nil when none does).
        case holder(ObjectID?)
        /// The index cannot say alone (not built, not at the snapshot, objects it cannot key): read a
        /// ``View``.
        case unanswered
    }

    /// The object holding `key` in the unique index `index` of `type` at `snapshot`, when the index answers
    /// alone: built and exact at the snapshot, and no object of the type has an absent key in it. A lookup
    /// through it copies nothing.
    func uniqueHolder(_ type: IndexedType, index: Int, key: CompoundKey, at snapshot: Snapshot) -> UniqueAnswer {
        let target = snapshot.sequence
        return state.withLock { state in
            let number = type.number
            // Each read of the type's state is a call on it in place (a copy would retain all its tables).
            if state.types[number].isBehind(target) {
                guard target <= state.lastAccepted else { return .unanswered }
                apply(through: target, to: &state.types[number], type, catalog.snapshot())
            }
            return state.types[number].uniqueHolder(of: key, in: index, at: target)
        }
    }

    private enum Readiness {
        case ready(View)
        /// The index is not built, or misses batches the hooks did not see: a scan brings it to the snapshot.
        case needsScan
        /// The snapshot is older than the index and its history: the query scans the type.
        case tooOld
    }

    /// Builds the indexes of the types with unique indexes that `batch` puts objects of, if they are not
    /// built, so that the commit can check them.
    func prepareUnique(for batch: WriteBatch) throws(ObjectStoreError) {
        guard types.contains(where: \.hasUnique) else { return }
        var numbers: Set<Int> = []
        for operation in batch.operations {
            if case .put(let record) = operation {
                for number in self.numbers(forTag: record.typeTag) where types[number].hasUnique {
                    numbers.insert(number)
                }
            }
        }
        for number in numbers.sorted() { try prepare(types[number]) }
    }

    /// Builds the indexes of `type` if they are not, so that saves can check its unique indexes.
    func prepare(_ type: IndexedType) throws(ObjectStoreError) {
        try maintenance.withLock { _ throws(ObjectStoreError) in
            guard !state.withLock({ $0.types[type.number].isBuilt }) else { return }
            let snapshot: Snapshot
            do throws(LogStoreError) {
                snapshot = try store.snapshot()
            } catch {
                throw ObjectStoreError(error)
            }
            try scan(type, at: snapshot)
        }
    }

    /// The view when no scan is needed (under the state lock, the applier not having any of the type's
    /// data).
    private func readyView(_ type: IndexedType, _ target: UInt64, _ state: inout State) -> Readiness {
        let number = type.number
        guard state.types[number].data != nil, state.types[number].recordFrom != nil else { return .needsScan }
        if target > state.types[number].sequence {
            // Batches the hooks did not see (written by another process): scan.
            guard target <= state.lastAccepted else { return .needsScan }
            apply(through: target, to: &state.types[number], type, catalog.snapshot())
        }
        // The entries the applier has not reached yet (a query reads them in order).
        state.types[number].data?.flushEntries()
        let typeState = state.types[number]
        guard let data = typeState.data else { return .needsScan }
        if target == typeState.sequence { return .ready(View(data: data, changedSince: [])) }
        guard target >= typeState.historyFloor else { return .tooOld }
        var changed: Set<ObjectID> = []
        for entry in typeState.history.reversed() {
            guard entry.sequence > target else { break }
            changed.formUnion(entry.ids)
        }
        return .ready(View(data: data, changedSince: changed))
    }

    /// Brings the indexes of `type` to `snapshot` by comparing every object's version with the indexed one
    /// (from nothing when they are not built), reading the records that differ. Under `maintenance`.
    private func scan(_ type: IndexedType, at snapshot: Snapshot) throws(ObjectStoreError) {
        let number = type.number
        var taken = whenApplierDone(number) { state -> TypeIndexData? in
            if state.types[number].recordFrom == nil { state.types[number].recordFrom = state.lastAccepted + 1 }
            let data = state.types[number].data
            state.types[number].data = nil
            return data
        }
        defer {
            if let taken { state.withLock { $0.types[number].data = $0.types[number].data ?? taken } }
        }
        var snapshot = snapshot
        // Batches accepted before recording began must be in what the scan reads.
        let recordFrom = state.withLock { $0.types[number].recordFrom ?? 0 }
        while snapshot.sequence + 1 < recordFrom {
            do {
                snapshot = try store.snapshot()
            } catch {
                throw ObjectStoreError(error)
            }
            if snapshot.sequence + 1 < recordFrom { usleep(100) }
        }
        var reader = IndexKeyReader(definitions: type.definitions, aliases: type.aliases, catalog: catalog.snapshot())
        var live = 0
        var data: TypeIndexData
        // Whether the data differs from what the type's index file holds: a build from nothing, or a change the
        // catch-up finds (a file read unchanged is not written again at close).
        var changed = taken == nil
        var fromFile = false
        do {
            let base = taken ?? readFile(type, at: snapshot)
            fromFile = taken == nil && base != nil
            if fromFile { changed = false }
            if let base {
                data = base
                let ids = type.tags.flatMap { snapshot.ids(ofType: $0) }
                live = ids.count
                for (id, version) in Self.changedObjects(ids, at: snapshot, from: data) {
                    guard let record = try snapshot.get(id) else { continue }
                    data.set(
                        id, version: version, keys: reader.keys(payload: record.payload, references: record.references))
                    changed = true
                }
            } else {
                // From nothing: every object's keys, then one sort per index.
                let ids = type.tags.flatMap { snapshot.ids(ofType: $0) }
                live = ids.count
                let objects = try Self.keys(of: ids, at: snapshot, reader)
                data = TypeIndexData(unique: type.definitions.map(\.isUnique), building: objects)
            }
        } catch {
            throw ObjectStoreError(error)
        }
        if data.objectCount > live {
            for id in Array(data.objectIDs) {
                if let tag = try? snapshot.header(of: id)?.typeTag, type.tags.contains(tag) { continue }
                data.remove(id)
                changed = true
            }
        }
        data.flushEntries()
        taken = nil
        state.withLock { state in
            var typeState = state.types[number]
            typeState.data = data
            typeState.sequence = snapshot.sequence
            typeState.pending.removeAll { $0.sequence <= snapshot.sequence }
            typeState.history = []
            typeState.historyCount = 0
            typeState.historyFloor = snapshot.sequence
            typeState.changedSinceFile = fromFile ? changed : (typeState.changedSinceFile || changed)
            state.types[number] = typeState
            state.scans += 1
            if fromFile { state.filesRead += 1 }
            // Batches committed while the scan read (the applier skipped the type meanwhile).
            if !state.types[number].pending.isEmpty { scheduleApplier(&state) }
        }
    }
}

extension ObjectIndexes {
    /// The objects of `ids` whose version at `snapshot` differs from the one `data` indexed, with that
    /// version; compared on two threads when there are many.
    static func changedObjects(_ ids: [ObjectID], at snapshot: Snapshot, from data: TypeIndexData)
        -> [(id: ObjectID, version: UInt64)]
    {
        let parts = ids.count >= 20_000 ? 2 : 1
        let results = Mutex([[(id: ObjectID, version: UInt64)]](repeating: [], count: parts))
        DispatchQueue.concurrentPerform(iterations: parts) { part in
            var found: [(id: ObjectID, version: UInt64)] = []
            for id in ids[part * ids.count / parts..<(part + 1) * ids.count / parts] {
                if let version = snapshot.version(of: id), data.version(of: id) != version {
                    found.append((id, version))
                }
            }
            results.withLock { $0[part] = found }
        }
        return results.withLock { $0.flatMap { $0 } }
    }

    /// The version and keys of each of `ids` stored at `snapshot` (those not stored are left out), read
    /// in parts on as many threads as Dispatch gives when there are many (a build from nothing reads
    /// every record of the class).
    /// - throws: ``LogStoreError`` when reading a record fails.
    static func keys(of ids: [ObjectID], at snapshot: Snapshot, _ reader: IndexKeyReader) throws(LogStoreError)
        -> [(id: ObjectID, keys: TypeIndexData.ObjectKeys)]
    {
        let parts = ids.count >= 20_000 ? 2 : 1
        let results = Mutex([[(id: ObjectID, keys: TypeIndexData.ObjectKeys)]](repeating: [], count: parts))
        let failure = Mutex<LogStoreError?>(nil)
        DispatchQueue.concurrentPerform(iterations: parts) { part in
            var reader = reader
            var found: [(id: ObjectID, keys: TypeIndexData.ObjectKeys)] = []
            let range = part * ids.count / parts..<(part + 1) * ids.count / parts
            found.reserveCapacity(range.count)
            do throws(LogStoreError) {
                for id in ids[range] {
                    guard let (record, version) = try snapshot.versionedGet(id) else { continue }
                    let keys = reader.keys(payload: record.payload, references: record.references)
                    found.append((id, TypeIndexData.ObjectKeys(version: version, keys: keys)))
                }
            } catch {
                failure.withLock { $0 = $0 ?? error }
            }
            results.withLock { $0[part] = found }
        }
        if let error = failure.withLock({ $0 }) { throw error }
        return results.withLock { $0.flatMap { $0 } }
    }
}

/// A unique index's check could not run: its index is not built yet (the save builds it and tries again).
struct IndexNotReady: Error {
    let type: Int
}
