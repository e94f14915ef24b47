import LogStore

/// The indexes of one indexed class (and its registered subclasses), as of one sequence number: each
/// index's ordered entries, and each object's keys and version (to remove its old keys, and to tell a
/// changed record when catching up with a snapshot).
struct TypeIndexData: Sendable {
    /// The stored version and keys of one object.
    struct ObjectKeys: Sendable {
        var version: UInt64
        /// Per index, its keys (several for an array field, none for an empty one).
        var keys: [[CompoundKey]]
    }

    private(set) var entries: [SortedEntries]
    private(set) var objects: [ObjectID: ObjectKeys] = [:]
    /// Per index, the objects with a key that has an absent field: every query through the index reads
    /// them and tests them itself.
    private(set) var absent: [Set<ObjectID>]

    init(indexCount: Int) {
        entries = Array(repeating: SortedEntries(), count: indexCount)
        absent = Array(repeating: [], count: indexCount)
    }

    /// The indexes of `objects` (each id once, with its version and keys), built with one sort per index.
    init(indexCount: Int, building objects: [(id: ObjectID, keys: ObjectKeys)]) {
        var lists = Array(repeating: [IndexEntryKey](), count: indexCount)
        absent = Array(repeating: [], count: indexCount)
        self.objects.reserveCapacity(objects.count)
        for (id, keys) in objects {
            self.objects[id] = keys
            for (index, indexKeys) in keys.keys.enumerated() {
                for key in indexKeys { lists[index].append(IndexEntryKey(key: key, id: id)) }
                if indexKeys.contains(where: \.hasAbsent) { absent[index].insert(id) }
            }
        }
        entries = lists.map { SortedEntries(sorted: $0.sorted()) }
    }

    func version(of id: ObjectID) -> UInt64? { objects[id]?.version }

    /// Records `id`'s keys as of `version`, replacing those it had.
    mutating func set(_ id: ObjectID, version: UInt64, keys: [[CompoundKey]]) {
        if let old = objects[id] {
            for (index, oldKeys) in old.keys.enumerated() where oldKeys != keys[index] {
                for key in oldKeys { entries[index].remove(IndexEntryKey(key: key, id: id)) }
                for key in keys[index] { entries[index].insert(IndexEntryKey(key: key, id: id)) }
            }
        } else {
            for (index, newKeys) in keys.enumerated() {
                for key in newKeys { entries[index].insert(IndexEntryKey(key: key, id: id)) }
            }
        }
        objects[id] = ObjectKeys(version: version, keys: keys)
        for (index, newKeys) in keys.enumerated() {
            if newKeys.contains(where: \.hasAbsent) {
                absent[index].insert(id)
            } else if !absent[index].isEmpty {
                absent[index].remove(id)
            }
        }
    }

    /// Forgets `id` (deleted or freed).
    mutating func remove(_ id: ObjectID) {
        guard let old = objects.removeValue(forKey: id) else { return }
        for (index, keys) in old.keys.enumerated() {
            for key in keys { entries[index].remove(IndexEntryKey(key: key, id: id)) }
            if !absent[index].isEmpty { absent[index].remove(id) }
        }
    }

    /// The ids holding `key` in index `index`.
    func ids(withKey key: CompoundKey, in index: Int) -> [ObjectID] {
        var ids: [ObjectID] = []
        let sorted = entries[index]
        sorted.forEach(from: sorted.position(ofKey: key, after: false), to: sorted.endPosition) { entry in
            guard entry.key == key else { return false }
            ids.append(entry.id)
            return true
        }
        return ids
    }

    var objectCount: Int { objects.count }
}
