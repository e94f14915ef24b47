import Foundation
import LogStore
import Synchronization

/// The indexes of one indexed class (and its registered subclasses), as of one sequence number: each
/// index's ordered entries, and each object's keys and version (to remove its old keys, and to tell a
/// changed record when catching up with a snapshot).
///
/// The ordered entries change only through a log (``entryLog``): ``set(_:version:keys:)`` and ``remove(_:)``
/// note which entries to insert and remove, and ``flushEntries()`` (or the applier, on entries taken with
/// ``takeEntries()``) applies them in order. Everything else (versions, keys, the unique tables) changes at
/// once, so the unique check and equality lookups never need the entries; queries read the entries after a
/// flush.
///
/// An object's keys are kept per index, without an allocation for the usual case of one key per index:
/// ``singleKeys`` holds the key of each object that has exactly one in that index, ``multipleKeys`` the
/// keys of each that has several (elements of an array field); an object with none (an empty array) is in
/// neither. Versions and single keys are in ``PagedIDMap``s: no hashing per save, and no rehash of every
/// object when the class grows.
struct TypeIndexData: Sendable {
    /// The stored version and keys of one object.
    struct ObjectKeys: Sendable {
        var version: UInt64
        /// Per index, its keys (several for an array field, none for an empty one).
        var keys: [[CompoundKey]]
    }

    /// Per index, its entries in order, without the changes still in ``entryLog``.
    private(set) var entries: [SortedEntries]
    /// Entry changes not yet in ``entries``, oldest first.
    private(set) var entryLog: [EntryChange] = []
    /// Per object, the version of the record its keys were read from.
    private(set) var versions = PagedIDMap<UInt64>()
    /// Per index, the key of each object that holds exactly one.
    private(set) var singleKeys: [PagedIDMap<CompoundKey>]
    /// Per index, the keys of each object that holds more than one.
    private(set) var multipleKeys: [[ObjectID: [CompoundKey]]]
    /// Per index, the objects with a key that has an absent field: every query through the index reads
    /// them and tests them itself.
    private(set) var absent: [Set<ObjectID>]
    /// Per index, the objects with a key that has a NaN field: the index holds NaN equal to itself and
    /// after every number, where `==` and `<` say false; while there are any, queries test their
    /// candidates.
    private(set) var holdsNaN: [Set<ObjectID>]
    /// Per unique index (nil for the others), the object holding each key that uniqueness applies to:
    /// equality lookups and the unique check hash the key instead of searching the ordered entries.
    private(set) var holders: [UniqueHolders?]
    /// Per unique index, the keys several objects hold (stored before the index existed, or for a moment
    /// within one batch that moves a key from one object to another), with every holder in increasing
    /// order of id; the hash table holds one of them.
    private(set) var sharedHolders: [[CompoundKey: [ObjectID]]]

    /// One change of the ordered entries: `entry` inserted in or removed from index `index`.
    struct EntryChange: Sendable {
        var index: Int
        var isInsert: Bool
        var entry: IndexEntryKey
    }

    /// Empty indexes, `unique` telling, per index, whether it is unique.
    private init(unique: [Bool]) {
        let indexCount = unique.count
        entries = []
        singleKeys = Array(repeating: PagedIDMap(), count: indexCount)
        multipleKeys = Array(repeating: [:], count: indexCount)
        absent = Array(repeating: [], count: indexCount)
        holdsNaN = Array(repeating: [], count: indexCount)
        holders = unique.map { $0 ? UniqueHolders() : nil }
        sharedHolders = Array(repeating: [:], count: indexCount)
    }

    /// The indexes of `objects` (each id once, with its version and keys), built with one sort per index;
    /// `unique` tells, per index, whether it is unique.
    init(unique: [Bool], building objects: [(id: ObjectID, keys: ObjectKeys)]) {
        var versions = PagedIDMap<UInt64>()
        var lists = Array(repeating: [IndexEntryKey](), count: unique.count)
        for index in lists.indices { lists[index].reserveCapacity(objects.count) }
        for (id, keys) in objects {
            versions[id] = keys.version
            for (index, indexKeys) in keys.keys.enumerated() {
                for key in indexKeys { lists[index].append(IndexEntryKey(key: key, id: id)) }
            }
        }
        self.init(unique: unique, versions: versions, lists: lists, sorted: false)
    }

