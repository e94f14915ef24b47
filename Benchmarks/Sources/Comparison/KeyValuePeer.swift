/// A store under comparison, holding the records of a ``DataSet`` under the keys `0..<count`.
///
/// Every method that writes is durable when it returns: the store's commit has reached the disk
/// (each store's setting for that is in ``PeerKind/durability``).
protocol KeyValuePeer: AnyObject, Sendable {
    /// Writes `keys[i] → records[i]` in one transaction. `fresh`: the keys are new and ascending.
    func writeBatch(keys: ArraySlice<Int>, records: [ComparisonRecord], fresh: Bool) throws
    /// Reads every key in one read transaction (where the store has them), copying each value out;
    /// returns the bytes read.
    func read(keys: ArraySlice<Int>) throws -> Int
    /// Replaces one record in a transaction of its own.
    func commitOne(key: Int, record: ComparisonRecord) throws
    /// Gives the space of overwritten records back (LogStore compaction, SQLite `VACUUM`, LMDB copy-compact).
    func reclaimSpace() throws
    func close() throws
}

/// The stores compared.
enum PeerKind: String, CaseIterable, Codable, Sendable {
    case logStore = "LogStore"
    case sqlite = "SQLite (GRDB)"
    case lmdb = "LMDB"
    case rocksDB = "RocksDB (LZ4)"
    case rocksDBZstd = "RocksDB (ZSTD + dictionary)"
    case levelDB = "LevelDB"

    /// Opens (creating when missing) the store in `directory`, for a data set of `count` keys.
    func open(directory: String, count: Int) throws -> any KeyValuePeer {
        switch self {
        case .logStore: return try LogStorePeer(directory: directory, count: count)
        case .sqlite: return try SQLitePeer(directory: directory)
        case .lmdb: return try LMDBPeer(directory: directory)
        case .rocksDB: return try RocksDBPeer(directory: directory, compression: .lz4)
        case .rocksDBZstd: return try RocksDBPeer(directory: directory, compression: .zstdWithDictionary)
        case .levelDB: return try LevelDBPeer(directory: directory)
        }
    }

    /// What a commit promises, and the setting that makes it so.
    var durability: String {
        switch self {
        case .logStore:
            "default options: fsync policy `.always` (each commit `fdatasync`ed before it returns; concurrent commits share one)"
        case .sqlite:
            "WAL, `synchronous = FULL` (the WAL is synced at every commit; `NORMAL` would not sync commits in WAL mode)"
        case .lmdb:
            "default flags (each commit writes and `fdatasync`s the data file and then the meta page)"
        case .rocksDB, .rocksDBZstd:
            "write-ahead log on, `sync = true` on every write (the log is synced before the write returns)"
        case .levelDB:
            "`sync = true` on every write (the log is synced before the write returns)"
        }
    }

    /// How the store is set up beyond durability.
    var setup: String {
        switch self {
        case .logStore:
            "engine API (`Store`), default options: 64 MiB segments, LZ4 with the shared dictionary, background compaction on; "
                + "a read transaction is a `Snapshot`, a single read a plain `get`"
        case .sqlite:
            "GRDB `DatabasePool`, one table `object(id INTEGER PRIMARY KEY, type TEXT, data BLOB, refcount INTEGER)`, prepared (cached) statements, upserts for overwrites, default page size and cache"
        case .lmdb:
            "one database with `MDB_INTEGERKEY` (8-byte native keys), value = type byte + payload, `MDB_APPEND` for the first fill (ascending keys), `MDB_NOTLS`, 16 GiB map"
        case .rocksDB:
            "RocksDB 7.8 C API, 8-byte big-endian keys, value = type byte + payload, LZ4, bloom filters (10 bits/key), 128 MiB block cache, 2 background threads, the memtable flushed on close; a read transaction is a snapshot, a get `rocksdb_get_pinned`; reclaiming is a full `CompactRange`"
        case .rocksDBZstd:
            "as RocksDB (LZ4) but ZSTD level 3 with a 16 KiB dictionary trained per SST file (from up to 1.6 MiB of samples), on every level"
        case .levelDB:
            "LevelDB 1.23 C API, 8-byte big-endian keys, value = type byte + payload, Snappy, bloom filter (10 bits/key), 128 MiB block cache; a read transaction is a snapshot; reclaiming is a full `CompactRange`"
        }
    }
}
