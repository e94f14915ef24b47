import LogStore

extension ObjectContext {
    /// Before a save encodes anything: makes the inverse of every relationship field this save changes
    /// agree with it, then applies the delete rules of the objects it deletes (cascading, refusing) and
    /// takes them out of the relationship fields that hold them. Changes only objects in memory, and
    /// records in `undo` how to take the changes back if the save fails.
    ///
    /// The context moves on first (as any read after a save does), so the whole reconciliation reads one
    /// snapshot.
    /// - returns: the objects whose inverses were reconciled (by identity), for ``reconcileLateObjects(_:_:_:)``.
    /// - throws: ``ObjectStoreError`` `deleteDenied`, and what loading the objects concerned throws.
    func reconcileRelationships(_ undo: RelationshipUndo) throws(ObjectStoreError) -> Set<ObjectIdentifier> {
        let table = objectStore.relationships
        guard !table.isEmpty else { return [] }
        _ = try readView()
        var reconciled: Set<ObjectIdentifier> = []
        if table.hasInverses {
            var sources: [any PersistentObject] = []
            for (slot, object) in cache.heldSlots where !slot.isUnchangedModel {
                if !confined.state.pendingDeletes.isEmpty, confined.state.pendingDeletes.contains(slot.id) { continue }
                sources.append(object)
            }
            reconciled = try reconcileInverses(table, sources: sources, done: [], undo)
        }
        if !confined.state.pendingDeletes.isEmpty { try applyDeleteRules(table, undo) }
        return reconciled
    }

    /// After a save encoded its objects: the new objects it met only then (reached through a field that is
    /// not a relationship) whose relationship fields hold objects. Their inverses are reconciled and true
    /// is returned: the save encodes again.
    func reconcileLateObjects(
        _ changes: PreparedChanges, _ done: inout Set<ObjectIdentifier>, _ undo: RelationshipUndo
    ) throws(ObjectStoreError) -> Bool {
        let table = objectStore.relationships
        guard table.hasInverses else { return false }
        var late: [any PersistentObject] = []
        for (slot, _) in changes.session.state.writtenSlots where slot.storedHash == nil {
            guard let object = slot.object, !done.contains(ObjectIdentifier(object)) else { continue }
            let holds = table.owned(by: object).contains { number in
                table.entries[number].inverse != nil && !table.entries[number].end.targets(object).isEmpty
            }
            if holds { late.append(object) }
        }
        guard !late.isEmpty else { return false }
        done.formUnion(try reconcileInverses(table, sources: late, done: done, undo))
        return true
    }

    // MARK: Delete rules

    /// Cascades the deletes, checks `deny` rules, then takes every deleted object out of the relationship
    /// fields that hold it. A new object a cascade reaches is dropped from the context (never written).
    private func applyDeleteRules(_ table: RelationshipTable, _ undo: RelationshipUndo) throws(ObjectStoreError) {
        let requested = confined.state.pendingDeletes
        var deleted: [any PersistentObject] = []
        var deleting: Set<ObjectIdentifier> = []
        var work: [any PersistentObject] = []
        let view = try readView()
        for id in requested.sorted(by: >) {
            // An object of a class no relationship concerns is left as it is (deleting many costs no load).
            if cache.object(id) == nil {
                let tag: UInt32?
                do {
                    tag = try view.header(of: id)?.typeTag
                } catch {
                    throw ObjectStoreError(error)
                }
                guard let tag, table.involvedTags.contains(tag) else { continue }
            }
            guard let object = try load(id) else { continue }
            if deleting.insert(ObjectIdentifier(object)).inserted { work.append(object) }
        }
        var denials: [(object: any PersistentObject, entry: Int, targets: [any PersistentObject])] = []
        while let object = work.popLast() {
            deleted.append(object)
            for number in table.owned(by: object) {
                let targets = table.entries[number].end.targets(object)
                guard !targets.isEmpty else { continue }
                switch table.entries[number].rule {
                case .deny:
                    denials.append((object, number, targets))
                case .cascade:
                    for target in targets where deleting.insert(ObjectIdentifier(target)).inserted {
                        work.append(target)
                    }
                case .nullify:
                    break
                }
            }
        }
        for denial in denials {
            let blocking = denial.targets.filter { !deleting.contains(ObjectIdentifier($0)) }
            guard let first = blocking.first else { continue }
            let entry = table.entries[denial.entry]
            let id = self.id(of: denial.object)
            var error = ObjectStoreError(
                .deleteDenied,
                "\(typeName(of: denial.object)) \(id.map { "\($0)" } ?? "(new)") cannot be deleted: its relationship "
                    + "\(entry.field) (delete rule deny) holds \(blocking.count) object(s), such as a "
                    + "\(typeName(of: first)); nothing was written",
                typeName: typeName(of: denial.object), field: entry.field, objectID: id)
            error.objects = (id.map { [$0] } ?? []) + blocking.compactMap { self.id(of: $0) }
            throw error
        }
        for object in deleted {
            for number in table.accepting(object) {
                let end = table.entries[number].end
                for referrer in try end.referrers(self, object) where !deleting.contains(ObjectIdentifier(referrer)) {
                    undo.keep(end, of: referrer)
                    if end.remove(referrer, object) { noteRelationshipChange(referrer) }
                }
            }
        }
        for object in deleted {
            guard let slot = cache.slot(of: object), !requested.contains(slot.id) else { continue }
            if slot.storedHash == nil {
                forget(slot.id)
            } else {
                undo.cascaded.append((slot, slot.strongHold))
                slot.strongHold = nil
                confined.state.pendingDeletes.insert(slot.id)
            }
        }
    }