    /// The indexes of the objects whose versions are `versions`, from each index's entries already in order
    /// (read from an ``IndexFile``): nothing is sorted. Each entry's id must be in `versions`.
    init(unique: [Bool], versions: PagedIDMap<UInt64>, sortedEntries: [[IndexEntryKey]]) {
        self.init(unique: unique, versions: versions, lists: sortedEntries, sorted: true)
    }

    /// The indexes whose entries are `lists` (each index's in order when `sorted`), each index's tables
    /// built on their own threads when there are large ones.
    private init(unique: [Bool], versions: PagedIDMap<UInt64>, lists: [[IndexEntryKey]], sorted: Bool) {
        let lists =
            sorted
            ? lists : concurrentMap(lists.count, parallel: lists.contains { $0.count > 10_000 }) { lists[$0].sorted() }
        self.init(unique: unique, versions: versions, parts: IndexPart.build(lists, unique: unique))
    }

    /// The indexes of the objects whose versions are `versions`, each index already built (`parts`, in
    /// the order of `unique`).
    init(unique: [Bool], versions: PagedIDMap<UInt64>, parts: [IndexPart]) {
        self.init(unique: unique)
        self.versions = versions
        for (index, part) in parts.enumerated() {
            entries.append(part.entries)
            singleKeys[index] = part.objects.singleKeys
            multipleKeys[index] = part.objects.multipleKeys
            absent[index] = part.objects.absent
            holdsNaN[index] = part.objects.holdsNaN
            holders[index] = part.holders?.holders
            sharedHolders[index] = part.holders?.sharedHolders ?? [:]
        }
    }

    /// What one index holds, built from its entries in order.
    struct IndexPart: Sendable {
        /// Each object's keys, and the objects with absent or NaN keys.
        struct Objects: Sendable {
            var singleKeys = PagedIDMap<CompoundKey>()
            var multipleKeys: [ObjectID: [CompoundKey]] = [:]
            var absent: Set<ObjectID> = []
            var holdsNaN: Set<ObjectID> = []

            init(_ list: [IndexEntryKey]) {
                for entry in list {
                    if let first = singleKeys.updateValue(entry.key, forKey: entry.id) {
                        singleKeys[entry.id] = nil
                        multipleKeys[entry.id] = [first, entry.key]
                    } else if !multipleKeys.isEmpty && multipleKeys[entry.id] != nil {
                        singleKeys[entry.id] = nil
                        multipleKeys[entry.id]?.append(entry.key)
                    }
                    if entry.key.hasAbsent { absent.insert(entry.id) }
                    if entry.key.hasNaN { holdsNaN.insert(entry.id) }
                }
            }
        }

        /// A unique index's hash table, and the keys several objects hold with all their holders.
        struct Holders: Sendable {
            var holders = UniqueHolders()
            var sharedHolders: [CompoundKey: [ObjectID]] = [:]

            /// From the entries in order, where the entries of one key are together (in increasing order of
            /// id): the table holds the first object of each key.
            init(_ list: [IndexEntryKey]) {
                holders.reserveCapacity(list.count)
                var last: IndexEntryKey?
                for entry in list where !entry.key.isExemptFromUniqueness {
                    defer { last = entry }
                    if let last, last.key == entry.key {
                        if last.id != entry.id {
                            sharedHolders[entry.key, default: [last.id]].append(entry.id)
                        }
                        continue
                    }
                    holders.insert(entry.id, key: entry.key, hash: UniqueHolders.hash(entry.key))
                }
            }
        }

        var entries: SortedEntries
        var objects: Objects
        var holders: Holders?

        /// The parts of indexes whose entries are `lists` (each in order), `unique` telling which are
        /// unique: their tables built on as many threads as Dispatch gives when there are large ones.
        static func build(_ lists: [[IndexEntryKey]], unique: [Bool]) -> [IndexPart] {
            enum Piece: Sendable {
                case entries(SortedEntries)
                case objects(Objects)
                case holders(Holders)
            }
            // Per index: its entries, its objects' keys, and its hash table when unique.
            let jobs = lists.indices.flatMap { index in [(index, 0), (index, 1)] + (unique[index] ? [(index, 2)] : []) }
            let pieces = concurrentMap(jobs.count, parallel: lists.contains { $0.count > 10_000 }) { job -> Piece in
                let (index, kind) = jobs[job]
                switch kind {
                case 0: return .entries(SortedEntries(sorted: lists[index]))
                case 1: return .objects(Objects(lists[index]))
                default: return .holders(Holders(lists[index]))
                }
            }
            var parts: [IndexPart] = lists.map { _ in
                IndexPart(entries: SortedEntries(), objects: Objects([]), holders: nil)
            }
            for (job, piece) in zip(jobs, pieces) {
                switch piece {
                case .entries(let entries): parts[job.0].entries = entries
                case .objects(let objects): parts[job.0].objects = objects
                case .holders(let holders): parts[job.0].holders = holders
                }
            }
            return parts
        }
    }

