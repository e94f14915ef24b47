import CXXHash
import LogStore

/// One load of an object and everything it references eagerly.
///
/// The graph is walked iteratively (no recursion, so long chains cannot exhaust the stack): a record's
/// eager references are loaded before the record itself is decoded, so a plain reference field finds its
/// target in the cache. A reference that closes a cycle points at an object still being loaded; wrapper
/// fields (``ObjectRef``, ``ObjectList``) are filled in when the load finishes, plain fields report
/// `cyclicReference`.
final class LoadSession: ContextConfined<LoadSessionState> {

    private(set) weak var context: ObjectContext?
    private let registry: TypeRegistry
    private let objectStore: ObjectStore
    /// The snapshot every record of this load comes from.
    let view: Snapshot

    private struct Pending {
        let slot: ObjectSlot
        let record: Record
        let type: RegisteredType
        let eagerCount: Int
        var next = 0
    }

    deinit {
        // The pooled containers of the reused decoder refer back to it.
        state.reusable?.containers.removeAll()
    }

    init(_ context: ObjectContext, view: Snapshot) {
        self.context = context
        self.view = view
        self.registry = context.registry
        self.objectStore = context.objectStore
        super.init(
            state: LoadSessionState(
                keys: context.objectStore.catalog.snapshot(),
                kinds: ValueKinds(decoding: true, fieldCoding: context.registry.usesFieldCoding)))
    }

    func refreshKeys() -> KeyCatalog.Snapshot {
        state.keys = objectStore.catalog.snapshot()
        return state.keys
    }

    /// Loads `id` and its eager references into `context`, the context of this session (passed by the
    /// caller, which holds it: no weak reference read per object);
    /// nil when `id` is not live.
    func load(_ id: ObjectID, in context: ObjectContext) throws(ObjectStoreError) -> (any PersistentObject)? {
        if let slot = context.cache.slot(id) {
            if let object = slot.object { return object }
            if slot.isLoading { return nil }
        }
        guard let first = try read(id, context, intoSharedBuffer: true) else { return nil }
        // Most records load nothing eagerly: decoded at once, without a stack.
        if first.eagerCount == 0 {
            do {
                // Returned to the caller at once: the session need not keep it alive.
                return try decode(first, in: context, keep: false)
            } catch  where error.code == .cyclicReference {
                try decodePostponed([(first, error)], in: context)
                return context.cache.slot(id)?.object
            }
        }
        var stack = [first]
        // Objects whose plain field referred to an object still being loaded (a cycle): decoded again once
        // the stack has unwound, when that object exists (its wrapper fields wait for these in fix-ups).
        var postponed: [(Pending, ObjectStoreError)] = []
        while !stack.isEmpty {
            let top = stack.count - 1
            if stack[top].next < stack[top].eagerCount {
                let child = stack[top].record.references[stack[top].next]
                stack[top].next += 1
                if let slot = context.cache.slot(child), slot.isLoading || slot.object != nil { continue }
                // Into an array of its own: the records on the stack hold on to theirs (the shared buffer
                // would be copied on write each time, which costs more than a new array).
                if let pending = try read(child, context, intoSharedBuffer: false) { stack.append(pending) }
                continue
            }
            let pending = stack.removeLast()
            do {
                _ = try decode(pending, in: context)
            } catch  where error.code == .cyclicReference {
                postponed.append((pending, error))
            }
        }
        try decodePostponed(postponed, in: context)
        return context.cache.slot(id)?.object
    }

    /// Decodes the records whose plain fields referred to objects still being loaded, again and again while
    /// each round decodes one more; throws the first one's error when a round decodes none.
    private func decodePostponed(_ postponed: [(Pending, ObjectStoreError)], in context: ObjectContext)
        throws(ObjectStoreError)
    {
        var postponed = postponed
        while !postponed.isEmpty {
            var stillWaiting: [(Pending, ObjectStoreError)] = []
            for (pending, _) in postponed {
                do {
                    _ = try decode(pending, in: context)
                } catch  where error.code == .cyclicReference {
                    stillWaiting.append((pending, error))
                }
            }
            if stillWaiting.count == postponed.count, let (_, error) = stillWaiting.first { throw error }
            postponed = stillWaiting
        }
    }