    // MARK: Inverses

    /// One link of a relationship seen changed on one side: entry `entry`'s field of `owner` holds `target`
    /// now (an assertion) or no longer (a retraction).
    private struct Link {
        let entry: Int
        let owner: any PersistentObject
        let target: any PersistentObject
    }

    /// Compares the relationship fields (those with inverses) of `sources` with their stored values, and of
    /// each new object they hold, and makes the inverse fields agree: removals first, then additions, those
    /// seen on to-one fields last (so a to-one field's own new value wins).
    private func reconcileInverses(
        _ table: RelationshipTable, sources: [any PersistentObject], done: Set<ObjectIdentifier>,
        _ undo: RelationshipUndo
    ) throws(ObjectStoreError) -> Set<ObjectIdentifier> {
        var visited = done
        var work = sources
        let names = objectStore.catalog.snapshot().numbers
        let view = try readView()
        var assertions: [Link] = []
        var retractions: [Link] = []
        while let object = work.popLast() {
            guard visited.insert(ObjectIdentifier(object)).inserted else { continue }
            let slot = cache.slot(of: object)
            for number in table.owned(by: object) where table.entries[number].inverse != nil {
                let entry = table.entries[number]
                let targets = entry.end.targets(object)
                let stored: [ObjectID]
                if let slot, slot.storedHash != nil {
                    stored = try storedTargets(of: slot.id, entry, view: view, names: names)
                } else {
                    stored = []
                }
                var current: Set<ObjectID> = []
                for held in targets {
                    // An instance the context dropped when it moved on stands for the object it was: its
                    // current instance takes the inverse.
                    var target = held
                    var id = self.id(of: held)
                    if id == nil, let linkable = cache.linkableID(of: held), let current = try load(linkable) {
                        target = current
                        id = linkable
                    }
                    if let id {
                        current.insert(id)
                        if !stored.contains(id) {
                            assertions.append(Link(entry: number, owner: object, target: target))
                        }
                    } else {
                        assertions.append(Link(entry: number, owner: object, target: target))
                        work.append(target)
                    }
                }
                for id in stored where !current.contains(id) {
                    guard let target = try load(id) else { continue }
                    retractions.append(Link(entry: number, owner: object, target: target))
                }
            }
        }
        for link in retractions {
            let entry = table.entries[link.entry]
            guard let inverse = entry.inverse else { continue }
            undo.keep(entry.end, of: link.owner)
            undo.keep(table.entries[inverse].end, of: link.target)
            if entry.end.remove(link.owner, link.target) { noteRelationshipChange(link.owner) }
            if table.entries[inverse].end.remove(link.target, link.owner) { noteRelationshipChange(link.target) }
        }
        let ordered =
            assertions.filter { table.entries[$0.entry].end.isToMany }
            + assertions.filter { !table.entries[$0.entry].end.isToMany }
        for change in ordered {
            guard let inverse = table.entries[change.entry].inverse else { continue }
            // An owner's field holding a dropped instance of the target keeps it (the save links it by id).
            if cache.linkableID(of: change.target) == nil,
                !table.entries[change.entry].end.targets(change.owner).contains(where: { $0 === change.target })
            {
                link(table, entry: change.entry, owner: change.owner, target: change.target, undo)
            }
            link(table, entry: inverse, owner: change.target, target: change.owner, undo)
        }
        return visited
    }

