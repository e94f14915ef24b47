import LogStore
@_spi(Engine) import LogStoreSystem

extension ObjectContext {
    /// Writes every new or changed object this context holds (and every new object they reach), root
    /// changes and deletes, in one atomic batch.
    ///
    /// What is encoded: the objects added, named as roots or pinned since the last save, every
    /// ``PersistentModel`` (a `@Persistent` class) whose properties changed, and every other
    /// ``PersistentObject`` the context handed out (such a class does not report its changes, so the context
    /// keeps its instances and encodes them all), with the new objects they reach. An encoded object is
    /// written when its encoding differs from its stored record (a hash is compared), so an unchanged one
    /// costs an encoding but no write; an unchanged model costs nothing. Objects reached only through references are stored
    /// unpinned: when nothing live references them any more, the collector removes them.
    /// - throws: ``ObjectStoreError`` `transactionState` inside a transaction (use ``commit()``),
    ///   `encodingFailed`, `unregisteredClass`, `deletedObject` (a saved object references a deleted one),
    ///   `cyclicReference` (the objects would form a cycle of plain fields, which could not be loaded),
    ///   or `store` (e.g. the engine's `stillReferenced` for a delete). Nothing is written then.
    /// - returns: what was written.
    @discardableResult
    public func save() throws(ObjectStoreError) -> SaveReport {
        guard transactionStart == nil else {
            throw ObjectStoreError(.transactionState, "save() inside a transaction; call commit()")
        }
        return try writeChanges()
    }

    /// Encodes, compares and writes; on success updates what the cache knows of the stored records.
    func writeChanges() throws(ObjectStoreError) -> SaveReport {
        cache.state.suspendPurge = true
        defer { cache.state.suspendPurge = false }
        // What reconciling relationships changed in memory is taken back if the save fails.
        let undo = RelationshipUndo()
        do {
            let changes = try prepareChangesWithRelationships(undo)
            var committed: CommittedBatch?
            if !changes.batch.isEmpty {
                var attempt = 0
                while true {
                    attempt += 1
                    try objectStore.indexes.prepareUnique(for: changes.batch)
                    do {
                        committed = try store.write(changes.batch)
                        break
                    } catch {
                        try describeRejection(error, attempt: attempt)
                    }
                }
            }
            return finishChanges(changes, committed: committed)
        } catch {
            undo.rollBack(in: self)
            throw error
        }
    }

    /// The error of a refused write: a unique index's violation as it is; for an index that was not ready
    /// (a scan had it), nothing, so that the caller tries again (a few times); else the engine's error.
    func describeRejection(_ error: LogStoreError, attempt: Int) throws(ObjectStoreError) {
        guard error.code == .rejected else { throw describe(linking: error) }
        if let violation = error.underlying as? ObjectStoreError { throw violation }
        if error.underlying is IndexNotReady, attempt < 100 { return }
        throw describe(linking: error)
    }

    /// ``writeChanges()`` for Swift concurrency: encodes and finishes in the caller's isolation, and commits
    /// with the engine's asynchronous ``Store/write(_:)``, so that the commit, and the wait for its sync,
    /// block a thread outside the cooperative pool while the caller is suspended.
    ///
    /// Only the batch (a `Sendable` value) goes to the other thread: the context and its objects stay in
    /// the caller's isolation, and the objects' fields are read (encoded) before the suspension. On an
    /// actor, other work of the actor may run while the commit waits; it must not use this context
    /// meanwhile (``ObjectStore/update(attempts:isolation:_:)`` makes a context that no other code holds).
    func writeChanges(isolation: isolated (any Actor)? = #isolation) async throws(ObjectStoreError) -> SaveReport {
        guard transactionStart == nil else {
            throw ObjectStoreError(.transactionState, "save() inside a transaction; call commit()")
        }
        cache.state.suspendPurge = true
        defer { cache.state.suspendPurge = false }
        // What reconciling relationships changed in memory is taken back if the save fails.
        let undo = RelationshipUndo()
        do {
            let changes = try prepareChangesWithRelationships(undo)
            var committed: CommittedBatch?
            if !changes.batch.isEmpty {
                var attempt = 0
                while true {
                    attempt += 1
                    try objectStore.indexes.prepareUnique(for: changes.batch)
                    do {
                        committed = try await store.write(changes.batch)
                        break
                    } catch {
                        try describeRejection(error, attempt: attempt)
                    }
                }
            }
            return finishChanges(changes, committed: committed)
        } catch {
            undo.rollBack(in: self)
            throw error
        }
    }

