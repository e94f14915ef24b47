import Synchronization

/// Which context each persistent instance in the process belongs to: the one that loaded or first
/// numbered it. A save that meets an instance its context does not know asks here, so that an object of
/// another context (or another object store) is refused rather than stored a second time under a new id.
///
/// Instances are held weakly, so an address reused by a new object after the old one was freed is never
/// taken for the old one. A load registers all its objects in one lock hold, when it finishes.
final class InstanceOwners: Sendable {
    static let shared = InstanceOwners()

    /// `@unchecked Sendable`: the instance is never used through this reference, only compared by identity
    /// (`===`) and tested for nil, so none of its state is read or written by another thread. The weak
    /// reference itself is thread-safe (the runtime loads and clears weak references atomically); the
    /// temporary strong reference a comparison takes may be the last one to go, in which case the instance
    /// is deinitialized on the comparing thread, after every other thread let go of it (reference counts
    /// order that), as when any object is released by the last of several threads.
    private struct Owner: @unchecked Sendable {
        weak var object: AnyObject?
        let context: UInt64
    }

    private struct Table: ~Copyable {
        var owners: [ObjectIdentifier: Owner] = [:]
        /// Purge dead entries when the table reaches this size.
        var purgeAt = 1 << 16
    }

    private let table = Mutex(Table())
    private let serials = Atomic<UInt64>(0)

    /// A number for a new context, never handed out before in this process.
    func newContextSerial() -> UInt64 {
        serials.add(1, ordering: .relaxed).newValue
    }

    /// Records that `objects` belong to the context `serial`.
    func register(_ objects: [any PersistentObject], to serial: UInt64) {
        guard !objects.isEmpty else { return }
        table.withLock { table in
            if table.owners.count + objects.count >= table.purgeAt {
                table.owners = table.owners.filter { $0.value.object != nil }
                table.purgeAt = max(1 << 16, 2 * (table.owners.count + objects.count))
            }
            table.owners.reserveCapacity(table.owners.count + objects.count)
            for object in objects { table.owners[ObjectIdentifier(object)] = Owner(object: object, context: serial) }
        }
    }

    /// The context `object` (this instance, not just its address) belongs to, if any.
    func owner(of object: any PersistentObject) -> UInt64? {
        table.withLock { table in
            guard let owner = table.owners[ObjectIdentifier(object)], owner.object === object else { return nil }
            return owner.context
        }
    }
}
