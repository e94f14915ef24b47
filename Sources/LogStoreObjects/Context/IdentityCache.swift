import LogStore

/// What a context knows of one object id: its live instance (held weakly) and its stored record.
/// Its `@exclusivity(unchecked)` properties: see ``IdentityCache``.
///
/// There is one per loaded object, so it is kept small: 87 bytes, a 96-byte allocation (the 8-byte fields
/// first, then the small ones, so that no padding is needed; `strongHold` is a plain `AnyObject` rather
/// than a 16-byte existential). A loaded graph's memory is mostly its objects and their slots, and every
/// fresh page of memory costs time to touch.
final class CacheSlot {
    let id: ObjectID
    /// The instance, while anything outside the cache holds it.
    weak var object: (any PersistentObject)?
    /// The instance held strongly until the next save: new objects, root targets, changed pins.
    @exclusivity(unchecked) var strongHold: AnyObject?
    /// ``storedHash``'s value, when ``hasStoredHash``.
    @exclusivity(unchecked) private var storedHashValue: UInt64 = 0
    /// The save generation that queued this object for encoding / wrote it (see `SaveSession`).
    @exclusivity(unchecked) var queuedIn = 0
    @exclusivity(unchecked) var writtenIn = 0
    /// The version of the stored record (the sequence number of the batch that wrote it) this instance
    /// was loaded from or last saved as; a save expects the store to still hold it.
    @exclusivity(unchecked) var version: UInt64 = 0
    /// During a save: where the save keeps the encoding of this unchanged object, in case it must be
    /// written after all (`SaveSession`); -1 when none.
    @exclusivity(unchecked) var unchangedIndex: Int32 = -1
    /// Whether the object is (to be) stored pinned, a root of its own.
    @exclusivity(unchecked) var pinned: Bool
    /// Set while a load has read the record but not decoded it yet.
    @exclusivity(unchecked) var isLoading = false
    @exclusivity(unchecked) private var hasStoredHash = false

    /// The content hash of the stored record (type, pin, references, payload); nil when the object was
    /// never saved.
    var storedHash: UInt64? {
        get { hasStoredHash ? storedHashValue : nil }
        set {
            hasStoredHash = newValue != nil
            storedHashValue = newValue ?? 0
        }
    }

    init(id: ObjectID, object: (any PersistentObject)?, storedHash: UInt64?, pinned: Bool) {
        self.id = id
        self.object = object
        self.pinned = pinned
        self.storedHash = storedHash
    }
}

/// One context's map between object ids and live instances: one slot per id, found by id or by instance.
///
/// Instances are held weakly (strongly only while unsaved); slots whose instances are gone are purged
/// from time to time, so the cache does not grow with every object ever loaded.
///
/// Its `@exclusivity(unchecked)` properties are only accessed by the thread that owns the context, never
/// through overlapping accesses (no property is passed `inout` while another access to it runs), so the
/// runtime's dynamic exclusivity checks (~10% of encoding time) are switched off for them.
final class IdentityCache {
    @exclusivity(unchecked) private(set) var slots = SlotTable()
    /// Slot by instance, for the slots in it; loaded slots join it only when an instance is first looked
    /// up (``slot(of:)``), so a load that is only read from never pays for this index.
    @exclusivity(unchecked) private var byObject: [ObjectIdentifier: CacheSlot] = [:]
    /// Slots given an instance by a load and not yet in `byObject`.
    @exclusivity(unchecked) private var unindexed: [CacheSlot] = []
    @exclusivity(unchecked) private var held: [CacheSlot] = []
    @exclusivity(unchecked) private var purgeThreshold = 4096
    /// Set while a load or save runs: their slots are all alive, a purge would only cost time.
    @exclusivity(unchecked) var suspendPurge = false

    func slot(_ id: ObjectID) -> CacheSlot? { slots[id] }

    /// The slot of `object`, when this context knows it (the instance, not just its address).
    func slot(of object: any PersistentObject) -> CacheSlot? {
        if !unindexed.isEmpty { indexLoadedSlots() }
        guard let slot = byObject[ObjectIdentifier(object)], slot.object === object else { return nil }
        return slot
    }

    /// The live instance of `id`.
    func object(_ id: ObjectID) -> (any PersistentObject)? { slots[id]?.object }

