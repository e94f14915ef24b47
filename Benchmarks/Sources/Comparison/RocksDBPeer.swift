import CRocksDB
import Foundation

/// RocksDB through its C API, set up as a careful user of durable batched writes would: every write
/// synced through the write-ahead log, bloom filters (10 bits per key) on the block-based tables, a
/// 128 MiB block cache, two background threads, the memtable flushed on close, and either LZ4 or ZSTD with a dictionary trained per SST file (16 KiB, sampled
/// from 1.6 MiB). Keys are 8-byte big-endian (so ascending ids are ascending keys); the value is a type
/// byte followed by the payload (``PeerValue``).
///
/// `@unchecked Sendable`: a `rocksdb_t` may be used by several threads at once without outside locking
/// (RocksDB's documented thread safety); the option objects are set in `init` and only read afterwards;
/// read options, snapshots and batches are made inside each call, on the calling thread. `db` is only
/// replaced by ``close()``, which the workloads call with no other call running.
final class RocksDBPeer: KeyValuePeer, @unchecked Sendable {
    /// How the SST files are compressed.
    enum Compression {
        case lz4
        case zstdWithDictionary
    }

    private var db: OpaquePointer?
    private let options: OpaquePointer?
    private let table: OpaquePointer?
    private let cache: OpaquePointer?
    private let writeOptions: OpaquePointer?

    init(directory: String, compression: Compression) throws {
        options = rocksdb_options_create()
        rocksdb_options_set_create_if_missing(options, 1)
        rocksdb_options_increase_parallelism(options, 2)
        // One info log, warnings only: rotated logs would count in the bytes on disk.
        rocksdb_options_set_info_log_level(options, 2)
        rocksdb_options_set_keep_log_file_num(options, 1)
        table = rocksdb_block_based_options_create()
        rocksdb_block_based_options_set_filter_policy(table, rocksdb_filterpolicy_create_bloom(10))
        cache = rocksdb_cache_create_lru(128 << 20)
        rocksdb_block_based_options_set_block_cache(table, cache)
        rocksdb_options_set_block_based_table_factory(options, table)
        switch compression {
        case .lz4:
            rocksdb_options_set_compression(options, Int32(rocksdb_lz4_compression))
        case .zstdWithDictionary:
            rocksdb_options_set_compression(options, Int32(rocksdb_zstd_compression))
            // Window bits (default), level 3, strategy (default), a 16 KiB dictionary per file.
            rocksdb_options_set_compression_options(options, -14, 3, 0, 16 * 1024)
            rocksdb_options_set_compression_options_zstd_max_train_bytes(options, 100 * 16 * 1024)
            rocksdb_options_set_bottommost_compression(options, Int32(rocksdb_zstd_compression))
            rocksdb_options_set_bottommost_compression_options(options, -14, 3, 0, 16 * 1024, 1)
            rocksdb_options_set_bottommost_compression_options_zstd_max_train_bytes(options, 100 * 16 * 1024, 1)
        }
        writeOptions = rocksdb_writeoptions_create()
        rocksdb_writeoptions_set_sync(writeOptions, 1)
        var error: UnsafeMutablePointer<CChar>?
        db = rocksdb_open(options, directory, &error)
        try Self.check(error, "rocksdb_open")
    }

    private static func check(_ error: UnsafeMutablePointer<CChar>?, _ what: String) throws {
        guard let error else { return }
        let message = String(cString: error)
        rocksdb_free(error)
        throw ComparisonError("RocksDB \(what): \(message)")
    }

    func writeBatch(keys: ArraySlice<Int>, records: [ComparisonRecord], fresh: Bool) throws {
        let batch = rocksdb_writebatch_create()
        defer { rocksdb_writebatch_destroy(batch) }
        var scratch: [UInt8] = []
        for (key, record) in zip(keys, records) {
            PeerValue.withEncoded(key: key, record: record, scratch: &scratch) {
                rocksdb_writebatch_put(batch, $0, $1, $2, $3)
            }
        }
        var error: UnsafeMutablePointer<CChar>?
        rocksdb_write(db, writeOptions, batch, &error)
        try Self.check(error, "rocksdb_write")
    }

