import BenchmarkSupport
import Foundation
import GRDB
import LogStore
@_spi(Testing) import LogStoreObjects
import LogStorePersistent

// Indexed queries: tasks (title, a unique code, a due date over a year, priority, done) with an ordered
// index on `due` and a unique one on `code`, through LogStoreObjects (`@Persistent`, `FetchDescriptor`,
// `#Predicate`) and through GRDB (a table with `CREATE INDEX` on `due` and `CREATE UNIQUE INDEX` on
// `code`, rows decoded into structs). The data are those of `QueryFigures`.

/// A task of the query rows, as a LogStoreObjects user declares it.
@Persistent("QTask") final class ComparedTask {
    static let indexes: [IndexDefinition] = [.ordered(\ComparedTask.due), .unique(\ComparedTask.code)]
    var title: String
    var code: String
    var due: Date
    var priority: Int
    var done: Bool

    init(_ values: TaskValues) {
        title = values.title
        code = values.code
        due = Date(timeIntervalSinceReferenceDate: values.due)
        priority = values.priority
        done = values.done
    }
}

/// A task as a GRDB user reads it: a struct decoded from a row, the columns by position.
struct TaskRow: FetchableRecord {
    var id: Int64
    var title: String
    var code: String
    var due: Date
    var priority: Int
    var done: Bool

    static let columns = "id, title, code, due, priority, done"

    init(row: Row) {
        id = row[0]
        title = row[1]
        code = row[2]
        due = Date(timeIntervalSinceReferenceDate: row[3])
        priority = row[4]
        done = row[5]
    }
}

/// The values of one task (the same for both stores).
struct TaskValues: Sendable {
    var title: String
    var code: String
    /// Seconds since 2001-01-01.
    var due: Double
    var priority: Int
    var done: Bool

    /// 2027-01-01T00:00:00Z as seconds since 2001-01-01, and one year.
    static let yearStart = 820_454_400.0
    static let yearLength = 365.0 * 86_400

    private static let verbs = ["review", "write", "send", "fix", "plan", "call", "check", "update", "file", "close"]
    private static let adjectives = ["draft", "final", "weekly", "urgent", "shared", "old", "new", "quarterly"]
    private static let nouns = ["report", "invoice", "budget", "design", "release", "contract", "roadmap", "ticket"]

    /// Task `number`: title "Task 12: review the draft report", code "QT-" + 12 hex digits (unique, in no
    /// order related to the number), due uniform over 2027, priority 0..<5, done one time in five.
    init(number: Int) {
        var random = TaskGenerator(seed: 0x7A5C_0000_0000 &+ UInt64(number))
        title =
            "Task \(number): \(Self.verbs[random.below(Self.verbs.count)]) the "
            + "\(Self.adjectives[random.below(Self.adjectives.count)]) \(Self.nouns[random.below(Self.nouns.count)])"
        let mixed = (UInt64(number) &* 0x9E37_79B9_7F4B) & 0xFFFF_FFFF_FFFF
        let hex = String(mixed, radix: 16, uppercase: true)
        code = "QT-" + String(repeating: "0", count: 12 - hex.count) + hex
        due = Self.yearStart + random.unit() * Self.yearLength
        priority = random.below(5)
        done = random.below(5) == 0
    }
}

/// SplitMix64, as `QueryFigures` draws its tasks.
struct TaskGenerator {
    var state: UInt64
    init(seed: UInt64) { state = seed }
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
    mutating func below(_ bound: Int) -> Int { Int(next() % UInt64(bound)) }
    mutating func unit() -> Double { Double(next() >> 11) / Double(1 << 53) }
}

/// The task workload: batched inserts (1,000 per transaction, durable), reopen and the first query, range
/// queries on `due` returning 1% of the tasks decoded (a new context each in LogStore, each in a read of its
/// own in SQLite), the same again warm, lookups by the unique code, bytes on disk.
struct TaskQueryWorkload {
    let tasks: [TaskValues]
    /// The `due` ranges of the queries, each 1% of the year, and how many tasks each holds.
    let windows: [(low: Double, high: Double)]
    let expected: [Int]
    /// Codes to look up.
    let codes: [String]

