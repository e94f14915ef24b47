import LogStore

/// One context's map between object ids and live instances: one slot per id, found by id or by instance.
///
/// Instances are held weakly (strongly only while unsaved); slots whose instances are gone are purged
/// from time to time, so the cache does not grow with every object ever loaded.
final class IdentityCache: ContextConfined<IdentityCacheState> {
    /// An empty cache.
    init() { super.init(state: IdentityCacheState()) }

    func slot(_ id: ObjectID) -> ObjectSlot? { state.slots[id] }

    /// The slot of `object`, when this context knows it (the instance, not just its address).
    func slot(of object: any PersistentObject) -> ObjectSlot? {
        if !state.unindexed.isEmpty { indexLoadedSlots() }
        guard let slot = state.byObject[ObjectIdentifier(object)], slot.object === object else { return nil }
        return slot
    }

    /// The live instance of `id`.
    func object(_ id: ObjectID) -> (any PersistentObject)? { state.slots[id]?.object }

    /// Adds (or replaces) the slot of `id`.
    @discardableResult
    func insert(_ object: (any PersistentObject)?, id: ObjectID, storedHash: UInt64?, pinned: Bool) -> ObjectSlot {
        if state.slots.count >= state.purgeThreshold && !state.suspendPurge { purge() }
        let slot = ObjectSlot(id: id, object: object, storedHash: storedHash, pinned: pinned)
        slot.cache = self
        state.slots[id] = slot
        if let object { state.byObject[ObjectIdentifier(object)] = slot }
        return slot
    }

    /// Sets the instance of a slot inserted without one (a load in progress).
    func attach(_ object: any PersistentObject, to slot: ObjectSlot) {
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
    func hold(_ slot: ObjectSlot, _ object: any PersistentObject) {
        hold(slot, object as AnyObject)
    }

    func hold(_ slot: ObjectSlot, _ object: AnyObject) {
        if !slot.isInHeldList {
            state.held.append(slot)
            slot.isInHeldList = true
        }
        slot.strongHold = object
    }

    /// The held slots and their instances: everything a save must encode (new objects, root targets,
    /// changed pins, changed models, and every instance of a class that does not report its changes).
    var heldSlots: [(ObjectSlot, any PersistentObject)] {
        state.held.compactMap { slot in
            guard slot.strongHold != nil, state.slots[slot.id] === slot, let object = slot.object else { return nil }
            return (slot, object)
        }
    }

    /// After a save (or when unsaved changes are discarded): lets go of the instances held until then, and
    /// marks the models unchanged. Instances of classes that do not report their changes stay held: a
    /// change to one of them must reach the next save whether or not the caller still holds it.
    func releaseHolds() {
        var kept: [ObjectSlot] = []
        for slot in state.held {
            slot.clearChange()
            if !slot.isTracked, slot.strongHold != nil, state.slots[slot.id] === slot, slot.object != nil {
                kept.append(slot)
            } else {
                slot.strongHold = nil
                slot.isInHeldList = false
            }
        }
        state.held = kept
    }

    /// Drops from the held list the slots that hold nothing any more (deleted, freed or dropped since).
    private func compactHeldList() {
        state.held.removeAll { slot in
            guard slot.strongHold == nil else { return false }
            slot.isInHeldList = false
            return true
        }
    }

    /// Lets go of every held instance (the context ends).
    func releaseAllHolds() {
        for slot in state.held {
            slot.strongHold = nil
            slot.isInHeldList = false
        }
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
    var liveSlots: [(ObjectSlot, any PersistentObject)] {
        state.slots.entries.compactMap { _, slot in slot.object.map { (slot, $0) } }
    }

    /// Drops the slots of deallocated objects (and their reverse mappings).
    private func purge() {
        if !state.unindexed.isEmpty { indexLoadedSlots() }
        state.detached = state.detached.filter { $0.value.object != nil }
        state.slots.filter { $0.object != nil || $0.isLoading }
        state.byObject = state.byObject.filter { $0.value.object != nil }
        state.purgeThreshold = max(4096, state.slots.count * 2)
        compactHeldList()
    }
}

/// The working state of an ``IdentityCache``, kept without dynamic exclusivity checks (see ``ContextConfined``).
struct IdentityCacheState {
    var slots = SlotTable()
    /// Slot by instance, for the slots in it; loaded slots join it only when an instance is first looked
    /// up (``slot(of:)``), so a load that is only read from never pays for this index.
    var byObject: [ObjectIdentifier: ObjectSlot] = [:]
    /// Slots given an instance by a load and not yet in `byObject`.
    var unindexed: [ObjectSlot] = []
    var held: [ObjectSlot] = []
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