    /// ``prepareChanges()`` after the relationships were reconciled (see ``reconcileRelationships()``); again
    /// when the encoding met new objects whose relationships need reconciling too.
    func prepareChangesWithRelationships(_ undo: RelationshipUndo) throws(ObjectStoreError) -> PreparedChanges {
        var reconciled = try reconcileRelationships(undo)
        var changes = try prepareChanges()
        var rounds = 0
        while rounds < 8, try reconcileLateObjects(changes, &reconciled, undo) {
            rounds += 1
            changes = try prepareChanges()
        }
        return changes
    }

    /// What a save is about to write: the encoded objects and the batch (see ``prepareChanges()``).
    struct PreparedChanges {
        let session: SaveSession
        let batch: WriteBatch
        /// The field-name record in the batch, if any, and the numbers of the names it carries.
        let keyRecord: (payload: [UInt8], numbers: [Int])?
    }

    /// Encodes every new or changed object and builds the batch of a save, changing nothing the context
    /// knows of the stored records (a save whose write is refused leaves the context as it was).
    func prepareChanges() throws(ObjectStoreError) -> PreparedChanges {
        let session = SaveSession(self)
        for (slot, object) in cache.heldSlots
        where confined.state.pendingDeletes.isEmpty || !confined.state.pendingDeletes.contains(slot.id) {
            session.enqueue(slot, object)
        }
        try session.encodeAll()
        try session.refusePlainCycles()
        try session.rewriteReferencedButGone()
        try settleNewObjects()
        var batch = WriteBatch()
        batch.reserveCapacity(
            session.state.records.count + confined.state.pendingRoots.count + confined.state.pendingDeletes.count + 1)
        for record in session.state.records { batch.put(record) }
        // Optimistic concurrency: each stored object written or deleted must still be the version this
        // context read (checked by the engine atomically with the commit).
        for (slot, _) in session.state.writtenSlots where slot.storedHash != nil {
            let recreated = !session.state.recreated.isEmpty && session.state.recreated.contains(slot.id)
            batch.expect(slot.id, version: recreated ? nil : slot.version)
        }
        if !confined.state.pendingDeletes.isEmpty {
            // The versions of deleted objects this context does not hold, as of the snapshot it reads (without
            // moving on: a refused save must leave the context as it was).
            let view: Snapshot
            if let snapshot = confined.state.snapshot {
                view = snapshot
            } else {
                do {
                    view = try store.snapshot()
                } catch {
                    throw ObjectStoreError(error)
                }
            }
            for id in confined.state.pendingDeletes.sorted() {
                let slot = cache.slot(id)
                batch.expect(id, version: slot?.storedHash != nil ? slot?.version : view.version(of: id))
            }
        }
        let keyRecord = objectStore.catalog.pendingRecord()
        if let keyRecord {
            batch.put(
                Record(
                    id: store.newID(), typeTag: TypeNames.keyRecordTag, payload: keyRecord.payload, isPinned: true))
        }
        for (name, id) in confined.state.pendingRoots {
            if let id { batch.setRoot(name, to: id) } else { batch.removeRoot(name) }
        }
        for id in confined.state.pendingDeletes.sorted() { batch.delete(id) }
        return PreparedChanges(session: session, batch: batch, keyRecord: keyRecord)
    }