    /// Makes `owner`'s field of `entry` hold `target`; a to-one field's former target loses `owner` from its
    /// inverse field.
    private func link(
        _ table: RelationshipTable, entry number: Int, owner: any PersistentObject, target: any PersistentObject,
        _ undo: RelationshipUndo
    ) {
        let entry = table.entries[number]
        undo.keep(entry.end, of: owner)
        let before = entry.end.targets(owner).count
        let replaced = entry.end.add(owner, target)
        if replaced != nil || entry.end.targets(owner).count != before { noteRelationshipChange(owner) }
        guard let replaced, let inverse = entry.inverse else { return }
        undo.keep(table.entries[inverse].end, of: replaced)
        if table.entries[inverse].end.remove(replaced, owner) { noteRelationshipChange(replaced) }
    }

    /// The ids a stored object's relationship field holds, as of this context's snapshot.
    private func storedTargets(
        of id: ObjectID, _ entry: RelationshipTable.Entry, view: Snapshot, names numbers: [String: Int]
    ) throws(ObjectStoreError) -> [ObjectID] {
        let record: Record?
        do {
            record = try view.get(id)
        } catch {
            throw ObjectStoreError(error)
        }
        guard let record else { return [] }
        let wanted = ([entry.field] + entry.aliases).compactMap { numbers[$0] }
        guard !wanted.isEmpty else { return [] }
        let values = try IndexKeyReader.fields(record.payload, references: record.references, wanted: wanted)
        guard let found = wanted.lazy.compactMap({ values[$0] }).first else { return [] }
        switch found {
        case .one(let value):
            if case .reference(let target) = value { return [target] }
            return []
        case .many(let values):
            return values.compactMap { value in
                if case .reference(let target) = value { return target }
                return nil
            }
        }
    }

    /// Keeps an object whose relationship field the context changed until the save writes it (a
    /// `@Persistent` model's setter notes the change itself; an instance of another class is held).
    private func noteRelationshipChange(_ object: any PersistentObject) {
        if let slot = cache.slot(of: object) { cache.hold(slot, object) }
    }
}

/// How to take back what reconciling relationships changed in memory, for a save that fails: each
/// relationship field as it was before its first change, and the deletes a cascade added.
final class RelationshipUndo {
    private var fields: [(end: RelationshipEnd, owner: any PersistentObject, targets: [any PersistentObject])] = []
    private var kept: Set<FieldKey> = []
    /// The slots of stored objects a cascade marked for deletion, with what held them before.
    var cascaded: [(slot: ObjectSlot, hold: AnyObject?)] = []

    private struct FieldKey: Hashable {
        let owner: ObjectIdentifier
        let field: AnyKeyPath
    }

    /// Remembers `end`'s field of `owner` as it is, unless it was remembered already.
    func keep(_ end: RelationshipEnd, of owner: any PersistentObject) {
        guard kept.insert(FieldKey(owner: ObjectIdentifier(owner), field: end.keyPath)).inserted else { return }
        fields.append((end, owner, end.targets(owner)))
    }

    /// Restores every field remembered and withdraws the cascaded deletes.
    func rollBack(in context: ObjectContext) {
        for field in fields.reversed() { field.end.set(field.owner, field.targets) }
        for (slot, hold) in cascaded {
            context.confined.state.pendingDeletes.remove(slot.id)
            slot.strongHold = hold
        }
        fields.removeAll()
        kept.removeAll()
        cascaded.removeAll()
    }
}
