import LogStore

/// What a table entry holds: a child table (its record id) or a value with an optional application type.
enum ODBContent: Sendable, Equatable {
    case table(ObjectID)
    case value(ODBValue, applicationType: String?)
}

/// One child of a table: its key as created, and what it holds.
struct ODBEntry: Sendable, Equatable {
    var key: String
    var content: ODBContent
}

/// The entries of an inline table or a bucket, with a lookup by folded key.
///
/// Entries are in no particular order (a removal moves the last entry into the gap); listings sort.
struct EntryTable: Sendable {
    private(set) var entries: [ODBEntry] = []
    private var slots: [String: Int] = [:]

    init() {}

    /// The number of entries.
    var count: Int { entries.count }

    /// The entry whose key folds to `folded`.
    @inline(__always)
    func entry(folded: String) -> ODBEntry? {
        slots[folded].map { entries[$0] }
    }

    /// Adds an entry while decoding (a key folding like an earlier one replaces it).
    mutating func append(_ entry: ODBEntry, folded: String) {
        set(entry, folded: folded)
    }

    /// Sets the entry of `folded`; an existing one keeps its spelling. Returns the replaced content.
    @discardableResult
    mutating func set(_ entry: ODBEntry, folded: String) -> ODBContent? {
        if let index = slots[folded] {
            let old = entries[index].content
            entries[index].content = entry.content
            return old
        }
        slots[folded] = entries.count
        entries.append(entry)
        return nil
    }

    /// Removes the entry of `folded`; returns it.
    @discardableResult
    mutating func remove(folded: String) -> ODBEntry? {
        guard let index = slots.removeValue(forKey: folded) else { return nil }
        let removed = entries[index]
        let last = entries.count - 1
        if index != last {
            entries[index] = entries[last]
            slots[ODBKey.fold(entries[index].key)] = index
        }
        entries.removeLast()
        return removed
    }

    /// Removes every entry.
    mutating func removeAll() {
        entries = []
        slots = [:]
    }
}

/// A decoded table or bucket record.
enum ODBNode: Sendable {
    /// A table that holds its children in its own record.
    case inline(EntryTable)
    /// A large table: a directory of buckets by the low `depth` bits of the folded key's hash.
    case hashed(ODBDirectory)
    /// A bucket of a large table; `depth` low hash bits are the same for all its keys.
    case bucket(depth: Int, EntryTable)
}

/// The directory of a large table: `buckets[hash & (buckets.count - 1)]` holds the key.
struct ODBDirectory: Sendable, Equatable {
    /// log2 of `buckets.count`.
    var depth: Int
    /// 2^depth bucket ids; a bucket of depth d < `depth` appears 2^(depth − d) times.
    var buckets: [ObjectID]

    /// The bucket holding keys of `hash`.
    @inline(__always)
    func bucket(for hash: UInt64) -> ObjectID {
        buckets[Int(truncatingIfNeeded: hash & UInt64(buckets.count - 1))]
    }
}