    /// Reads `id`'s record and marks it in progress; nil when it is not live.
    /// `intoSharedBuffer`: the payload is decompressed into ``LoadSessionState/payloadBuffer`` (no
    /// allocation when nothing else holds it: the record is decoded before the next one is read).
    private func read(_ id: ObjectID, _ context: ObjectContext, intoSharedBuffer: Bool) throws(ObjectStoreError)
        -> Pending?
    {
        let found: (record: Record, version: UInt64)?
        do {
            found =
                intoSharedBuffer
                ? try view.versionedGet(id, payloadBuffer: &state.payloadBuffer) : try view.versionedGet(id)
        } catch {
            throw ObjectStoreError(error)
        }
        guard let (record, version) = found else { return nil }
        guard let type = registry.type(forTag: record.typeTag) else {
            if record.typeTag == SalvageReport.placeholderTypeTag {
                throw ObjectStoreError(
                    .lostObject, String(decoding: record.payload, as: UTF8.self), typeName: "logstore.lost",
                    objectID: id)
            }
            let name = objectStore.typeName(forTag: record.typeTag)
            throw ObjectStoreError(
                .unregisteredType,
                name.map { "type \"\($0)\" is not registered with the ObjectStore" }
                    ?? "type tag \(record.typeTag) names no registered type (and no stored type name)",
                typeName: name, objectID: id)
        }
        let eagerCount = try eagerCount(of: record, type: type)
        let slot = context.cache.insert(nil, id: id, storedHash: nil, pinned: record.isPinned)
        slot.isLoading = true
        slot.version = version
        state.loadedIDs.append(id)
        return Pending(slot: slot, record: record, type: type, eagerCount: eagerCount)
    }

    private func eagerCount(of record: Record, type: RegisteredType) throws(ObjectStoreError) -> Int {
        guard let version = record.payload.first else {
            throw ObjectStoreError(.corruptPayload, "empty payload", typeName: type.name, objectID: record.id)
        }
        if !ObjectFormat.hasEagerCount(version: version) { return record.references.count }
        var reader = ByteReader(record.payload, objectID: record.id, typeName: type.name)
        reader.offset = 1
        return min(try reader.readCount(), record.references.count)
    }

    /// Decodes `pending`'s record into a new instance and gives it its slot; `keep`: the session holds the
    /// instance until it ends (an object loaded for another one, which takes it only when it is decoded).
    private func decode(_ pending: Pending, in context: ObjectContext, keep: Bool = true) throws(ObjectStoreError)
        -> any PersistentObject
    {
        let record = pending.record
        let decoder: PayloadDecoder
        if let reusable = state.reusable, !reusable.state.isBusy {
            try reusable.reset(
                payload: record.payload, references: record.references, objectID: record.id, type: pending.type)
            decoder = reusable
        } else {
            decoder = try PayloadDecoder(
                payload: record.payload, references: record.references, objectID: record.id, type: pending.type,
                session: self)
            if state.reusable == nil { state.reusable = decoder }
        }
        // A decoder's pooled containers refer back to it: a one-off decoder drops them when done.
        defer { if decoder !== state.reusable { decoder.containers.removeAll() } }
        let object = try decoder.decodeObject()
        if decoder === state.reusable { decoder.dropPayload() }
        let slot = pending.slot
        slot.storedHash = ContentHash.of(record)
        slot.storedWithoutReferences = record.references.isEmpty
        slot.isLoading = false
        if let access = pending.type.modelAccess {
            access.setSlot(object, slot)
            slot.isTracked = true
        } else {
            // An instance that does not report its changes is kept: a change to it must reach the next save
            // whether or not the caller still holds it. (A failed load forgets the slot, and the hold.)
            context.cache.hold(slot, object)
        }
        if keep { state.loaded.append(object) }
        state.loadedSlots.append(slot)
        // Last: the slot's weak reference gives the instance a side table, and every retain and release of
        // it after that takes the runtime's slower path.
        context.cache.attach(object, to: slot)
        return object
    }

