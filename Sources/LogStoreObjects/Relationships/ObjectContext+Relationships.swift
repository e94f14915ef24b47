import LogStore

extension ObjectContext {
    /// Before a save encodes anything: makes the inverse of every relationship field this save changes
    /// agree with it, then applies the delete rules of the objects it deletes (cascading, refusing) and
    /// takes them out of the relationship fields that hold them. Changes only objects in memory.
    /// - returns: the objects whose inverses were reconciled (by identity), for ``reconcileLateObjects(_:_:)``.
    /// - throws: ``ObjectStoreError`` `deleteDenied`, and what loading the objects concerned throws.
    func reconcileRelationships() throws(ObjectStoreError) -> Set<ObjectIdentifier> {
        let table = objectStore.relationships
        guard !table.isEmpty else { return [] }
        var reconciled: Set<ObjectIdentifier> = []
        if table.hasInverses {
            var sources: [any PersistentObject] = []
            for (slot, object) in cache.heldSlots where !slot.isUnchangedModel {
                if !confined.state.pendingDeletes.isEmpty, confined.state.pendingDeletes.contains(slot.id) { continue }
                sources.append(object)
            }
            reconciled = try reconcileInverses(table, sources: sources, done: [])
        }
        if !confined.state.pendingDeletes.isEmpty { try applyDeleteRules(table) }
        return reconciled
    }

    /// After a save encoded its objects: the new objects it met only then (reached through a field that is
    /// not a relationship) whose relationship fields hold objects. Their inverses are reconciled and true
    /// is returned: the save encodes again.
    func reconcileLateObjects(_ changes: PreparedChanges, _ done: inout Set<ObjectIdentifier>)
        throws(ObjectStoreError) -> Bool
    {
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
        done.formUnion(try reconcileInverses(table, sources: late, done: done))
        return true
    }

    // MARK: Delete rules

    /// Cascades the deletes, checks `deny` rules, then takes every deleted object out of the relationship
    /// fields that hold it. A new object a cascade reaches is dropped from the context (never written).
    private func applyDeleteRules(_ table: RelationshipTable) throws(ObjectStoreError) {
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
                    if end.remove(referrer, object) { noteRelationshipChange(referrer) }
                }
            }
        }
        for object in deleted {
            guard let slot = cache.slot(of: object), !requested.contains(slot.id) else { continue }
            if slot.storedHash == nil {
                forget(slot.id)
            } else {
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
        _ table: RelationshipTable, sources: [any PersistentObject], done: Set<ObjectIdentifier>
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
                for target in targets {
                    if let id = id(of: target) {
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
            if entry.end.remove(link.owner, link.target) { noteRelationshipChange(link.owner) }
            if table.entries[inverse].end.remove(link.target, link.owner) { noteRelationshipChange(link.target) }
        }
        let ordered =
            assertions.filter { table.entries[$0.entry].end.isToMany }
            + assertions.filter { !table.entries[$0.entry].end.isToMany }
        for change in ordered {
            guard let inverse = table.entries[change.entry].inverse else { continue }
            link(table, entry: change.entry, owner: change.owner, target: change.target)
            link(table, entry: inverse, owner: change.target, target: change.owner)
        }
        return visited
    }

    /// Makes `owner`'s field of `entry` hold `target`; a to-one field's former target loses `owner` from its
    /// inverse field.
    private func link(
        _ table: RelationshipTable, entry number: Int, owner: any PersistentObject, target: any PersistentObject
    ) {
        let entry = table.entries[number]
        let before = entry.end.targets(owner).count
        let replaced = entry.end.add(owner, target)
        if replaced != nil || entry.end.targets(owner).count != before { noteRelationshipChange(owner) }
        guard let replaced, let inverse = entry.inverse else { return }
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
        let values = try IndexKeyReader.fields(record.payload, references: record.references, wanted: Set(wanted))
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
