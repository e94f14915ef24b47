import LogStore

/// A hash table keyed by object id, for the object layer's hot id-keyed maps (the ODB's node cache and
/// work overlay, the encoder's reference index, the identity cache's far pages).
///
/// `Dictionary` hashes an `ObjectID` with SipHash, which costs more than the rest of a warm lookup. Ids
/// are handed out by the store, so they need no protection against chosen collisions beyond what a good
/// spread gives: a key is mixed by one multiplication with 2^64/φ (Fibonacci hashing) and the top bits
/// pick its bucket, which spreads sequential ids evenly. Open addressing with linear probing, at most half
/// full; removal shifts the following entries back (no tombstones), so lookups stay short after any
/// sequence of inserts and removals.
///
/// Slots whose key is 0 are empty; the value of id 0 (never a valid id, but not refused) is kept apart.
/// Iteration order is unspecified, as for `Dictionary`.
struct IDTable<Value> {
    /// The key in each bucket, 0 when empty.
    private var keys: [UInt64] = []
    /// The value in each bucket, nil when empty.
    private var values: [Value?] = []
    /// The value of id 0.
    private var zeroValue: Value?
    /// `64 - log2(bucket count)`: the top bits of the mixed key are the bucket.
    private var shift: UInt64 = 64
    /// Entries held, id 0 included.
    private(set) var count = 0

    /// An empty table.
    init() {}

    /// An empty table with room for `minimumCapacity` entries before it grows.
    init(minimumCapacity: Int) {
        if minimumCapacity > 0 { resize(buckets: Self.buckets(for: minimumCapacity)) }
    }

    var isEmpty: Bool { count == 0 }

    /// The smallest power of two of at least 8 buckets that holds `entries` at most half full.
    private static func buckets(for entries: Int) -> Int {
        var buckets = 8
        while buckets / 2 < entries { buckets *= 2 }
        return buckets
    }

    @inline(__always)
    private func bucket(_ key: UInt64) -> Int {
        Int(truncatingIfNeeded: (key &* 0x9E37_79B9_7F4A_7C15) &>> shift)
    }

    /// The bucket holding `key` (not 0), or nil.
    @inline(__always)
    private func find(_ key: UInt64) -> Int? {
        guard !keys.isEmpty else { return nil }
        let mask = keys.count - 1
        var index = bucket(key)
        while true {
            let found = keys[index]
            if found == key { return index }
            if found == 0 { return nil }
            index = (index + 1) & mask
        }
    }

    /// The value of `id`; setting nil removes it.
    subscript(id: ObjectID) -> Value? {
        @inline(__always) get {
            let key = id.rawValue
            if key == 0 { return zeroValue }
            guard let index = find(key) else { return nil }
            return values[index]
        }
        set {
            if let newValue {
                updateValue(newValue, forKey: id)
            } else {
                removeValue(forKey: id)
            }
        }
    }

    /// Runs `body` on the value of `id` in place (without copying it, as getting and setting it back
    /// would copy a value with storage of its own); nil when `id` has no value.
    mutating func modifyValue<Result>(forKey id: ObjectID, _ body: (inout Value) -> Result) -> Result? {
        let key = id.rawValue
        if key == 0 {
            guard var value = zeroValue.take() else { return nil }
            defer { zeroValue = value }
            return body(&value)
        }
        guard let index = find(key), var value = values[index].take() else { return nil }
        defer { values[index] = value }
        return body(&value)
    }

    /// Whether `id` has a value.
    func contains(_ id: ObjectID) -> Bool {
        id.rawValue == 0 ? zeroValue != nil : find(id.rawValue) != nil
    }

