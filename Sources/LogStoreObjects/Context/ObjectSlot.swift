import LogStore

/// What a context knows of one object id: its live instance (held weakly while unchanged) and its stored
/// record.
///
/// An ``ObjectContext`` makes one per object it loads or adds. A ``PersistentModel`` instance (a class
/// declared with `@Persistent`) keeps its slot in ``PersistentModel/persistenceSlot`` and calls
/// ``noteChange(of:)`` from its property setters; everything else about a slot is the context's business.
///
/// There is one per loaded object, so it is kept small: 96 bytes, one 96-byte allocation (the 8-byte
/// fields first, then the small ones, so that no padding is needed; `strongHold` is a plain `AnyObject`
/// rather than a 16-byte existential). A loaded graph's memory is mostly its objects and their slots, and
/// every fresh page of memory costs time to touch.
public final class ObjectSlot {
    let id: ObjectID
    /// The instance, while anything outside the cache holds it.
    weak var object: (any PersistentObject)?
    /// The instance held strongly until the next save (new objects, root targets, changed pins, changed
    /// models) or for as long as the context has it (instances of classes that do not track their changes).
    var strongHold: AnyObject?
    /// The cache this slot belongs to, for ``noteChange(of:)``.
    weak var cache: IdentityCache?
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
    /// Whether the instance is a ``PersistentModel`` that reports its changes: unchanged, it need not be
    /// encoded by a save nor held by the context.
    var isTracked = false
    /// Whether a tracked instance changed since it was loaded or last saved.
    @usableFromInline var isChanged = false
    /// Whether the slot is in its cache's list of held slots.
    var isInHeldList = false
    /// Whether the stored record refers to no object: unchanged, the object cannot be on a reference cycle.
    var storedWithoutReferences = false

    /// Whether the instance is a stored model that reports no change since its last load or save, and is
    /// held for no other reason: a save need not encode it.
    var isUnchangedModel: Bool {
        isTracked && !isChanged && strongHold == nil && hasStoredHash
    }

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

    /// Marks `object`, the instance of this slot, as changed: the context keeps it until its next save,
    /// which writes it. Called by the setters `@Persistent` generates.
    /// - returns: whether the change is noted (false when this slot is no longer its context's record of
    ///   `object`, e.g. after the context ended or dropped the object); the setter stops calling while true.
    @inlinable @discardableResult
    public func noteChange(of object: AnyObject) -> Bool {
        isChanged || markChanged(object)
    }

    /// The first change since the last save: hold the instance and note it.
    @usableFromInline
    func markChanged(_ object: AnyObject) -> Bool {
        guard let cache, cache.slot(id) === self, self.object === object else { return false }
        isChanged = true
        cache.hold(self, object)
        return true
    }

    /// Whether this slot is still its context's record of `object` (the context lives and has not
    /// dropped it).
    func isRecord(of object: AnyObject) -> Bool {
        guard let cache else { return false }
        return cache.slot(id) === self && self.object === object
    }

    /// After a save (or discarded changes): the object is unchanged again, and its setters report the next
    /// change.
    func clearChange() {
        guard isChanged else { return }
        isChanged = false
        if let model = object as? any PersistentModel { model.hasReportedChange = false }
    }
}
