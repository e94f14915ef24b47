import Foundation
import LogStore
import Synchronization

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
    /// Per index, the objects with a key that has a NaN field: the index holds NaN equal to itself and
    /// after every number, where `==` and `<` say false; while there are any, queries test their
    /// candidates.
    private(set) var holdsNaN: [Set<ObjectID>]
    /// Per index, how many objects hold more than one key in it (elements of an array field): a read
    /// through the index must then report each object once.
    private(set) var multiKeyObjects: [Int]
    /// Per unique index (nil for the others), the object holding each key that uniqueness applies to:
    /// equality lookups and the unique check hash the key instead of searching the ordered entries.
    private(set) var holders: [[CompoundKey: ObjectID]?]
    /// Per index, the keys of a unique index that several objects hold (stored before the index existed):
    /// their holders are read from the ordered entries.
    private(set) var sharedKeys: [Set<CompoundKey>]

    /// The indexes of `objects` (each id once, with its version and keys), built with one sort per index;
    /// `unique` tells, per index, whether it is unique.
    init(unique: [Bool], building objects: [(id: ObjectID, keys: ObjectKeys)]) {
        let indexCount = unique.count
        var lists = Array(repeating: [IndexEntryKey](), count: indexCount)
        absent = Array(repeating: [], count: indexCount)
        holdsNaN = Array(repeating: [], count: indexCount)
        multiKeyObjects = Array(repeating: 0, count: indexCount)
        holders = unique.map { $0 ? [:] : nil }
        sharedKeys = Array(repeating: [], count: indexCount)
        entries = []
        self.objects.reserveCapacity(objects.count)
        for index in unique.indices where unique[index] { holders[index]?.reserveCapacity(objects.count) }
        for (id, keys) in objects {
            self.objects[id] = keys
            for (index, indexKeys) in keys.keys.enumerated() {
                for key in indexKeys {
                    lists[index].append(IndexEntryKey(key: key, id: id))
                    if unique[index] { claim(key, by: id, in: index) }
                }
                if indexKeys.contains(where: \.hasAbsent) { absent[index].insert(id) }
                if indexKeys.contains(where: \.hasNaN) { holdsNaN[index].insert(id) }
                if indexKeys.count > 1 { multiKeyObjects[index] += 1 }
            }
        }
        entries = Self.sorted(lists)
    }

    /// Each list sorted into entries; large lists of several indexes on as many threads as Dispatch gives
    /// (a build from nothing sorts one list per index).
    private static func sorted(_ lists: [[IndexEntryKey]]) -> [SortedEntries] {
        guard lists.count > 1, lists.contains(where: { $0.count > 10_000 }) else {
            return lists.map { SortedEntries(sorted: $0.sorted()) }
        }
        let results = Mutex([SortedEntries](repeating: SortedEntries(), count: lists.count))
        DispatchQueue.concurrentPerform(iterations: lists.count) { index in
            let sorted = SortedEntries(sorted: lists[index].sorted())
            results.withLock { $0[index] = sorted }
        }
        return results.withLock { $0 }
    }
    func version(of id: ObjectID) -> UInt64? { objects[id]?.version }

    /// Records `id`'s keys as of `version`, replacing those it had.
    mutating func set(_ id: ObjectID, version: UInt64, keys: [[CompoundKey]]) {
        if let old = objects.updateValue(ObjectKeys(version: version, keys: keys), forKey: id) {
            for (index, oldKeys) in old.keys.enumerated() where oldKeys != keys[index] {
                for key in oldKeys { removeEntry(key, id, index) }
                for key in keys[index] { insertEntry(key, id, index) }
                if oldKeys.count > 1 { multiKeyObjects[index] -= 1 }
                if keys[index].count > 1 { multiKeyObjects[index] += 1 }
            }
        } else {
            for (index, newKeys) in keys.enumerated() {
                for key in newKeys { insertEntry(key, id, index) }
                if newKeys.count > 1 { multiKeyObjects[index] += 1 }
            }
        }
        for (index, newKeys) in keys.enumerated() {
            if newKeys.contains(where: \.hasAbsent) {
                absent[index].insert(id)
            } else if !absent[index].isEmpty {
                absent[index].remove(id)
            }
            if newKeys.contains(where: \.hasNaN) {
                holdsNaN[index].insert(id)
            } else if !holdsNaN[index].isEmpty {
                holdsNaN[index].remove(id)
            }
        }
    }

    /// Forgets `id` (deleted or freed).
    mutating func remove(_ id: ObjectID) {
        guard let old = objects.removeValue(forKey: id) else { return }
        for (index, keys) in old.keys.enumerated() {
            for key in keys { removeEntry(key, id, index) }
            if !absent[index].isEmpty { absent[index].remove(id) }
            if !holdsNaN[index].isEmpty { holdsNaN[index].remove(id) }
            if keys.count > 1 { multiKeyObjects[index] -= 1 }
        }
    }

    private mutating func insertEntry(_ key: CompoundKey, _ id: ObjectID, _ index: Int) {
        entries[index].insert(IndexEntryKey(key: key, id: id))
        if holders[index] != nil { claim(key, by: id, in: index) }
    }

    private mutating func removeEntry(_ key: CompoundKey, _ id: ObjectID, _ index: Int) {
        entries[index].remove(IndexEntryKey(key: key, id: id))
        guard holders[index] != nil, !key.isExemptFromUniqueness else { return }
        // (`isEmpty` first: `contains` hashes the key even in an empty set.)
        if !sharedKeys[index].isEmpty && sharedKeys[index].contains(key) {
            let remaining = sortedIDs(withKey: key, in: index)
            if remaining.count <= 1 {
                sharedKeys[index].remove(key)
                holders[index]?[key] = remaining.first
            }
        } else if holders[index]?[key] == id {
            holders[index]?[key] = nil
        }
    }

    /// Notes that `id` holds `key` in the unique index `index`.
    private mutating func claim(_ key: CompoundKey, by id: ObjectID, in index: Int) {
        guard !key.isExemptFromUniqueness else { return }
        if let holder = holders[index]?.updateValue(id, forKey: key), holder != id {
            holders[index]?[key] = holder
            sharedKeys[index].insert(key)
        }
    }

    /// The ids holding `key` in index `index`.
    func ids(withKey key: CompoundKey, in index: Int) -> [ObjectID] {
        if let holders = holders[index], !key.isExemptFromUniqueness,
            sharedKeys[index].isEmpty || !sharedKeys[index].contains(key)
        {
            return holders[key].map { [$0] } ?? []
        }
        return sortedIDs(withKey: key, in: index)
    }

    /// The one id holding `key` in the unique index `index` (nil when none does); not answered (`exact`
    /// false) when the index is not unique, uniqueness does not apply to the key, or several objects hold it.
    func holder(of key: CompoundKey, in index: Int) -> (id: ObjectID?, exact: Bool) {
        guard !key.isExemptFromUniqueness, sharedKeys[index].isEmpty || !sharedKeys[index].contains(key),
            let table = holders[index]
        else { return (nil, false) }
        return (table[key], true)
    }

    /// The ids holding `key` in index `index`, from the ordered entries.
    private func sortedIDs(withKey key: CompoundKey, in index: Int) -> [ObjectID] {
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