    /// After `changes` were written as `committed` (nil for an empty batch, which writes nothing): the
    /// written records are the stored ones, and the pending changes are done.
    func finishChanges(_ changes: PreparedChanges, committed: CommittedBatch?) -> SaveReport {
        let session = changes.session
        let sequence = committed?.sequence ?? 0
        if let committed {
            confined.state.snapshotIsOld = true
            for id in session.state.recreated { confined.state.releasedIDs.remove(id) }
            noteReleased(committed.freed)
        }
        let report = SaveReport(
            written: session.state.records.count, unchanged: session.state.unchangedCount,
            deleted: confined.state.pendingDeletes.count,
            rootChanges: confined.state.pendingRoots.count)
        if let keyRecord = changes.keyRecord { objectStore.catalog.markCommitted(keyRecord.numbers) }
        session.commit(version: sequence)
        for id in confined.state.pendingDeletes { cache.remove(id) }
        confined.state.pendingDeletes.removeAll()
        confined.state.pendingRoots.removeAll()
        cache.releaseHolds()
        return report
    }
}

/// What one ``ObjectContext/save()`` (or ``ObjectContext/commit()``) wrote.
public struct SaveReport: Sendable, Equatable {
    /// Objects written (new or changed).
    public var written: Int
    /// Objects encoded and found equal to their stored records (not written).
    public var unchanged: Int
    /// Objects deleted.
    public var deleted: Int
    /// Named roots set or removed.
    public var rootChanges: Int
}

extension ObjectContext {
    /// ``describe(_:)``, but a `danglingReference` to objects this context read as stored (another save
    /// deleted them, or let the collector take them, after this context read them) is a `conflict`: the
    /// save would bring them back, and work redone on the newer state would not.
    func describe(linking error: LogStoreError) -> ObjectStoreError {
        // The missing object comes first, then the object referring to it.
        guard error.code == .danglingReference, let missing = error.objects.first,
            cache.slot(missing)?.storedHash != nil
        else { return describe(error) }
        let name = cache.object(missing).map { typeName(of: $0) }
        var conflict = ObjectStoreError(
            .conflict,
            "\(name ?? "object") \(missing) was deleted by another save after this context read it; load it "
                + "again or drop the link; nothing was written",
            typeName: name, objectID: missing, underlying: error)
        conflict.objects = [missing]
        return conflict
    }

    /// The engine's error, with the type names of the objects it concerns when it is about references.
    func describe(_ error: LogStoreError) -> ObjectStoreError {
        if error.code == .conflict {
            let names = error.objects.prefix(8).map { id in
                cache.object(id).map { "\(typeName(of: $0)) \(id)" } ?? "object \(id)"
            }
            var conflict = ObjectStoreError(
                .conflict,
                "another save changed \(error.objects.count) object(s) after this context read them: "
                    + names.joined(separator: ", ") + (error.objects.count > 8 ? ", …" : "")
                    + "; nothing was written",
                typeName: error.objects.first.flatMap { cache.object($0) }.map { typeName(of: $0) },
                objectID: error.objects.first, underlying: error)
            conflict.objects = error.objects
            return conflict
        }
        guard error.code == .stillReferenced || error.code == .danglingReference else { return ObjectStoreError(error) }
        let typeNames = error.objects.map { id in
            (try? store.header(of: id)).flatMap { $0 }.flatMap { objectStore.typeName(forTag: $0.typeTag) }
        }
        let named = zip(error.objects, typeNames).compactMap { id, name in name.map { "object \(id) is a \($0)" } }
        let message = error.message + (named.isEmpty ? "" : " (" + named.joined(separator: ", ") + ")")
        let code: ObjectStoreError.Code = error.code == .stillReferenced ? .stillReferenced : .danglingReference
        return ObjectStoreError(
            code, message, typeName: typeNames.first ?? nil, objectID: error.objects.first, underlying: error)
    }
}

/// The objects one save encodes, and the records it writes.
///
/// Bookkeeping lives on the cache slots (marked with this save's generation number), so a save costs no
/// hashing per object beyond the identity cache's own lookups.
final class SaveSession: ContextConfined<SaveSessionState> {

