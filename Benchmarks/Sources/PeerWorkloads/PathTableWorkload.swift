import GRDB
import LogStoreObjects

/// The path-table workload: `tableCount` tables `feeds.feedT`, each of `valuesPerTable` values
/// `settingK` (short strings and ints, alternating, as settings and feed metadata are).
public struct PathTableWorkload: Sendable {
    /// Tables under `feeds`.
    public let tableCount: Int
    /// Values in each table.
    public let valuesPerTable: Int
    /// `feed0`, `feed1`, …
    public let tableNames: [String]
    /// `setting0`, `setting1`, …
    public let keyNames: [String]

    /// A workload of `tableCount` tables of `valuesPerTable` values.
    public init(tableCount: Int, valuesPerTable: Int) {
        self.tableCount = tableCount
        self.valuesPerTable = valuesPerTable
        tableNames = (0..<tableCount).map { "feed\($0)" }
        keyNames = (0..<valuesPerTable).map { "setting\($0)" }
    }

    /// Number of values.
    public var total: Int { tableCount * valuesPerTable }

    /// The value of `feeds.feed<table>.setting<key>`.
    public func value(_ table: Int, _ key: Int) -> ODBValue {
        key % 2 == 0 ? .string("value \(table)-\(key)") : .int(table * 1_000 + key)
    }

    /// Bytes of the key and the value (a string's UTF-8, 8 for an int): the raw size of one value.
    public func rawBytes(_ table: Int, _ key: Int) -> Int {
        let keyBytes = keyNames[key].utf8.count
        switch value(table, key) {
        case .string(let string): return keyBytes + string.utf8.count
        default: return keyBytes + 8
        }
    }

    /// Raw bytes of every value.
    public var rawTotal: Int {
        (0..<tableCount).reduce(0) { sum, table in sum + (0..<valuesPerTable).reduce(0) { $0 + rawBytes(table, $1) } }
    }

    /// The path of one value.
    public func path(_ table: Int, _ key: Int) -> ODBPath { ODBPath(["feeds", tableNames[table], keyNames[key]]) }
}

/// The path tables on SQLite, as a user would store them there: one table `node(parent, key COLLATE
/// NOCASE, kind, value)` keyed by (parent, key), WAL, `synchronous = FULL` (every commit synced, as
/// LogStore's `.always`). A table is a row of kind 0 whose value is the table's number; the root table
/// is 0, `feeds` 1, `feedT` T + 2.
public final class SQLitePathTable {
    /// The database.
    public let queue: DatabaseQueue

    /// Creates the database at `path` with the `feeds` table.
    public init(path: String) throws {
        var configuration = Configuration()
        configuration.prepareDatabase { db in
            try db.execute(sql: "PRAGMA journal_mode = WAL")
            try db.execute(sql: "PRAGMA synchronous = FULL")
        }
        queue = try DatabaseQueue(path: path, configuration: configuration)
        let settings = try queue.read { db in
            (try String.fetchOne(db, sql: "PRAGMA journal_mode"), try Int.fetchOne(db, sql: "PRAGMA synchronous"))
        }
        guard settings.0 == "wal", settings.1 == 2 else {
            throw DatabaseError(message: "expected WAL and synchronous FULL, found \(String(describing: settings))")
        }
        try queue.write { db in
            try db.execute(
                sql: """
                    CREATE TABLE IF NOT EXISTS node (parent INTEGER NOT NULL, key TEXT NOT NULL COLLATE NOCASE,
                    kind INTEGER NOT NULL, value, PRIMARY KEY (parent, key)) WITHOUT ROWID
                    """)
            try db.execute(sql: "INSERT OR IGNORE INTO node VALUES (0, 'feeds', 0, 1)")
        }
    }

    /// Sets every value of `workload`, table by table, in transactions of `transactionSize` sets.
    public func setAll(_ workload: PathTableWorkload, transactionSize: Int) throws {
        var inserted = 0
        while inserted < workload.total {
            try queue.write { db in
                let statement = try db.cachedStatement(sql: "INSERT OR REPLACE INTO node VALUES (?, ?, ?, ?)")
                for _ in 0..<min(transactionSize, workload.total - inserted) {
                    let table = inserted / workload.valuesPerTable
                    let key = inserted % workload.valuesPerTable
                    let parent = Int64(table) + 2
                    if key == 0 { try statement.execute(arguments: [1, workload.tableNames[table], 0, parent]) }
                    switch workload.value(table, key) {
                    case .string(let string):
                        try statement.execute(arguments: [parent, workload.keyNames[key], 6, string])
                    case .int(let number):
                        try statement.execute(arguments: [parent, workload.keyNames[key], 3, number])
                    default: break
                    }
                    inserted += 1
                }
            }
        }
    }

    /// The value at `path`, walking from the root table one row per key (nil when a key is missing).
    public static func value(at path: ODBPath, in db: Database) throws -> DatabaseValue? {
        var parent: Int64 = 0
        let statement = try db.cachedStatement(sql: "SELECT kind, value FROM node WHERE parent = ? AND key = ?")
        for (index, key) in path.keys.enumerated() {
            guard let row = try Row.fetchOne(statement, arguments: [parent, key]) else { return nil }
            if index == path.keys.count - 1 { return row["value"] }
            parent = row["value"]
        }
        return nil
    }

    /// Closes the database.
    public func close() throws { try queue.close() }
}