    /// Adds (or replaces) the slot of `id`.
    @discardableResult
    func insert(_ object: (any PersistentObject)?, id: ObjectID, storedHash: UInt64?, pinned: Bool) -> CacheSlot {
        if slots.count >= purgeThreshold && !suspendPurge { purge() }
        let slot = CacheSlot(id: id, object: object, storedHash: storedHash, pinned: pinned)
        slots[id] = slot
        if let object { byObject[ObjectIdentifier(object)] = slot }
        return slot
    }

    /// Sets the instance of a slot inserted without one (a load in progress).
    func attach(_ object: any PersistentObject, to slot: CacheSlot) {
        slot.object = object
        unindexed.append(slot)
        // A context that loads and drops graphs again and again never looks an instance up: drop the
        // entries of instances gone or slots replaced, so the list stays within the live slots.
        if unindexed.count > max(4096, 2 * slots.count) {
            unindexed.removeAll { $0.object == nil || slots[$0.id] !== $0 }
        }
    }

    /// Loaded slots not yet indexed by instance (for tests).
    var unindexedCount: Int { unindexed.count }

    /// Adds the loaded slots to the index by instance (those whose instance still lives).
    private func indexLoadedSlots() {
        for slot in unindexed {
            if let object = slot.object, slots[slot.id] === slot { byObject[ObjectIdentifier(object)] = slot }
        }
        unindexed.removeAll()
    }

    /// Instances dropped by a rollback or a refresh (held weakly, by identity), which must not be saved as new objects.
    @exclusivity(unchecked) private var detached: [ObjectIdentifier: WeakInstance] = [:]

    /// Marks `object` as dropped by a rollback or a refresh; `linkableAs`: a reference to it still stores
    /// that id (a refresh drops an outdated instance of an object that still exists).
    func detach(_ object: any PersistentObject, linkableAs id: ObjectID? = nil) {
        detached[ObjectIdentifier(object)] = WeakInstance(object, linkableAs: id)
    }

    /// Whether `object` (this instance, not just its address) was dropped by a rollback or a refresh.
    func isDetached(_ object: any PersistentObject) -> Bool {
        detachedEntry(object) != nil
    }

    /// The id a reference to `object` stores when a refresh dropped it, nil otherwise.
    func linkableID(of object: any PersistentObject) -> ObjectID? {
        detachedEntry(object)?.linkableAs
    }

    private func detachedEntry(_ object: any PersistentObject) -> WeakInstance? {
        guard !detached.isEmpty, let entry = detached[ObjectIdentifier(object)] else { return nil }
        if entry.object === object { return entry }
        detached[ObjectIdentifier(object)] = nil
        return nil
    }

    /// Keeps `object` alive until ``releaseHolds()``.
    func hold(_ slot: CacheSlot, _ object: any PersistentObject) {
        if slot.strongHold == nil { held.append(slot) }
        slot.strongHold = object
    }

    /// Lets go of every strongly held instance (after a save).
    func releaseHolds() {
        for slot in held { slot.strongHold = nil }
        held.removeAll()
    }

    func remove(_ id: ObjectID) {
        if !unindexed.isEmpty { indexLoadedSlots() }
        guard let slot = slots[id] else { return }
        slots[id] = nil
        slot.strongHold = nil
        if let object = slot.object, byObject[ObjectIdentifier(object)] === slot {
            byObject.removeValue(forKey: ObjectIdentifier(object))
        }
    }

    /// The slots with live instances.
    var liveSlots: [(CacheSlot, any PersistentObject)] {
        slots.entries.compactMap { _, slot in slot.object.map { (slot, $0) } }
    }

    /// Drops the slots of deallocated objects (and their reverse mappings).
    private func purge() {
        if !unindexed.isEmpty { indexLoadedSlots() }
        detached = detached.filter { $0.value.object != nil }
        slots.filter { $0.object != nil || $0.isLoading }
        byObject = byObject.filter { $0.value.object != nil }
        purgeThreshold = max(4096, slots.count * 2)
    }
}

/// A weak reference to an instance.
final class WeakInstance {
    weak var object: (any PersistentObject)?
    /// See ``IdentityCache/detach(_:linkableAs:)``.
    let linkableAs: ObjectID?
    init(_ object: any PersistentObject, linkableAs: ObjectID? = nil) {
        self.object = object
        self.linkableAs = linkableAs
    }
}