    unowned let context: ObjectContext
    let generation: Int
    lazy var encoder = PayloadEncoder(
        catalog: context.objectStore.catalog, fieldCoding: context.registry.usesFieldCoding
    ) {
        [unowned self] object throws(ObjectStoreError) in
        // An outdated instance a refresh dropped: the reference names the object, which is not written.
        if let id = self.context.cache.linkableID(of: object) { return id }
        let slot = try self.context.assignID(object, pinned: false, allowDeleted: true)
        // A stored model that reports no change needs no encoding (`refusePlainCycles` encodes it when a
        // plain cycle could pass through it).
        if slot.isUnchangedModel { return slot.id }
        // An instance that does not report its changes stays held once a save links it (again).
        if !slot.isTracked && slot.strongHold == nil { self.context.cache.hold(slot, object) }
        if self.context.confined.state.pendingDeletes.isEmpty
            || !self.context.confined.state.pendingDeletes.contains(slot.id)
        {
            self.enqueue(slot, object)
        }
        return slot.id
    }

    private static let generations = GenerationCounter()

    init(_ context: ObjectContext) {
        self.context = context
        self.generation = Self.generations.next()
        super.init(state: SaveSessionState())
    }

    func enqueue(_ slot: ObjectSlot, _ object: any PersistentObject) {
        guard slot.queuedIn != generation else { return }
        slot.queuedIn = generation
        state.queue.append((slot, object))
    }

    func registration(of object: any PersistentObject) throws(ObjectStoreError) -> RegisteredType {
        let key = ObjectIdentifier(type(of: object))
        if let lastType = state.lastType, lastType.0 == key { return lastType.1 }
        if let registered = state.seenTypes[key] {
            state.lastType = (key, registered)
            return registered
        }
        guard let registered = context.registry.type(of: object) else {
            throw ObjectStoreError(
                .unregisteredClass, "\(type(of: object)) is not registered with the ObjectStore",
                typeName: "\(type(of: object))")
        }
        _ = context.objectStore.catalog.number(for: TypeNames.catalogTypePrefix + registered.name)
        state.lastType = (key, registered)
        state.seenTypes[key] = registered
        return registered
    }

    /// Encodes every queued object (the queue grows as new referenced objects are found); keeps the records
    /// that differ from what is stored.
    func encodeAll() throws(ObjectStoreError) {
        var index = 0
        state.records.reserveCapacity(state.queue.count)
        while index < state.queue.count {
            let (slot, object) = state.queue[index]
            index += 1
            let registered = try registration(of: object)
            let (payload, references) = try encoder.encode(object, as: registered)
            let hash = ContentHash.of(
                typeTag: registered.tag, pinned: slot.pinned, references: references, payload: payload)
            let record = Record(
                id: slot.id, typeTag: registered.tag, references: references, payload: payload, isPinned: slot.pinned)
            let plainCount = encoder.state.plainReferences.count
            if plainCount > 0 { notePlainReferences(of: slot, object, written: slot.storedHash != hash) }
            if slot.storedHash == hash {
                slot.unchangedIndex = Int32(truncatingIfNeeded: state.unchangedRecords.count)
                state.unchangedRecords.append(record)
                state.unchangedSlots.append(slot)
                state.unchangedCount += 1
            } else {
                let pendingDeletes = context.confined.state.pendingDeletes
                if !pendingDeletes.isEmpty, let deleted = references.first(where: { pendingDeletes.contains($0) }) {
                    throw ObjectStoreError(
                        .stillReferenced,
                        "object \(deleted) is deleted in this context, but \(registered.name) \(slot.id) refers to it",
                        typeName: context.cachedObject(deleted).map { context.typeName(of: $0) }, objectID: deleted)
                }
                append(record, hash: hash, slot: slot)
            }
        }
        state.queue.removeAll()
    }

    /// Keeps the targets of the plain reference fields the encoder just met, for ``refusePlainCycles()``.
    private func notePlainReferences(of slot: ObjectSlot, _ object: any PersistentObject, written: Bool) {
        let start = state.plainTargets.count
        state.plainTargets += encoder.state.plainReferences
        state.plainReferrers.append(
            PlainReferrer(slot: slot, object: object, targets: start..<state.plainTargets.count))
        if written { state.writesPlainReferences = true }
    }

    private func append(_ record: Record, hash: UInt64, slot: ObjectSlot) {
        state.records.append(record)
        state.writtenSlots.append((slot, hash))
        slot.writtenIn = generation
    }

