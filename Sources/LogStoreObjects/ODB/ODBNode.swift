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

/// The entries of an inline table or a bucket, by folded key.
///
/// One dictionary, no separate array of entries: a warm lookup touches one hash table (fewer cache
/// misses than a dictionary of indices into an array). Entries are in no particular order; listings sort.
struct EntryTable: Sendable {
    private var byFolded: [String: ODBEntry] = [:]

    init() {}

    /// An empty table with room for `capacity` entries (decoding reserves the count it reads, so the
    /// dictionary never grows entry by entry).
    init(capacity: Int) {
        byFolded = Dictionary(minimumCapacity: capacity)
    }

    /// The number of entries.
    var count: Int { byFolded.count }

    /// Every entry, in no particular order.
    var entries: Dictionary<String, ODBEntry>.Values { byFolded.values }

    /// The entry whose key folds to `folded`.
    @inline(__always)
    func entry(folded: String) -> ODBEntry? {
        byFolded[folded]
    }

    /// Adds an entry while decoding (a key folding like an earlier one replaces it).
    mutating func append(_ entry: ODBEntry, folded: String) {
        set(entry, folded: folded)
    }

    /// Sets the entry of `folded`; an existing one keeps its spelling. Returns the replaced content.
    @discardableResult
    mutating func set(_ entry: ODBEntry, folded: String) -> ODBContent? {
        if let index = byFolded.index(forKey: folded) {
            let old = byFolded.values[index].content
            byFolded.values[index].content = entry.content
            return old
        }
        byFolded[folded] = entry
        return nil
    }

    /// Removes the entry of `folded`; returns it.
    @discardableResult
    mutating func remove(folded: String) -> ODBEntry? {
        byFolded.removeValue(forKey: folded)
    }

    /// Removes every entry.
    mutating func removeAll() {
        byFolded = [:]
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

extension ODBNode {
    /// Calls `body` with every record the node refers to: child tables, or a hashed table's buckets.
    func forEachReference(_ body: (ObjectID) -> Void) {
        switch self {
        case .inline(let entries), .bucket(_, let entries):
            for entry in entries.entries { if case .table(let id) = entry.content { body(id) } }
        case .hashed(let directory):
            for bucket in directory.buckets { body(bucket) }
        }
    }
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
