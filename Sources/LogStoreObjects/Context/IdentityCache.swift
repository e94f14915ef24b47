import LogStore

/// One context's map between object ids and live instances, held weakly, with what the context knows of
/// each stored record.
struct IdentityCache {
    struct Entry {
        weak var object: (any PersistentObject)?
        /// The content hash of the stored record (type, pin, references, payload); nil when the object
        /// was never saved.
        var storedHash: UInt64?
        /// Whether the object is (to be) stored pinned, a root of its own.
        var pinned: Bool
    }

    private(set) var entries: [ObjectID: Entry] = [:]
    private var ids: [ObjectIdentifier: ObjectID] = [:]
    private var purgeThreshold = 1024

    /// The live instance of `id`.
    func object(_ id: ObjectID) -> (any PersistentObject)? {
        entries[id]?.object
    }

    /// The id of `object`, when this context knows it.
    func id(of object: any PersistentObject) -> ObjectID? {
        guard let id = ids[ObjectIdentifier(object)], let entry = entries[id], entry.object === object else {
            return nil
        }
        return id
    }

    func entry(_ id: ObjectID) -> Entry? { entries[id] }

    mutating func insert(_ object: any PersistentObject, id: ObjectID, storedHash: UInt64?, pinned: Bool) {
        entries[id] = Entry(object: object, storedHash: storedHash, pinned: pinned)
        ids[ObjectIdentifier(object)] = id
        if entries.count > purgeThreshold { purge() }
    }

    mutating func update(_ id: ObjectID, _ change: (inout Entry) -> Void) {
        guard var entry = entries[id] else { return }
        change(&entry)
        entries[id] = entry
    }

    mutating func remove(_ id: ObjectID) {
        guard let entry = entries.removeValue(forKey: id) else { return }
        if let object = entry.object { ids.removeValue(forKey: ObjectIdentifier(object)) }
    }

    mutating func removeAll() {
        entries.removeAll()
        ids.removeAll()
    }

    /// The live instances, with their ids.
    var liveObjects: [(ObjectID, any PersistentObject)] {
        entries.compactMap { id, entry in entry.object.map { (id, $0) } }
    }

    /// Drops the entries of deallocated objects (and their reverse mappings).
    private mutating func purge() {
        entries = entries.filter { $0.value.object != nil }
        ids = ids.filter { entries[$0.value]?.object != nil }
        purgeThreshold = max(1024, entries.count * 2)
    }
}
