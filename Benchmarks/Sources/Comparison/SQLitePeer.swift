import Foundation
import GRDB

/// SQLite through GRDB, stored the way object stores on SQLite keep their objects: one table
/// `object(id INTEGER PRIMARY KEY, type TEXT, data BLOB, refcount INTEGER)`, WAL, every commit synced.
final class SQLitePeer: KeyValuePeer {
    let pool: DatabasePool

    init(directory: String) throws {
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        pool = try DatabasePool(path: directory + "/objects.sqlite")
        // DatabasePool opens in WAL mode and sets `synchronous = NORMAL` on its writer connection, which
        // does not sync commits; FULL syncs the WAL at every commit (readers do not commit).
        let level = try pool.writeWithoutTransaction { db in
            try db.execute(sql: "PRAGMA synchronous = FULL")
            return try Int.fetchOne(db, sql: "PRAGMA synchronous")
        }
        guard level == 2 else { throw ComparisonError("SQLite synchronous is \(level ?? -1), not FULL (2)") }
        try pool.write { db in
            try db.execute(
                sql:
                    "CREATE TABLE IF NOT EXISTS object (id INTEGER PRIMARY KEY, type TEXT, data BLOB, refcount INTEGER)"
            )
        }
    }

    private static let upsert = """
        INSERT INTO object (id, type, data, refcount) VALUES (?, ?, ?, 0)
        ON CONFLICT(id) DO UPDATE SET type = excluded.type, data = excluded.data
        """

    private static func write(_ db: Database, key: Int, record: ComparisonRecord) throws {
        let statement = try db.cachedStatement(sql: upsert)
        try statement.execute(arguments: [key, record.typeName, Data(record.payload)])
    }

    func writeBatch(keys: ArraySlice<Int>, records: [ComparisonRecord], fresh: Bool) throws {
        try pool.write { db in
            for (key, record) in zip(keys, records) { try Self.write(db, key: key, record: record) }
        }
    }

    func read(keys: ArraySlice<Int>) throws -> Int {
        try pool.read { db in
            let statement = try db.cachedStatement(sql: "SELECT data FROM object WHERE id = ?")
            var bytes = 0
            for key in keys { bytes &+= try Data.fetchOne(statement, arguments: [key])?.count ?? 0 }
            return bytes
        }
    }

    func commitOne(key: Int, record: ComparisonRecord) throws {
        try pool.write { db in try Self.write(db, key: key, record: record) }
    }

    func reclaimSpace() throws {
        try pool.writeWithoutTransaction { db in
            try db.execute(sql: "VACUUM")
            try db.execute(sql: "PRAGMA wal_checkpoint(TRUNCATE)")
        }
    }

    func close() throws { try pool.close() }
}