    /// Notes `keys` as `id`'s keys in index `index` (which holds none of its keys), and claims them in a
    /// unique one.
    private mutating func record(_ keys: [CompoundKey], of id: ObjectID, in index: Int) {
        switch keys.count {
        case 0: break
        case 1: singleKeys[index][id] = keys[0]
        default: multipleKeys[index][id] = keys
        }
        if holders[index] != nil { for key in keys { claim(key, by: id, in: index) } }
        if keys.contains(where: \.hasAbsent) { absent[index].insert(id) }
        if keys.contains(where: \.hasNaN) { holdsNaN[index].insert(id) }
    }

    /// Forgets `id`'s keys in index `index` and returns them (without touching the entries).
    private mutating func takeKeys(of id: ObjectID, in index: Int) -> [CompoundKey] {
        if let key = singleKeys[index].removeValue(forKey: id) { return [key] }
        if !multipleKeys[index].isEmpty, let keys = multipleKeys[index].removeValue(forKey: id) { return keys }
        return []
    }

    /// The object the unique index `index`'s table says holds `key` (nil when none does, or the index is not
    /// unique).
    private func tableHolder(of key: CompoundKey, in index: Int, hash: UInt64? = nil) -> ObjectID? {
        holders[index]?.holder(of: key, hash: hash ?? UniqueHolders.hash(key))
    }

    /// `id`'s keys in index `index`.
    func keys(of id: ObjectID, in index: Int) -> [CompoundKey] {
        if let key = singleKeys[index][id] { return [key] }
        return multipleKeys[index].isEmpty ? [] : multipleKeys[index][id] ?? []
    }

    func version(of id: ObjectID) -> UInt64? { versions[id] }

    /// Records `id`'s keys as of `version`, replacing those it had.
    mutating func set(_ id: ObjectID, version: UInt64, keys: [[CompoundKey]]) {
        let existed = versions.updateValue(version, forKey: id) != nil
        for (index, newKeys) in keys.enumerated() {
            if existed {
                // The same keys as before (the usual unchanged field): nothing to change. (Keys equal in
                // the index's order, as `1` and `1.0`, are the same to it.)
                if holdsKeys(newKeys, id, index) { continue }
                let oldKeys = takeKeys(of: id, in: index)
                if !absent[index].isEmpty { absent[index].remove(id) }
                if !holdsNaN[index].isEmpty { holdsNaN[index].remove(id) }
                for key in oldKeys { removeEntry(key, id, index) }
            }
            for key in newKeys {
                entryLog.append(EntryChange(index: index, isInsert: true, entry: IndexEntryKey(key: key, id: id)))
            }
            record(newKeys, of: id, in: index)
        }
    }

    /// Whether `id`'s keys in index `index` are `keys`.
    private func holdsKeys(_ keys: [CompoundKey], _ id: ObjectID, _ index: Int) -> Bool {
        switch keys.count {
        case 0: return singleKeys[index][id] == nil && (multipleKeys[index].isEmpty || multipleKeys[index][id] == nil)
        case 1: return singleKeys[index][id].map { $0 == keys[0] } ?? false
        default: return !multipleKeys[index].isEmpty && multipleKeys[index][id] == keys
        }
    }

    /// Forgets `id` (deleted or freed); false when the indexes do not hold it.
    @discardableResult
    mutating func remove(_ id: ObjectID) -> Bool {
        guard versions.removeValue(forKey: id) != nil else { return false }
        for index in singleKeys.indices {
            for key in takeKeys(of: id, in: index) { removeEntry(key, id, index) }
            if !absent[index].isEmpty { absent[index].remove(id) }
            if !holdsNaN[index].isEmpty { holdsNaN[index].remove(id) }
        }
        return true
    }