    init(count: Int, queries: Int, lookups: Int) {
        tasks = (0..<count).map { TaskValues(number: $0) }
        var random = TaskGenerator(seed: 0xB0B_0001)
        let width = TaskValues.yearLength * 0.01
        windows = (0..<max(1, queries)).map { _ in
            let low = TaskValues.yearStart + random.unit() * (TaskValues.yearLength - width)
            return (low, low + width)
        }
        let tasks = self.tasks
        expected = windows.map { window in
            tasks.reduce(0) { $0 + ($1.due >= window.low && $1.due < window.high ? 1 : 0) }
        }
        var pick = TaskGenerator(seed: 0xC0DE)
        codes = count == 0 ? [] : (0..<lookups).map { _ in tasks[pick.below(count)].code }
    }

    var count: Int { tasks.count }
    /// Tasks per query (the median window's).
    var rowsPerQuery: Int { expected.sorted()[expected.count / 2] }

    private func seconds(_ start: UInt64) -> Double { Double(nanoseconds() - start) / 1e9 }
    private static func median(_ values: [Double]) -> Double {
        let sorted = values.sorted()
        return sorted.count % 2 == 1
            ? sorted[sorted.count / 2] : (sorted[sorted.count / 2 - 1] + sorted[sorted.count / 2]) / 2
    }