    /// The object a plain reference field names: from the cache, or loaded now; nil when it is still being
    /// loaded (a cycle).
    /// - throws: `danglingReference` naming the field when `id` is not live.
    func resolve(_ id: ObjectID, referencedBy decoder: PayloadDecoder, path: @autoclosure () -> [any CodingKey])
        throws(ObjectStoreError) -> (any PersistentObject)?
    {
        if let slot = context?.cache.slot(id) {
            if let object = slot.object { return object }
            if slot.isLoading { return nil }
        }
        guard let context, let object = try load(id, in: context) else { throw dangling(id, decoder, path()) }
        return object
    }

    /// Calls `fill` with the object `id` now, or when this load finishes if `id` is still being loaded.
    func resolveLater(
        _ id: ObjectID, referencedBy decoder: PayloadDecoder, path: [any CodingKey],
        _ fill: @escaping (any PersistentObject) throws(ObjectStoreError) -> Void
    ) throws(ObjectStoreError) {
        if let object = try resolve(id, referencedBy: decoder, path: path) {
            try fill(object)
        } else {
            state.fixups.append((id, fill))
        }
    }

    /// Fills in the wrapper fields that waited for objects of a cycle.
    func finish() throws(ObjectStoreError) {
        for (id, fill) in state.fixups {
            guard let object = context?.cachedObject(id) else {
                throw ObjectStoreError(.danglingReference, "object \(id) did not load", objectID: id)
            }
            try fill(object)
        }
        state.fixups.removeAll()
    }

    private func dangling(_ id: ObjectID, _ decoder: PayloadDecoder, _ path: [any CodingKey]) -> ObjectStoreError {
        ObjectStoreError(
            .danglingReference, "referenced object \(id) no longer exists (deleted or collected)",
            typeName: decoder.state.type.name, field: CodingPath.describe(path),
            objectID: decoder.state.objectID)
    }
}

/// The working state of a ``LoadSession``, kept without dynamic exclusivity checks (see ``ContextConfined``).
struct LoadSessionState {
    var keys: KeyCatalog.Snapshot
    /// How values of each type decode (reference, special, plain), found once per type.
    var kinds: ValueKinds
    /// What this session decoded for other objects (eager references), held until it finishes.
    var loaded: [any PersistentObject] = []
    /// The slots of everything decoded in this session, to publish when it finishes (``InstanceOwners``).
    var loadedSlots: [ObjectSlot] = []
    /// The decoder reused for each object (unless a nested load needs one while it is busy).
    var reusable: PayloadDecoder?
    /// The ids whose records this session read (decoded or not): forgotten when the load fails.
    var loadedIDs: [ObjectID] = []
    /// The array each record's payload is decompressed into: reused while nothing else holds the last
    /// one (a record decoded at once), copied on write otherwise (records waiting for their references).
    var payloadBuffer: [UInt8] = []
    /// Wrapper fields to fill in at the end, with the ids they wait for.
    var fixups: [(ObjectID, (any PersistentObject) throws(ObjectStoreError) -> Void)] =
        []
}

/// The hash a context compares to tell whether an object changed since it was stored.
enum ContentHash {
    static func of(_ record: Record) -> UInt64 {
        of(typeTag: record.typeTag, pinned: record.isPinned, references: record.references, payload: record.payload)
    }

    /// XXH3-64 of the payload, seeded with type and pin, chained over the reference ids.
    static func of(typeTag: UInt32, pinned: Bool, references: [ObjectID], payload: [UInt8]) -> UInt64 {
        let seed = UInt64(typeTag) << 1 | (pinned ? 1 : 0)
        let payloadHash = payload.withUnsafeBytes { XXH3_64bits_withSeed($0.baseAddress, $0.count, seed) }
        return references.withUnsafeBytes { XXH3_64bits_withSeed($0.baseAddress, $0.count, payloadHash) }
    }
}