    /// A record this save writes may reference an unchanged object that is no longer stored (the collector
    /// took it after an earlier save dropped its last reference); such objects are written again.
    func rewriteReferencedButGone() throws(ObjectStoreError) {
        for (_, id) in context.confined.state.pendingRoots {
            if let id { try rewriteIfGone(id) }
        }
        guard !state.unchangedSlots.isEmpty || !context.confined.state.releasedIDs.isEmpty else { return }
        var index = 0
        while index < state.records.count {
            for reference in state.records[index].references { try rewriteIfGone(reference) }
            index += 1
        }
    }

    private func rewriteIfGone(_ id: ObjectID) throws(ObjectStoreError) {
        // An unchanged model this save did not encode, freed by an earlier save of this context: encode it
        // now, so it can be written again.
        if let slot = context.cache.slot(id), slot.isUnchangedModel, slot.queuedIn != generation,
            context.confined.state.releasedIDs.contains(id), let object = slot.object
        {
            slot.queuedIn = generation
            state.queue.append((slot, object))
            try encodeAll()
        }
        guard let slot = context.cache.slot(id), slot.writtenIn != generation, slot.unchangedIndex >= 0,
            Int(slot.unchangedIndex) < state.unchangedRecords.count,
            state.unchangedRecords[Int(slot.unchangedIndex)].id == id
        else { return }
        let record = state.unchangedRecords[Int(slot.unchangedIndex)]
        let live: Bool
        do {
            live = try context.store.contains(id)
        } catch {
            throw ObjectStoreError(error)
        }
        if !live {
            // Freed by a save of this context: stored again. Gone for any other reason (deleted or dropped
            // elsewhere): this save would undo a change it did not see.
            guard context.confined.state.releasedIDs.contains(id) else {
                let typeName = context.cache.object(id).map { context.typeName(of: $0) }
                var conflict = ObjectStoreError(
                    .conflict,
                    "\(typeName ?? "object") \(id) was deleted by another save after this context read it; "
                        + "load it again or drop the link; nothing was written",
                    typeName: typeName, objectID: id)
                conflict.objects = [id]
                throw conflict
            }
            state.recreated.insert(id)
            slot.unchangedIndex = -1
            state.unchangedCount -= 1
            append(record, hash: ContentHash.of(record), slot: slot)
        }
    }

    /// After the batch was written (as `version`): the written records are now the stored ones.
    func commit(version: UInt64) {
        for ((slot, hash), record) in zip(state.writtenSlots, state.records) {
            slot.storedHash = hash
            slot.version = version
            slot.storedWithoutReferences = record.references.isEmpty
        }
        for slot in state.unchangedSlots { slot.unchangedIndex = -1 }
    }

    deinit {
        for slot in state.unchangedSlots { slot.unchangedIndex = -1 }
    }
}

/// The working state of a ``SaveSession``, kept without dynamic exclusivity checks (see ``ContextConfined``).
struct SaveSessionState {
    var queue: [(ObjectSlot, any PersistentObject)] = []
    var records: [Record] = []
    var writtenSlots: [(ObjectSlot, UInt64)] = []
    /// Objects written again because the store no longer holds them (see ``rewriteReferencedButGone()``).
    var recreated: Set<ObjectID> = []
    var unchangedCount = 0
    var unchangedSlots: [ObjectSlot] = []
    /// The encodings of the unchanged objects, at their slots' `unchangedIndex`.
    var unchangedRecords: [Record] = []
    var lastType: (ObjectIdentifier, RegisteredType)?
    /// The registrations met in this save, by class (each type name announced to the catalog once).
    var seenTypes: [ObjectIdentifier: RegisteredType] = [:]
    /// The encoded objects with plain reference fields, and their targets (see ``SaveSession/refusePlainCycles()``).
    var plainReferrers: [PlainReferrer] = []
    var plainTargets: [ObjectID] = []
    /// Whether an object this save writes (not one found unchanged) has plain reference fields.
    var writesPlainReferences = false
}

/// Hands out increasing numbers (save generations), from any thread.
final class GenerationCounter: Sendable {
    private let value = ConditionLock(0)
    func next() -> Int {
        value.withLock {
            $0 += 1
            return $0
        }
    }
}
