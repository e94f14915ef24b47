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
final class KeyedContainerPool: ContextConfined<KeyedContainerPoolState> {
    /// An empty pool.
    init() { super.init(state: KeyedContainerPoolState()) }

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

    /// The number of containers leased now: a coder passes it to ``release(downTo:)`` after the call.
    var mark: Int { state.leased.count }

    /// A free pooled entry for `keyType`, leased to the caller; nil when there is none.
    func lease(_ keyType: ObjectIdentifier) -> Lease? {
        var index = 0
        let count = state.keyTypes.count
        while index < count {
            if state.keyTypes[index] == keyType && !state.isLeased[index] {
                state.isLeased[index] = true
                state.leased.append(index)
                return state.entries[index]
            }
            index += 1
        }
        return nil
    }

    /// Keeps `entry` (just made, and in use) for reuse, unless the pool is full or already holds a few
    /// of its key type (a deeply recursive value must not take every place).
    func adopt(_ entry: Lease) {
        guard state.entries.count < Self.capacity,
            state.keyTypes.lazy.filter({ $0 == entry.keyType }).count < Self.perKeyType
        else { return }
        state.leased.append(state.entries.count)
        state.entries.append(entry)
        state.keyTypes.append(entry.keyType)
        state.isLeased.append(true)
    }

    /// Drops every pooled container (they refer back to their coder: this breaks the cycle).
    func removeAll() {
        state.entries.removeAll()
        state.keyTypes.removeAll()
        state.isLeased.removeAll()
        state.leased.removeAll()
    }

    /// The first container leased since `mark`, if any.
    func firstLease(since mark: Int) -> Lease? {
        state.leased.count > mark ? state.entries[state.leased[mark]] : nil
    }

    /// Ends the leases taken since `mark`.
    func release(downTo mark: Int) {
        while state.leased.count > mark { state.isLeased[state.leased.removeLast()] = false }
    }
}

/// The working state of a ``KeyedContainerPool``, kept without dynamic exclusivity checks (see ``ContextConfined``).
struct KeyedContainerPoolState {
    /// Pooled containers; `keyTypes[i]` and `isLeased[i]` describe `entries[i]`, kept apart so that a
    /// lookup scans plain words (models use a handful of key types at a time) and retains nothing.
    var entries: [KeyedContainerPool.Lease] = []
    var keyTypes: [ObjectIdentifier] = []
    var isLeased: [Bool] = []
    /// The indices of the entries leased now, in the order they were leased.
    var leased: [Int] = []
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
