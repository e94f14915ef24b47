/// Keyed containers kept for reuse, by key type.
///
/// Creating a `KeyedDecodingContainer` or `KeyedEncodingContainer` costs two allocations (our container
/// and the standard library's box around it) and two generic-metadata lookups; a drawing's shapes and
/// points ask for one per value, which was a third of the decoding time. A pooled container is *leased*
/// from the moment a value's `init(from:)` or `encode(to:)` asks for it until that call returns
/// (``release(downTo:)``, called by the coder that made the call), and only reused after that. A second
/// container of a key type whose pooled one is leased (a recursive struct, or a value that asks twice) is
/// made fresh and not pooled. Containers that escape their call (kept in a property and used later) are
/// not supported by any coder; here they would read or write another value's fields.
///
/// Its `@exclusivity(unchecked)` properties are only accessed by the thread that owns the context, never
/// through overlapping accesses.
final class KeyedContainerPool {
    /// A pooled container, whatever its key type.
    class Lease {
        /// The key type's identity: the entry is only handed out for this type.
        let keyType: ObjectIdentifier

        init(keyType: ObjectIdentifier) { self.keyType = keyType }

        /// For a decoding container: where its value ends, when known without a walk.
        func completedValueEnd() -> Int? { nil }
    }

    /// At most this many containers are pooled (a few per key type in use, for recursive values).
    private static let capacity = 32
    /// At most this many of one key type.
    private static let perKeyType = 4
    /// Pooled containers; `keyTypes[i]` and `isLeased[i]` describe `entries[i]`, kept apart so that a
    /// lookup scans plain words (models use a handful of key types at a time) and retains nothing.
    @exclusivity(unchecked) private var entries: [Lease] = []
    @exclusivity(unchecked) private var keyTypes: [ObjectIdentifier] = []
    @exclusivity(unchecked) private var isLeased: [Bool] = []
    /// The indices of the entries leased now, in the order they were leased.
    @exclusivity(unchecked) private var leased: [Int] = []

    /// The number of containers leased now: a coder passes it to ``release(downTo:)`` after the call.
    var mark: Int { leased.count }

    /// A free pooled entry for `keyType`, leased to the caller; nil when there is none.
    func lease(_ keyType: ObjectIdentifier) -> Lease? {
        var index = 0
        let count = keyTypes.count
        while index < count {
            if keyTypes[index] == keyType && !isLeased[index] {
                isLeased[index] = true
                leased.append(index)
                return entries[index]
            }
            index += 1
        }
        return nil
    }

    /// Keeps `entry` (just made, and in use) for reuse, unless the pool is full or already holds a few
    /// of its key type (a deeply recursive value must not take every place).
    func adopt(_ entry: Lease) {
        guard entries.count < Self.capacity,
            keyTypes.lazy.filter({ $0 == entry.keyType }).count < Self.perKeyType
        else { return }
        leased.append(entries.count)
        entries.append(entry)
        keyTypes.append(entry.keyType)
        isLeased.append(true)
    }

    /// Drops every pooled container (they refer back to their coder: this breaks the cycle).
    func removeAll() {
        entries.removeAll()
        keyTypes.removeAll()
        isLeased.removeAll()
        leased.removeAll()
    }

    /// The first container leased since `mark`, if any.
    func firstLease(since mark: Int) -> Lease? {
        leased.count > mark ? entries[leased[mark]] : nil
    }

    /// Ends the leases taken since `mark`.
    func release(downTo mark: Int) {
        while leased.count > mark { isLeased[leased.removeLast()] = false }
    }
}

/// A pooled keyed decoding container.
final class PooledKeyedDecoder<Key: CodingKey>: KeyedContainerPool.Lease {
    let fields: KeyedFieldDecoder<Key>
    let container: KeyedDecodingContainer<Key>

    init(_ fields: KeyedFieldDecoder<Key>) {
        self.fields = fields
        self.container = KeyedDecodingContainer(fields)
        super.init(keyType: ObjectIdentifier(Key.self))
    }

    override func completedValueEnd() -> Int? { fields.completedValueEnd() }
}

/// A pooled keyed encoding container.
final class PooledKeyedEncoder<Key: CodingKey>: KeyedContainerPool.Lease {
    let target: KeyedFieldTarget
    let container: KeyedEncodingContainer<Key>

    init(_ fields: KeyedFieldEncoder<Key>) {
        self.target = fields.target
        self.container = KeyedEncodingContainer(fields)
        super.init(keyType: ObjectIdentifier(Key.self))
    }
}
