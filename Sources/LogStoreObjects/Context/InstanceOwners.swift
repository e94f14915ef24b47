import LogStore
@_spi(Engine) import LogStoreSystem
import Synchronization

/// Which context each persistent instance in the process belongs to, so that a save that meets an instance
/// of another context (or another object store) refuses it rather than storing it a second time under a
/// new id.
///
/// Each context publishes the cache slots of what it loaded or numbered to its ``ContextInstances``: one
/// lock and one array append per load or save, nothing per object. Only a context that meets instances
/// it does not know (new objects, or objects of another context) asks the others, once per save for all
/// such instances together, and only when another context exists; the other context's index by instance
/// is built then, on first asking. So the cost falls on the rare save that links objects across contexts,
/// not on loads. A slot holds its instance weakly, so an address reused by a new object after the old one
/// was freed is never taken for the old one.
///
/// A context's instances stay registered after the context is gone while any of them is still alive
/// (linking such an object elsewhere is still an error); then they are dropped.
final class InstanceOwners: Sendable {
    static let shared = InstanceOwners()

    private struct Registry {
        var contexts: [UInt64: ContextInstances] = [:]
        /// Serials of contexts gone while some of their instances lived.
        var closed: Set<UInt64> = []
        var creationsSinceSweep = 0
    }

    /// A pthread mutex rather than `Mutex`: the thread sanitizer cannot see a futex-based lock on Linux.
    private let registry = ConditionLock(Registry())
    private let serials = Atomic<UInt64>(0)
    /// How many contexts are registered (open, or closed with live instances): with one, nobody can own
    /// what its context does not know.
    private let registered = Atomic<Int>(0)

    /// Registers a new context and returns its published instances.
    func newContext() -> ContextInstances {
        let instances = ContextInstances(serial: serials.add(1, ordering: .relaxed).newValue)
        let removed = registry.withLock { registry -> Int in
            registry.contexts[instances.serial] = instances
            registry.creationsSinceSweep += 1
            guard !registry.closed.isEmpty, registry.creationsSinceSweep >= 64 else { return 0 }
            registry.creationsSinceSweep = 0
            var removed = 0
            for serial in registry.closed where registry.contexts[serial]?.hasLiveInstance() != true {
                registry.contexts[serial] = nil
                registry.closed.remove(serial)
                removed += 1
            }
            return removed
        }
        registered.add(1 - removed, ordering: .relaxed)
        return instances
    }

    /// The context of `instances` is gone: forget its instances now, or once none of them lives.
    func close(_ instances: ContextInstances) {
        let alive = instances.pruneToLiveInstances()
        let removed = registry.withLock { registry -> Bool in
            guard !alive else {
                registry.closed.insert(instances.serial)
                return false
            }
            registry.contexts[instances.serial] = nil
            return true
        }
        if removed { registered.subtract(1, ordering: .relaxed) }
    }

    /// The index in `objects` (instances the context `serial` does not know) of the first that another
    /// context owns, and that context's serial.
    func firstForeign(_ objects: [any PersistentObject], besides serial: UInt64) -> Int? {
        guard !objects.isEmpty, registered.load(ordering: .relaxed) > 1 else { return nil }
        let others = registry.withLock { registry in
            registry.contexts.values.filter { $0.serial != serial }
        }
        // Identities suffice: the caller holds every instance of `objects`, so an instance alive at the same
        // address is the same instance.
        let identities = objects.map { ObjectIdentifier($0) }
        var first: Int?
        for other in others {
            if let index = other.firstOwned(identities), index < (first ?? .max) { first = index }
        }
        return first
    }
}

/// The cache slots one context published: what it loaded and what it numbered as new.
final class ContextInstances: Sendable {
    let serial: UInt64

    /// `@unchecked Sendable` (it holds `ObjectSlot`s, which are not): it is only touched under `state`'s
    /// lock. The slots in it belong to the publishing context, whose thread goes on changing their other
    /// properties; other threads read only their `object`, a weak reference that the owning context
    /// writes once, before it publishes the slot (in `ObjectSlot.init`, or in `IdentityCache.attach` during
    /// the load that then publishes it), so the lock orders that write before every other thread's read;
    /// the runtime loads weak references atomically, also while the instance is being freed. A slot's
    /// last release may happen on another thread; by then its context has let go of it and it holds no
    /// strong reference to an instance (the cache clears `strongHold` when it drops a slot). Nothing
    /// taken from the state leaves the lock but indexes and booleans.
    private struct State: @unchecked Sendable {
        /// Published slots not yet in `index`.
        var batches: [[ObjectSlot]] = []
        /// Slot by instance, built when another context first asks.
        var index: [ObjectIdentifier: ObjectSlot] = [:]
        /// Slots in `batches` and `index`.
        var count = 0
        /// Slots of new objects the context forgot (a discarded change, a rollback, a delete before any
        /// save): their instances are nobody's now.
        var withdrawn: Set<ObjectIdentifier> = []
    }

    private let state = ConditionLock(State())

    init(serial: UInt64) {
        self.serial = serial
    }

    /// Publishes `slots` (their instances set); `liveSlots`, the context's cache size, bounds how many
    /// dead entries are kept before they are pruned.
    func publish(_ slots: [ObjectSlot], liveSlots: Int) {
        guard !slots.isEmpty else { return }
        state.withLock { state in
            state.batches.append(slots)
            state.count += slots.count
            guard state.count > max(1 << 16, 2 * liveSlots) else { return }
            state.index = state.index.filter { $0.value.object != nil }
            state.batches = [state.batches.joined().filter { $0.object != nil }]
            state.count = state.index.count + state.batches[0].count
        }
    }

    /// Marks the slots of new objects the context forgot: their instances may join another context.
    func withdraw(_ slot: ObjectSlot) {
        state.withLock { state in _ = state.withdrawn.insert(ObjectIdentifier(slot)) }
    }

    /// Drops the entries whose instances are gone (and withdrawn ones); returns whether any is left.
    func pruneToLiveInstances() -> Bool {
        state.withLock { state in
            let withdrawn = state.withdrawn
            state.withdrawn = []
            func keeps(_ slot: ObjectSlot) -> Bool { slot.object != nil && !withdrawn.contains(ObjectIdentifier(slot)) }
            state.index = state.index.filter { keeps($0.value) }
            state.batches = [state.batches.joined().filter(keeps)]
            state.count = state.index.count + state.batches[0].count
            return state.count > 0
        }
    }

    /// Whether any published instance is still alive.
    func hasLiveInstance() -> Bool {
        state.withLock { state in
            state.index.values.contains { $0.object != nil }
                || state.batches.contains { $0.contains { $0.object != nil } }
        }
    }

    /// The index in `identities` of the first instance published here and alive (so, while the caller
    /// holds its instances, that very instance).
    func firstOwned(_ identities: [ObjectIdentifier]) -> Int? {
        state.withLock { state in
            for batch in state.batches {
                for slot in batch {
                    if let object = slot.object { state.index[ObjectIdentifier(object)] = slot }
                }
            }
            state.batches.removeAll()
            state.count = state.index.count
            return identities.firstIndex { identity in
                guard let slot = state.index[identity], !state.withdrawn.contains(ObjectIdentifier(slot)) else {
                    return false
                }
                return slot.object.map { ObjectIdentifier($0) == identity } ?? false
            }
        }
    }
}
