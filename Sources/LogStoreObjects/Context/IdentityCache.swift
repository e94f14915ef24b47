import LogStore

/// What a context knows of one object id: its live instance (held weakly) and its stored record.
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
    var strongHold: AnyObject?
    /// ``storedHash``'s value, when ``hasStoredHash``.
    private var storedHashValue: UInt64 = 0
    /// The save generation that queued this object for encoding / wrote it (see `SaveSession`).
    var queuedIn = 0
    var writtenIn = 0
    /// The version of the stored record (the sequence number of the batch that wrote it) this instance
    /// was loaded from or last saved as; a save expects the store to still hold it.
    var version: UInt64 = 0
    /// During a save: where the save keeps the encoding of this unchanged object, in case it must be
    /// written after all (`SaveSession`); -1 when none.
    var unchangedIndex: Int32 = -1
    /// Whether the object is (to be) stored pinned, a root of its own.
    var pinned: Bool
    /// Set while a load has read the record but not decoded it yet.
    var isLoading = false
    private var hasStoredHash = false

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
final class IdentityCache: ContextConfined<IdentityCacheState> {
    /// An empty cache.
    init() { super.init(state: IdentityCacheState()) }

    func slot(_ id: ObjectID) -> CacheSlot? { state.slots[id] }

    /// The slot of `object`, when this context knows it (the instance, not just its address).
    func slot(of object: any PersistentObject) -> CacheSlot? {
        if !state.unindexed.isEmpty { indexLoadedSlots() }
        guard let slot = state.byObject[ObjectIdentifier(object)], slot.object === object else { return nil }
        return slot
    }

    /// The live instance of `id`.
    func object(_ id: ObjectID) -> (any PersistentObject)? { state.slots[id]?.object }

    /// Adds (or replaces) the slot of `id`.
    @discardableResult
    func insert(_ object: (any PersistentObject)?, id: ObjectID, storedHash: UInt64?, pinned: Bool) -> CacheSlot {
        if state.slots.count >= state.purgeThreshold && !state.suspendPurge { purge() }
        let slot = CacheSlot(id: id, object: object, storedHash: storedHash, pinned: pinned)
        state.slots[id] = slot
        if let object { state.byObject[ObjectIdentifier(object)] = slot }
        return slot
    }

    /// Sets the instance of a slot inserted without one (a load in progress).
    func attach(_ object: any PersistentObject, to slot: CacheSlot) {
        slot.object = object
        state.unindexed.append(slot)
        // A context that loads and drops graphs again and again never looks an instance up: drop the
        // entries of instances gone or slots replaced, so the list stays within the live slots.
        if state.unindexed.count > max(4096, 2 * state.slots.count) {
            let slots = state.slots
            state.unindexed.removeAll { $0.object == nil || slots[$0.id] !== $0 }
        }
    }

    /// Loaded slots not yet indexed by instance (for tests).
    var unindexedCount: Int { state.unindexed.count }

    /// Adds the loaded slots to the index by instance (those whose instance still lives).
    private func indexLoadedSlots() {
        for slot in state.unindexed {
            if let object = slot.object, state.slots[slot.id] === slot {
                state.byObject[ObjectIdentifier(object)] = slot
            }
        }
        state.unindexed.removeAll()
    }

    /// Marks `object` as dropped by a rollback or a refresh; `linkableAs`: a reference to it still stores
    /// that id (a refresh drops an outdated instance of an object that still exists).
    func detach(_ object: any PersistentObject, linkableAs id: ObjectID? = nil) {
        state.detached[ObjectIdentifier(object)] = WeakInstance(object, linkableAs: id)
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
        guard !state.detached.isEmpty, let entry = state.detached[ObjectIdentifier(object)] else {
            return nil
        }
        if entry.object === object { return entry }
        state.detached[ObjectIdentifier(object)] = nil
        return nil
    }

    /// Keeps `object` alive until ``releaseHolds()``.
    func hold(_ slot: CacheSlot, _ object: any PersistentObject) {
        if slot.strongHold == nil { state.held.append(slot) }
        slot.strongHold = object
    }

    /// Lets go of every strongly held instance (after a save).
    func releaseHolds() {
        for slot in state.held { slot.strongHold = nil }
        state.held.removeAll()
    }

    func remove(_ id: ObjectID) {
        if !state.unindexed.isEmpty { indexLoadedSlots() }
        guard let slot = state.slots[id] else { return }
        state.slots[id] = nil
        slot.strongHold = nil
        if let object = slot.object, state.byObject[ObjectIdentifier(object)] === slot {
            state.byObject.removeValue(forKey: ObjectIdentifier(object))
        }
    }

    /// The slots with live instances.
    var liveSlots: [(CacheSlot, any PersistentObject)] {
        state.slots.entries.compactMap { _, slot in slot.object.map { (slot, $0) } }
    }

    /// Drops the slots of deallocated objects (and their reverse mappings).
    private func purge() {
        if !state.unindexed.isEmpty { indexLoadedSlots() }
        state.detached = state.detached.filter { $0.value.object != nil }
        state.slots.filter { $0.object != nil || $0.isLoading }
        state.byObject = state.byObject.filter { $0.value.object != nil }
        state.purgeThreshold = max(4096, state.slots.count * 2)
    }
}

/// The working state of an ``IdentityCache``, kept without dynamic exclusivity checks (see ``ContextConfined``).
struct IdentityCacheState {
    var slots = SlotTable()
    /// Slot by instance, for the slots in it; loaded slots join it only when an instance is first looked
    /// up (``slot(of:)``), so a load that is only read from never pays for this index.
    var byObject: [ObjectIdentifier: CacheSlot] = [:]
    /// Slots given an instance by a load and not yet in `byObject`.
    var unindexed: [CacheSlot] = []
    var held: [CacheSlot] = []
    var purgeThreshold = 4096
    /// Set while a load or save runs: their slots are all alive, a purge would only cost time.
    var suspendPurge = false
    /// Instances dropped by a rollback or a refresh (held weakly, by identity), which must not be saved as new objects.
    var detached: [ObjectIdentifier: WeakInstance] = [:]
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