    func read(keys: ArraySlice<Int>) throws -> Int {
        let readOptions = rocksdb_readoptions_create()
        let snapshot = rocksdb_create_snapshot(db)
        rocksdb_readoptions_set_snapshot(readOptions, snapshot)
        defer {
            rocksdb_release_snapshot(db, snapshot)
            rocksdb_readoptions_destroy(readOptions)
        }
        var bytes = 0
        for key in keys {
            var error: UnsafeMutablePointer<CChar>?
            let pinned = PeerValue.withKey(key) { rocksdb_get_pinned(db, readOptions, $0, $1, &error) }
            try Self.check(error, "rocksdb_get_pinned")
            guard let pinned else { continue }
            defer { rocksdb_pinnableslice_destroy(pinned) }
            var length = 0
            guard let found = rocksdb_pinnableslice_value(pinned, &length) else { continue }
            // Copied out of the pinned block, as a caller keeping the value must.
            let value = Array(UnsafeRawBufferPointer(start: found, count: length))
            bytes &+= value.count - 1
        }
        return bytes
    }

    func commitOne(key: Int, record: ComparisonRecord) throws {
        try writeBatch(keys: [key][...], records: [record], fresh: false)
    }

    /// A full manual compaction (`CompactRange` over every key): the levels above the last merged into it,
    /// overwritten versions dropped.
    func reclaimSpace() throws {
        rocksdb_compact_range(db, nil, 0, nil, 0)
    }

    /// Flushes the memtable first (with the log on, closing alone leaves the last writes in the log,
    /// uncompressed, until the next open replays them), then closes.
    func close() throws {
        let flush = rocksdb_flushoptions_create()
        rocksdb_flushoptions_set_wait(flush, 1)
        var error: UnsafeMutablePointer<CChar>?
        rocksdb_flush(db, flush, &error)
        rocksdb_flushoptions_destroy(flush)
        try Self.check(error, "rocksdb_flush")
        rocksdb_close(db)
        db = nil
    }

    deinit {
        if db != nil { rocksdb_close(db) }
        rocksdb_writeoptions_destroy(writeOptions)
        rocksdb_options_destroy(options)
        rocksdb_block_based_options_destroy(table)
        rocksdb_cache_destroy(cache)
    }
}

/// How RocksDB and LevelDB hold a record: an 8-byte big-endian key (ascending ids are ascending keys) and
/// a value of a type byte followed by the payload.
enum PeerValue {
    /// Calls `body` with the key of `key` and the value of `record` (built in `scratch`), as the C APIs
    /// take them.
    static func withEncoded<Result>(
        key: Int, record: ComparisonRecord, scratch: inout [UInt8],
        _ body: (UnsafePointer<CChar>?, Int, UnsafePointer<CChar>?, Int) -> Result
    ) -> Result {
        scratch.removeAll(keepingCapacity: true)
        scratch.append(UInt8(truncatingIfNeeded: record.typeTag))
        scratch.append(contentsOf: record.payload)
        return withKey(key) { keyBytes, keyCount in
            scratch.withUnsafeBytes { value in
                body(keyBytes, keyCount, value.baseAddress?.assumingMemoryBound(to: CChar.self), value.count)
            }
        }
    }

    /// Calls `body` with the key of `key`.
    static func withKey<Result>(_ key: Int, _ body: (UnsafePointer<CChar>?, Int) -> Result) -> Result {
        var rawKey = UInt64(key).bigEndian
        return withUnsafeBytes(of: &rawKey) { body($0.baseAddress?.assumingMemoryBound(to: CChar.self), $0.count) }
    }
}