    private func descriptor(_ window: (low: Double, high: Double)) -> FetchDescriptor<ComparedTask> {
        let low = Date(timeIntervalSinceReferenceDate: window.low)
        let high = Date(timeIntervalSinceReferenceDate: window.high)
        return FetchDescriptor<ComparedTask>(
            predicate: #Predicate { $0.due >= low && $0.due < high }, sortBy: [SortDescriptor(\.due)])
    }

    private func check(_ found: Int, _ query: Int, _ what: String) throws {
        guard found == expected[query] else {
            throw ComparisonError("\(what): range query \(query) returned \(found) of \(expected[query]) tasks")
        }
    }

    func runLogStore(directory: String) throws -> PeerRun {
        var result = PeerRun()
        var objects = try ObjectStore.open(at: directory, types: [ComparedTask.self])
        let context = objects.makeContext()
        var start = nanoseconds()
        for offset in stride(from: 0, to: count, by: 1_000) {
            for values in tasks[offset..<min(offset + 1_000, count)] { try context.insert(ComparedTask(values)) }
            try context.save()
        }
        // The index work the background queue still has for these saves is part of their time.
        while objects.indexBacklog > 0 { usleep(100) }
        result.values["taskInserts"] = Double(count) / seconds(start)
        try objects.close()
        result.values["taskBytes"] = Double(directorySize(directory).logical)

        // A new process's first query: the open, then the indexes built from the records.
        start = nanoseconds()
        objects = try ObjectStore.open(at: directory, types: [ComparedTask.self])
        try check(try objects.makeContext().fetch(descriptor(windows[0])).count, 0, "LogStore")
        result.values["taskFirstQuery"] = seconds(start) * 1e3

        var cold: [Double] = []
        var warm: [Double] = []
        for (query, window) in windows.enumerated() {
            // A new context: every task decoded. Then the same query again in it: the tasks are loaded.
            let context = objects.makeContext()
            start = nanoseconds()
            let found = try context.fetch(descriptor(window))
            cold.append(seconds(start))
            try check(found.count, query, "LogStore")
            start = nanoseconds()
            let again = try context.fetch(descriptor(window))
            warm.append(seconds(start))
            try check(again.count, query, "LogStore")
            withExtendedLifetime(found) {}
        }
        result.values["taskRange"] = 1 / Self.median(cold)
        result.values["taskRangeWarm"] = 1 / Self.median(warm)

        let lookups = objects.makeContext()
        for code in codes.prefix(1_000) {
            _ = try lookups.fetchIDs(FetchDescriptor<ComparedTask>(predicate: #Predicate { $0.code == code }))
        }
        start = nanoseconds()
        var found = 0
        for code in codes {
            found += try lookups.fetchIDs(FetchDescriptor<ComparedTask>(predicate: #Predicate { $0.code == code }))
                .count
        }
        result.values["taskLookupsPredicate"] = Double(codes.count) / seconds(start)
        guard found == codes.count else { throw ComparisonError("LogStore: \(found) of \(codes.count) codes found") }
        start = nanoseconds()
        found = 0
        for code in codes where try lookups.fetchUniqueID(ComparedTask.self, where: \.code, equals: code) != nil {
            found += 1
        }
        result.values["taskLookups"] = Double(codes.count) / seconds(start)
        guard found == codes.count else { throw ComparisonError("LogStore: \(found) of \(codes.count) codes found") }
        try objects.close()
        return result
    }

    private static let select = "SELECT \(TaskRow.columns) FROM task WHERE due >= ? AND due < ? ORDER BY due"

    /// WAL with `synchronous = FULL`, as the key-value rows.
    private func openPool(_ path: String) throws -> DatabasePool {
        let pool = try DatabasePool(path: path)
        let level = try pool.writeWithoutTransaction { db in
            try db.execute(sql: "PRAGMA synchronous = FULL")
            return try Int.fetchOne(db, sql: "PRAGMA synchronous")
        }
        guard level == 2 else { throw ComparisonError("SQLite synchronous is \(level ?? -1), not FULL (2)") }
        return pool
    }

    func runGRDB(directory: String) throws -> PeerRun {
        var result = PeerRun()
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        let path = directory + "/tasks.sqlite"
        var pool = try openPool(path)
        try pool.write { db in
            try db.execute(
                sql: """
                    CREATE TABLE task (id INTEGER PRIMARY KEY, title TEXT NOT NULL, code TEXT NOT NULL,
                        due REAL NOT NULL, priority INTEGER NOT NULL, done INTEGER NOT NULL);
                    CREATE UNIQUE INDEX task_code ON task(code);
                    CREATE INDEX task_due ON task(due);
                    """)
        }
        var start = nanoseconds()
        for offset in stride(from: 0, to: count, by: 1_000) {
            try pool.write { db in
                let insert = try db.cachedStatement(
                    sql: "INSERT INTO task (title, code, due, priority, done) VALUES (?, ?, ?, ?, ?)")
                for values in tasks[offset..<min(offset + 1_000, count)] {
                    try insert.execute(arguments: [values.title, values.code, values.due, values.priority, values.done])
                }
            }
        }
        result.values["taskInserts"] = Double(count) / seconds(start)
        try pool.close()
        result.values["taskBytes"] = Double(directorySize(directory).logical)

        start = nanoseconds()
        pool = try openPool(path)
        let first = try pool.read { db in
            try TaskRow.fetchAll(db.cachedStatement(sql: Self.select), arguments: [windows[0].low, windows[0].high])
        }
        result.values["taskFirstQuery"] = seconds(start) * 1e3
        try check(first.count, 0, "SQLite")

        var cold: [Double] = []
        var warm: [Double] = []
        for (query, window) in windows.enumerated() {
            for round in 0..<2 {
                start = nanoseconds()
                let rows = try pool.read { db in
                    try TaskRow.fetchAll(db.cachedStatement(sql: Self.select), arguments: [window.low, window.high])
                }
                round == 0 ? cold.append(seconds(start)) : warm.append(seconds(start))
                try check(rows.count, query, "SQLite")
            }
        }
        result.values["taskRange"] = 1 / Self.median(cold)
        result.values["taskRangeWarm"] = 1 / Self.median(warm)

        // Lookups in read transactions of 1,000, as the gets of the key-value rows.
        func lookUp(_ codes: ArraySlice<String>) throws -> Int {
            try pool.read { db in
                let statement = try db.cachedStatement(sql: "SELECT id FROM task WHERE code = ?")
                var found = 0
                for code in codes where try Int64.fetchOne(statement, arguments: [code]) != nil { found += 1 }
                return found
            }
        }
        _ = try lookUp(codes.prefix(1_000))
        start = nanoseconds()
        var found = 0
        for offset in stride(from: 0, to: codes.count, by: 1_000) {
            found += try lookUp(codes[offset..<min(offset + 1_000, codes.count)])
        }
        result.values["taskLookups"] = Double(codes.count) / seconds(start)
        // SQLite has one way to look up: the same statement answers both rows.
        result.values["taskLookupsPredicate"] = result.values["taskLookups"]
        guard found == codes.count else { throw ComparisonError("SQLite: \(found) of \(codes.count) codes found") }
        try pool.close()
        return result
    }
}
