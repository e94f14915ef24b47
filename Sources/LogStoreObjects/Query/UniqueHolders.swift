import LogStore

/// A unique index's hash table: which object holds each key, stored as the key's hash and the object's id
/// only. A lookup tells a matching hash from a match by asking whether the object holds the key (its keys
/// are in the index's ``PagedIDMap``), so the table needs no copy of the keys: 16 bytes a bucket, and
/// growing moves the stored hashes without hashing a key again (a `Dictionary` of keys rehashed every
/// string into three times the memory when it doubled, on the save that crossed the size).
///
/// Open addressing with linear probing, at most half full; removal shifts the following entries back (no
/// tombstones). A stored hash is never 0 (0 marks an empty bucket).
struct UniqueHolders: Sendable {
    /// The hash of the key in each bucket, 0 when empty.
    private var hashes: [UInt64] = []
    /// The object in each bucket.
    private var ids: [ObjectID] = []
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

    /// The object stored under `hash` for which `holds` is true (the object holding the key), or nil.
    func holder(hash: UInt64, where holds: (ObjectID) -> Bool) -> ObjectID? {
        guard !hashes.isEmpty else { return nil }
        let mask = hashes.count - 1
        var index = bucket(hash)
        while hashes[index] != 0 {
            if hashes[index] == hash, holds(ids[index]) { return ids[index] }
            index = (index + 1) & mask
        }
        return nil
    }

    /// Notes that `id` holds the key hashed `hash` (which no object in the table holds).
    mutating func insert(_ id: ObjectID, hash: UInt64) {
        if 2 * (count + 1) > hashes.count { resize(buckets: Self.buckets(for: count + 1)) }
        let mask = hashes.count - 1
        var index = bucket(hash)
        while hashes[index] != 0 { index = (index + 1) & mask }
        hashes[index] = hash
        ids[index] = id
        count += 1
    }

    /// Forgets that `id` holds the key hashed `hash`, if the table says it does. (Two keys of one object
    /// with one hash are two equal buckets: removing either leaves the table right.)
    mutating func remove(_ id: ObjectID, hash: UInt64) {
        guard !hashes.isEmpty else { return }
        let mask = hashes.count - 1
        var hole = bucket(hash)
        while hashes[hole] != hash || ids[hole] != id {
            if hashes[hole] == 0 { return }
            hole = (hole + 1) & mask
        }
        // Backward shift: move each following entry of the run into the hole when its own bucket does not
        // lie between the hole and it, so that every entry stays reachable from its bucket.
        var next = (hole + 1) & mask
        while hashes[next] != 0 {
            let home = bucket(hashes[next])
            if (next &- home) & mask >= (next &- hole) & mask {
                hashes[hole] = hashes[next]
                ids[hole] = ids[next]
                hole = next
            }
            next = (next + 1) & mask
        }
        hashes[hole] = 0
        count -= 1
    }

    /// Room for `entries` entries before the table grows.
    mutating func reserveCapacity(_ entries: Int) {
        if 2 * entries > hashes.count { resize(buckets: Self.buckets(for: entries)) }
    }

    /// The smallest power of two of at least 8 buckets that holds `entries` at most half full.
    private static func buckets(for entries: Int) -> Int {
        var buckets = 8
        while buckets / 2 < entries { buckets *= 2 }
        return buckets
    }

    /// Moves every entry into `buckets` buckets (a power of two that holds them at most half full).
    private mutating func resize(buckets: Int) {
        let oldHashes = hashes
        let oldIDs = ids
        hashes = Array(repeating: 0, count: buckets)
        ids = Array(repeating: ObjectID(rawValue: 0), count: buckets)
        shift = UInt64(64 - buckets.trailingZeroBitCount)
        let mask = buckets - 1
        for (oldIndex, hash) in oldHashes.enumerated() where hash != 0 {
            var index = bucket(hash)
            while hashes[index] != 0 { index = (index + 1) & mask }
            hashes[index] = hash
            ids[index] = oldIDs[oldIndex]
        }
    }
}