    /// Sets the value of `id`; returns the value it replaces.
    @discardableResult
    mutating func updateValue(_ value: Value, forKey id: ObjectID) -> Value? {
        let key = id.rawValue
        if key == 0 {
            let old = zeroValue
            zeroValue = value
            if old == nil { count += 1 }
            return old
        }
        if let index = find(key) {
            let old = values[index]
            values[index] = value
            return old
        }
        if 2 * (count + 1) > keys.count { resize(buckets: Self.buckets(for: count + 1)) }
        let mask = keys.count - 1
        var index = bucket(key)
        while keys[index] != 0 { index = (index + 1) & mask }
        keys[index] = key
        values[index] = value
        count += 1
        return nil
    }

    /// Removes the value of `id`; returns it.
    @discardableResult
    mutating func removeValue(forKey id: ObjectID) -> Value? {
        let key = id.rawValue
        if key == 0 {
            let old = zeroValue
            zeroValue = nil
            if old != nil { count -= 1 }
            return old
        }
        guard var hole = find(key) else { return nil }
        let old = values[hole]
        // Backward shift: move each following entry of the run into the hole when its own bucket does
        // not lie between the hole and it, so that every entry stays reachable from its bucket.
        let mask = keys.count - 1
        var next = (hole + 1) & mask
        while keys[next] != 0 {
            let home = bucket(keys[next])
            if (next &- home) & mask >= (next &- hole) & mask {
                keys[hole] = keys[next]
                values[hole] = values[next].take()
                hole = next
            }
            next = (next + 1) & mask
        }
        keys[hole] = 0
        values[hole] = nil
        count -= 1
        return old
    }

    /// Removes every entry; `keepingCapacity` keeps the buckets for reuse.
    mutating func removeAll(keepingCapacity: Bool = false) {
        zeroValue = nil
        count = 0
        if keepingCapacity && !keys.isEmpty {
            for index in keys.indices where keys[index] != 0 {
                keys[index] = 0
                values[index] = nil
            }
        } else {
            keys = []
            values = []
            shift = 64
        }
    }

    /// Removes the entries for which `remove` is true.
    mutating func removeAll(where remove: (ObjectID, Value) throws -> Bool) rethrows {
        var doomed: [ObjectID] = []
        for (id, value) in self where try remove(id, value) { doomed.append(id) }
        for id in doomed { removeValue(forKey: id) }
    }

    /// Rehashes into `buckets` buckets (a power of two that holds every entry at most half full).
    private mutating func resize(buckets: Int) {
        let oldKeys = keys
        var oldValues = values
        keys = Array(repeating: 0, count: buckets)
        values = Array(repeating: nil, count: buckets)
        shift = UInt64(64 - buckets.trailingZeroBitCount)
        let mask = buckets - 1
        for (oldIndex, key) in oldKeys.enumerated() where key != 0 {
            var index = bucket(key)
            while keys[index] != 0 { index = (index + 1) & mask }
            keys[index] = key
            values[index] = oldValues[oldIndex].take()
        }
    }

    /// The ids held (in the table's order).
    var ids: [ObjectID] {
        var ids: [ObjectID] = []
        ids.reserveCapacity(count)
        if zeroValue != nil { ids.append(ObjectID(0)) }
        for key in keys where key != 0 { ids.append(ObjectID(key)) }
        return ids
    }
}

extension IDTable: Sequence {
    /// Walks the entries (id 0 first, then in bucket order).
    struct Iterator: IteratorProtocol {
        private let keys: [UInt64]
        private let values: [Value?]
        private var zeroValue: Value?
        private var index = 0

        fileprivate init(_ table: IDTable) {
            keys = table.keys
            values = table.values
            zeroValue = table.zeroValue
        }

        mutating func next() -> (key: ObjectID, value: Value)? {
            if let zero = zeroValue.take() { return (ObjectID(0), zero) }
            while index < keys.count {
                let current = index
                index += 1
                if keys[current] != 0, let value = values[current] { return (ObjectID(keys[current]), value) }
            }
            return nil
        }
    }

    func makeIterator() -> Iterator { Iterator(self) }

    var underestimatedCount: Int { count }
}

extension IDTable: Sendable where Value: Sendable {}
