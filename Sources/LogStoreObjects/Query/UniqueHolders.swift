import LogStore

/// A unique index's hash table: which object holds each key. Each bucket keeps the key's hash beside the
/// key and the object, so a lookup reads one bucket (one cache miss, where a `Dictionary` reads its keys
/// and its values from two arrays) and growing moves the buckets without hashing a key again (a
/// `Dictionary` of string keys rehashed every string when it doubled, on the save that crossed the size).
///
/// Open addressing with linear probing, at most three quarters full; removal shifts the following entries
/// back (no tombstones). A stored hash is never 0 (0 marks an empty bucket).
struct UniqueHolders: Sendable {
    private struct Bucket: Sendable {
        /// The key's hash; 0 when the bucket is empty.
        var hash: UInt64
        var id: ObjectID
        var key: CompoundKey

        static let empty = Bucket(hash: 0, id: ObjectID(rawValue: 0), key: CompoundKey(.absent))
    }

    private var buckets: [Bucket] = []
    /// `64 - log2(bucket count)`: the top bits of a hash are its bucket.
    private var shift: UInt64 = 64
    /// Entries held.
    private(set) var count = 0

    /// An empty table.
    init() {}

    /// The hash a key is stored under (never 0).
    static func hash(_ key: CompoundKey) -> UInt64 {
        let hash = UInt64(bitPattern: Int64(key.hashValue))
        return hash == 0 ? 1 : hash
    }

    @inline(__always)
    private func bucket(_ hash: UInt64) -> Int { Int(truncatingIfNeeded: hash &>> shift) }

    /// The object holding `key` (whose ``hash(_:)`` is `hash`), or nil.
    func holder(of key: CompoundKey, hash: UInt64) -> ObjectID? {
        buckets.withUnsafeBufferPointer { buckets -> ObjectID? in
            guard !buckets.isEmpty else { return nil }
            let mask = buckets.count - 1
            var index = bucket(hash)
            while buckets[index].hash != 0 {
                if buckets[index].hash == hash, buckets[index].key == key { return buckets[index].id }
                index = (index + 1) & mask
            }
            return nil
        }
    }

    /// Notes that `id` holds `key` (whose hash is `hash`; no object in the table holds it).
    mutating func insert(_ id: ObjectID, key: CompoundKey, hash: UInt64) {
        if 4 * (count + 1) > 3 * buckets.count { resize(buckets: Self.buckets(for: count + 1)) }
        let mask = buckets.count - 1
        var index = bucket(hash)
        while buckets[index].hash != 0 { index = (index + 1) & mask }
        buckets[index] = Bucket(hash: hash, id: id, key: key)
        count += 1
    }

    /// The object holding `key` (whose hash is `hash`) if one does; else notes that `id` holds it and
    /// returns nil (one search where ``holder(of:hash:)`` and ``insert(_:key:hash:)`` make two).
    mutating func holderOrInsert(_ id: ObjectID, key: CompoundKey, hash: UInt64) -> ObjectID? {
        if 4 * (count + 1) > 3 * buckets.count { resize(buckets: Self.buckets(for: count + 1)) }
        let mask = buckets.count - 1
        var index = bucket(hash)
        while buckets[index].hash != 0 {
            if buckets[index].hash == hash, buckets[index].key == key { return buckets[index].id }
            index = (index + 1) & mask
        }
        buckets[index] = Bucket(hash: hash, id: id, key: key)
        count += 1
        return nil
    }

    /// Forgets that `id` holds `key` (whose hash is `hash`), if the table says it does.
    mutating func remove(_ id: ObjectID, key: CompoundKey, hash: UInt64) {
        guard !buckets.isEmpty else { return }
        let mask = buckets.count - 1
        var hole = bucket(hash)
        while buckets[hole].hash != hash || buckets[hole].id != id || buckets[hole].key != key {
            if buckets[hole].hash == 0 { return }
            hole = (hole + 1) & mask
        }
        // Backward shift: move each following entry of the run into the hole when its own bucket does not
        // lie between the hole and it, so that every entry stays reachable from its bucket.
        var next = (hole + 1) & mask
        while buckets[next].hash != 0 {
            let home = bucket(buckets[next].hash)
            if (next &- home) & mask >= (next &- hole) & mask {
                buckets.swapAt(hole, next)
                hole = next
            }
            next = (next + 1) & mask
        }
        buckets[hole] = .empty
        count -= 1
    }

    /// Room for `entries` entries before the table grows.
    mutating func reserveCapacity(_ entries: Int) {
        if 4 * entries > 3 * buckets.count { resize(buckets: Self.buckets(for: entries)) }
    }

    /// The smallest power of two of at least 8 buckets that holds `entries` at most three quarters full.
    private static func buckets(for entries: Int) -> Int {
        var buckets = 8
        while 3 * buckets < 4 * entries { buckets *= 2 }
        return buckets
    }

    /// Moves every entry into `count` buckets (a power of two that holds them at most three quarters full).
    private mutating func resize(buckets count: Int) {
        var old: [Bucket] = []
        swap(&old, &buckets)
        buckets = Array(repeating: .empty, count: count)
        shift = UInt64(64 - count.trailingZeroBitCount)
        let mask = count - 1
        for entry in old where entry.hash != 0 {
            var index = bucket(entry.hash)
            while buckets[index].hash != 0 { index = (index + 1) & mask }
            buckets[index] = entry
        }
    }
}
