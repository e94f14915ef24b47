import CLMDB
import Foundation

/// LMDB with integer keys: one database, `MDB_INTEGERKEY`, the value a type byte followed by the payload.
///
/// `@unchecked Sendable`: `MDB_env` and an open `MDB_dbi` may be used from any thread (lmdb.h, "Caveats");
/// every transaction is begun and ended inside one method call, on the calling thread, and `MDB_NOTLS`
/// lets read transactions of several threads coexist. The mutable `env` is only replaced by
/// ``reclaimSpace()`` and ``close()``, which the workloads call with no other call running.
final class LMDBPeer: KeyValuePeer, @unchecked Sendable {
    let directory: String
    private var env: OpaquePointer?
    private var dbi = MDB_dbi()

    init(directory: String) throws {
        self.directory = directory
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        try openEnvironment()
    }

    private func openEnvironment() throws {
        try check(mdb_env_create(&env), "mdb_env_create")
        try check(mdb_env_set_mapsize(env, 16 << 30), "mdb_env_set_mapsize")
        try check(mdb_env_open(env, directory, UInt32(MDB_NOTLS), 0o644), "mdb_env_open")
        var txn: OpaquePointer?
        try check(mdb_txn_begin(env, nil, 0, &txn), "mdb_txn_begin")
        try check(mdb_dbi_open(txn, nil, UInt32(MDB_INTEGERKEY | MDB_CREATE), &dbi), "mdb_dbi_open")
        try check(mdb_txn_commit(txn), "mdb_txn_commit")
    }

    private func check(_ code: Int32, _ what: String) throws {
        if code != 0 { throw ComparisonError("LMDB \(what): \(String(cString: mdb_strerror(code)))") }
    }

    /// Puts with `MDB_RESERVE`: LMDB hands out the value's space in the page, written in place.
    private func put(_ txn: OpaquePointer?, key: Int, record: ComparisonRecord, flags: Int32) throws {
        var rawKey = UInt64(key)
        try withUnsafeMutableBytes(of: &rawKey) { keyBytes in
            var mdbKey = MDB_val(mv_size: keyBytes.count, mv_data: keyBytes.baseAddress)
            var mdbValue = MDB_val(mv_size: record.payload.count + 1, mv_data: nil)
            try check(mdb_put(txn, dbi, &mdbKey, &mdbValue, UInt32(flags | MDB_RESERVE)), "mdb_put")
            guard let target = mdbValue.mv_data else { throw ComparisonError("LMDB mdb_put: no reserved space") }
            target.storeBytes(of: UInt8(truncatingIfNeeded: record.typeTag), as: UInt8.self)
            record.payload.withUnsafeBytes { payload in
                if let base = payload.baseAddress { (target + 1).copyMemory(from: base, byteCount: payload.count) }
            }
        }
    }

    private func writeTransaction(_ body: (OpaquePointer?) throws -> Void) throws {
        var txn: OpaquePointer?
        try check(mdb_txn_begin(env, nil, 0, &txn), "mdb_txn_begin")
        do {
            try body(txn)
        } catch {
            mdb_txn_abort(txn)
            throw error
        }
        try check(mdb_txn_commit(txn), "mdb_txn_commit")
    }

    func writeBatch(keys: ArraySlice<Int>, records: [ComparisonRecord], fresh: Bool) throws {
        try writeTransaction { txn in
            for (key, record) in zip(keys, records) {
                try put(txn, key: key, record: record, flags: fresh ? MDB_APPEND : 0)
            }
        }
    }

    func read(keys: ArraySlice<Int>) throws -> Int {
        var txn: OpaquePointer?
        try check(mdb_txn_begin(env, nil, UInt32(MDB_RDONLY), &txn), "mdb_txn_begin")
        defer { mdb_txn_abort(txn) }
        var bytes = 0
        for key in keys {
            var rawKey = UInt64(key)
            let found = try withUnsafeMutableBytes(of: &rawKey) { keyBytes -> [UInt8]? in
                var mdbKey = MDB_val(mv_size: keyBytes.count, mv_data: keyBytes.baseAddress)
                var mdbValue = MDB_val()
                let code = mdb_get(txn, dbi, &mdbKey, &mdbValue)
                if code == MDB_NOTFOUND { return nil }
                try check(code, "mdb_get")
                // Copied out, as a caller keeping the value past the transaction must.
                return Array(UnsafeRawBufferPointer(start: mdbValue.mv_data, count: mdbValue.mv_size))
            }
            bytes &+= found.map { $0.count - 1 } ?? 0
        }
        return bytes
    }

    func commitOne(key: Int, record: ComparisonRecord) throws {
        try writeTransaction { txn in try put(txn, key: key, record: record, flags: 0) }
    }

    /// Copies the environment with `MDB_CP_COMPACT` (free pages left out) and puts the copy in place.
    func reclaimSpace() throws {
        let copy = directory + ".compact"
        try? FileManager.default.removeItem(atPath: copy)
        try FileManager.default.createDirectory(atPath: copy, withIntermediateDirectories: true)
        try check(mdb_env_copy2(env, copy, UInt32(MDB_CP_COMPACT)), "mdb_env_copy2")
        mdb_env_close(env)
        env = nil
        guard rename(copy + "/data.mdb", directory + "/data.mdb") == 0 else {
            throw ComparisonError("rename of the compacted copy failed: errno \(errno)")
        }
        let directoryFD = open(directory, O_RDONLY | O_DIRECTORY)
        if directoryFD >= 0 {
            fsync(directoryFD)
            Foundation.close(directoryFD)
        }
        try? FileManager.default.removeItem(atPath: copy)
        try openEnvironment()
    }

    func close() throws {
        mdb_env_close(env)
        env = nil
    }
}
