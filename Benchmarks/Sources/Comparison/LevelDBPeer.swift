import CLevelDB
import Foundation

/// LevelDB through its C API, set up as a careful user of durable batched writes would: every write
/// synced through its log, Snappy compression (the only one it has), a bloom filter (10 bits per key), a
/// 128 MiB block cache.
/// Keys and values as RocksDB's (``PeerValue``).
///
/// `@unchecked Sendable`: a `leveldb_t` may be used by several threads at once without outside locking
/// (LevelDB's documented concurrency); the option objects are set in `init` and only read afterwards;
/// read options, snapshots and batches are made inside each call. `db` is only replaced by ``close()``,
/// which the workloads call with no other call running.
final class LevelDBPeer: KeyValuePeer, @unchecked Sendable {
    private var db: OpaquePointer?
    private let options: OpaquePointer?
    private let filter: OpaquePointer?
    private let cache: OpaquePointer?
    private let writeOptions: OpaquePointer?

    init(directory: String) throws {
        options = leveldb_options_create()
        leveldb_options_set_create_if_missing(options, 1)
        leveldb_options_set_compression(options, Int32(leveldb_snappy_compression))
        filter = leveldb_filterpolicy_create_bloom(10)
        leveldb_options_set_filter_policy(options, filter)
        cache = leveldb_cache_create_lru(128 << 20)
        leveldb_options_set_cache(options, cache)
        writeOptions = leveldb_writeoptions_create()
        leveldb_writeoptions_set_sync(writeOptions, 1)
        var error: UnsafeMutablePointer<CChar>?
        db = leveldb_open(options, directory, &error)
        try Self.check(error, "leveldb_open")
    }

    private static func check(_ error: UnsafeMutablePointer<CChar>?, _ what: String) throws {
        guard let error else { return }
        let message = String(cString: error)
        leveldb_free(error)
        throw ComparisonError("LevelDB \(what): \(message)")
    }

    func writeBatch(keys: ArraySlice<Int>, records: [ComparisonRecord], fresh: Bool) throws {
        let batch = leveldb_writebatch_create()
        defer { leveldb_writebatch_destroy(batch) }
        var scratch: [UInt8] = []
        for (key, record) in zip(keys, records) {
            PeerValue.withEncoded(key: key, record: record, scratch: &scratch) {
                leveldb_writebatch_put(batch, $0, $1, $2, $3)
            }
        }
        var error: UnsafeMutablePointer<CChar>?
        leveldb_write(db, writeOptions, batch, &error)
        try Self.check(error, "leveldb_write")
    }

    func read(keys: ArraySlice<Int>) throws -> Int {
        let readOptions = leveldb_readoptions_create()
        let snapshot = leveldb_create_snapshot(db)
        leveldb_readoptions_set_snapshot(readOptions, snapshot)
        defer {
            leveldb_release_snapshot(db, snapshot)
            leveldb_readoptions_destroy(readOptions)
        }
        var bytes = 0
        for key in keys {
            var length = 0
            var error: UnsafeMutablePointer<CChar>?
            let found = PeerValue.withKey(key) { leveldb_get(db, readOptions, $0, $1, &length, &error) }
            try Self.check(error, "leveldb_get")
            guard let found else { continue }
            let value = Array(UnsafeRawBufferPointer(start: found, count: length))
            leveldb_free(found)
            bytes &+= value.count - 1
        }
        return bytes
    }

    func commitOne(key: Int, record: ComparisonRecord) throws {
        try writeBatch(keys: [key][...], records: [record], fresh: false)
    }

    /// A full manual compaction: overwritten versions dropped.
    func reclaimSpace() throws {
        leveldb_compact_range(db, nil, 0, nil, 0)
    }

    /// Flushes the memtable first (closing alone leaves the last writes in the log, uncompressed, until the
    /// next open): a range compaction always flushes the memtable, and this range, past every key, then
    /// compacts nothing.
    func close() throws {
        let beyond = [CChar](repeating: -1, count: 9)
        leveldb_compact_range(db, beyond, beyond.count, beyond, beyond.count)
        leveldb_close(db)
        db = nil
    }

    deinit {
        if db != nil { leveldb_close(db) }
        leveldb_writeoptions_destroy(writeOptions)
        leveldb_options_destroy(options)
        leveldb_filterpolicy_destroy(filter)
        leveldb_cache_destroy(cache)
    }
}