    /// The ids of every object the indexes hold.
    var objectIDs: [ObjectID] { versions.ids }

    /// Notes that `id` no longer holds `key` in index `index`: the entry's removal is logged, and a unique
    /// index's tables forget it.
    private mutating func removeEntry(_ key: CompoundKey, _ id: ObjectID, _ index: Int) {
        entryLog.append(EntryChange(index: index, isInsert: false, entry: IndexEntryKey(key: key, id: id)))
        guard holders[index] != nil, !key.isExemptFromUniqueness else { return }
        let hash = UniqueHolders.hash(key)
        // (`isEmpty` first: a lookup hashes the key even in an empty dictionary.)
        if !sharedHolders[index].isEmpty, var list = sharedHolders[index][key] {
            list.removeAll { $0 == id }
            if list.count > 1 {
                sharedHolders[index][key] = list
            } else {
                sharedHolders[index][key] = nil
            }
            // The table holds one of the remaining holders.
            if let holder = tableHolder(of: key, in: index, hash: hash), holder == id {
                holders[index]?.remove(id, key: key, hash: hash)
                if let next = list.first { holders[index]?.insert(next, key: key, hash: hash) }
            }
            return
        }
        holders[index]?.remove(id, key: key, hash: hash)
    }

    /// Notes that `id` holds `key` in the unique index `index`.
    private mutating func claim(_ key: CompoundKey, by id: ObjectID, in index: Int) {
        guard !key.isExemptFromUniqueness else { return }
        let hash = UniqueHolders.hash(key)
        switch holders[index]?.holderOrInsert(id, key: key, hash: hash) {
        case nil, id: break
        case let other?:
            var list = sharedHolders[index][key] ?? [other]
            if let position = list.firstIndex(where: { $0 >= id }) {
                if list[position] != id { list.insert(id, at: position) }
            } else {
                list.append(id)
            }
            sharedHolders[index][key] = list
        }
    }

    /// The ids holding `key` in index `index` (for an index that is not unique, or a key uniqueness does not
    /// apply to, from the ordered entries: call on data whose ``entryLog`` is empty).
    func ids(withKey key: CompoundKey, in index: Int) -> [ObjectID] {
        if holders[index] != nil, !key.isExemptFromUniqueness {
            if !sharedHolders[index].isEmpty, let list = sharedHolders[index][key] { return list }
            return tableHolder(of: key, in: index).map { [$0] } ?? []
        }
        return sortedIDs(withKey: key, in: index)
    }

    /// The one id holding `key` in the unique index `index` (nil when none does); not answered (`exact`
    /// false) when the index is not unique, uniqueness does not apply to the key, or several objects hold it.
    /// `hash` is the key's ``UniqueHolders/hash(_:)`` when the caller has it.
    func holder(of key: CompoundKey, in index: Int, hash: UInt64? = nil) -> (id: ObjectID?, exact: Bool) {
        guard !key.isExemptFromUniqueness, holders[index] != nil,
            sharedHolders[index].isEmpty || sharedHolders[index][key] == nil
        else { return (nil, false) }
        return (tableHolder(of: key, in: index, hash: hash), true)
    }

    // MARK: The entry log

    /// Applies ``entryLog`` to the entries.
    mutating func flushEntries() {
        guard !entryLog.isEmpty else { return }
        let log = entryLog
        entryLog = []
        Self.apply(log, to: &entries)
    }

    /// Applies `log` (in order) to `entries`.
    static func apply(_ log: [EntryChange], to entries: inout [SortedEntries]) {
        for change in log {
            if change.isInsert {
                entries[change.index].insert(change.entry)
            } else {
                entries[change.index].remove(change.entry)
            }
        }
    }

    /// Takes the entries and the log out (for the applier, which applies the log to them without a lock);
    /// ``restoreEntries(_:)`` puts them back. Meanwhile the entries are empty and changes are logged as
    /// usual.
    mutating func takeEntries() -> (entries: [SortedEntries], log: [EntryChange]) {
        var taken: [SortedEntries] = []
        var log: [EntryChange] = []
        swap(&taken, &entries)
        swap(&log, &entryLog)
        return (taken, log)
    }

    /// Puts back the entries ``takeEntries()`` took, with its log applied (the changes logged since stay
    /// in the log).
    mutating func restoreEntries(_ restored: [SortedEntries]) {
        entries = restored
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

    var objectCount: Int { versions.count }
}
