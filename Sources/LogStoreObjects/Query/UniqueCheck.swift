import LogStore

/// Checks a batch against the unique indexes of one type: no two objects may end up holding one key.
struct UniqueCheck {
    let type: IndexedType
    let data: TypeIndexData
    let keys: KeyCatalog.Snapshot

    /// Returns the keys it read, by id (the last put of each id of the type), for the index to take when
    /// the batch is accepted.
    /// - throws: ``ObjectStoreError`` `uniqueViolation` naming the object saved and the one holding the key.
    @discardableResult
    func check(_ operations: [WriteBatch.Operation]) throws(ObjectStoreError) -> IDTable<[[CompoundKey]]> {
        var reader = IndexKeyReader(definitions: type.definitions, aliases: type.aliases, catalog: keys)
        var puts: [Record] = []
        for operation in operations {
            if case .put(let record) = operation, type.tags.contains(record.typeTag) { puts.append(record) }
        }
        // The ids the batch puts or deletes (whose stored keys it replaces), gathered when first needed.
        var leavingIDs: Set<ObjectID>?
        func leaving(_ id: ObjectID) -> Bool {
            let ids = leavingIDs ?? Self.changedIDs(operations)
            leavingIDs = ids
            return ids.contains(id)
        }
        let unique = type.definitions.indices.filter { type.definitions[$0].isUnique }
        // Per unique index (in the order of `unique`), the keys the batch claims, each with its hash and the
        // object claiming it.
        var claims = unique.map { _ in [(key: CompoundKey, hash: UInt64, id: ObjectID)]() }
        var read = IDTable<[[CompoundKey]]>(minimumCapacity: puts.count)
        // The last put of an id is the one that stays.
        for record in puts.reversed() where !read.contains(record.id) {
            let keys = reader.keys(payload: record.payload, references: record.references)
            read[record.id] = keys
            for (position, index) in unique.enumerated() {
                for key in keys[index] where !key.isExemptFromUniqueness {
                    claims[position].append((key, UniqueHolders.hash(key), record.id))
                }
            }
        }
        // Two objects of the batch claiming one key: found among the claims of equal hashes, in order of hash
        // (one object claiming a key twice, as an array field may, is no conflict).
        for (position, index) in unique.enumerated() where claims[position].count > 1 {
            let order = claims[position].indices.sorted { claims[position][$0].hash < claims[position][$1].hash }
            var start = 0
            while start < order.count {
                var end = start + 1
                let hash = claims[position][order[start]].hash
                while end < order.count && claims[position][order[end]].hash == hash { end += 1 }
                for first in start..<end {
                    for second in (first + 1)..<end {
                        let a = claims[position][order[first]]
                        let b = claims[position][order[second]]
                        if a.key == b.key && a.id != b.id { throw violation(a.id, b.id, index, a.key) }
                    }
                }
                start = end
            }
        }
        for (position, index) in unique.enumerated() {
            for (key, hash, id) in claims[position] {
                // Through the index's hash table, or its list of holders for a key held twice already.
                let found = data.holder(of: key, in: index, hash: hash)
                if found.exact {
                    if let holder = found.id, holder != id, !leaving(holder) { throw violation(id, holder, index, key) }
                    continue
                }
                for holder in data.ids(withKey: key, in: index) where holder != id && !leaving(holder) {
                    throw violation(id, holder, index, key)
                }
            }
        }
        return read
    }

    /// The ids `operations` put or delete.
    private static func changedIDs(_ operations: [WriteBatch.Operation]) -> Set<ObjectID> {
        var ids: Set<ObjectID> = []
        for operation in operations {
            switch operation {
            case .put(let record): ids.insert(record.id)
            case .delete(let id): ids.insert(id)
            default: break
            }
        }
        return ids
    }

    private func violation(_ saved: ObjectID, _ holder: ObjectID, _ index: Int, _ key: CompoundKey) -> ObjectStoreError
    {
        let definition = type.definitions[index]
        var error = ObjectStoreError(
            .uniqueViolation,
            "object \(saved) would hold \(key) in the unique index \(definition.name) of \(type.registered.name),"
                + " which object \(holder) holds; nothing was written",
            typeName: type.registered.name, field: definition.name, objectID: saved)
        error.objects = [saved, holder]
        return error
    }
}
