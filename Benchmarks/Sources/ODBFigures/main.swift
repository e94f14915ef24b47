// The ODB (issue 12) against its floors, and the same workload on SQLite through GRDB. Run from
// Benchmarks/:
//
//   swift run -c release ODBFigures                       # 10,000 tables × 100 values
//   swift run -c release ODBFigures --tables 1000         # smaller
//   swift run -c release ODBFigures --skip-sqlite
//
// Workload: 1,000,000 values (short strings and ints, alternating, as settings and feed metadata are)
// at feeds.feedT.settingK, T < 10,000, K < 100, set table by table in transactions of 1,000 sets.
// Both stores sync every commit (LogStore `.always`; SQLite WAL, synchronous FULL).

import BenchmarkSupport
import Foundation
import GRDB
import LogStore
import LogStoreObjects
import PeerWorkloads

let arguments = CommandLine.arguments
func option(_ name: String, _ fallback: Int) -> Int {
    guard let index = arguments.firstIndex(of: name), index + 1 < arguments.count else { return fallback }
    return Int(arguments[index + 1]) ?? fallback
}
let tableCount = option("--tables", 10_000)
let valuesPerTable = option("--values", 100)
let transactionSize = 1_000
let readCount = option("--reads", 1_000_000)
let coldReadCount = option("--cold-reads", 200_000)
let skipSQLite = arguments.contains("--skip-sqlite")
let workload = PathTableWorkload(tableCount: tableCount, valuesPerTable: valuesPerTable)
let total = workload.total
func value(_ table: Int, _ key: Int) -> ODBValue { workload.value(table, key) }
func rate(_ count: Int, _ nanos: UInt64) -> String {
    String(format: "%.0f/s", Double(count) * 1e9 / Double(nanos))
}
func mb(_ bytes: Int) -> String { String(format: "%.1f MB", Double(bytes) / 1e6) }
/// Bytes in the store's segments (written bytes, not the space the active segment reserves ahead).
func segmentBytes(_ store: Store) throws -> Int {
    Int(try store.statistics().segments.reduce(0) { $0 + $1.bytes })
}

var random = SystemRandomNumberGenerator()
let samples = (0..<max(readCount, coldReadCount)).map { _ in
    (Int.random(in: 0..<tableCount, using: &random), Int.random(in: 0..<valuesPerTable, using: &random))
}
let tableNames = workload.tableNames
let keyNames = workload.keyNames
let paths = samples.map { workload.path($0.0, $0.1) }
let raw = workload.rawTotal

print("ODB figures: \(tableCount) tables × \(valuesPerTable) values = \(total) values, raw key+value bytes \(mb(raw))")

let scratch = TemporaryDirectory(prefix: "logstore-odb-figures")
defer { scratch.remove() }
let directory = scratch.child("odb")
var storeOptions = StoreOptions()
storeOptions.compaction.background = false

// 1. Sets in transactions of 1,000.
var odb = try ODB.open(at: directory, options: storeOptions, cacheBudget: 4 << 30)
var start = nanoseconds()
var pending: [(Int, Int)] = []
for table in 0..<tableCount {
    for key in 0..<valuesPerTable {
        pending.append((table, key))
        if pending.count == transactionSize {
            try odb.transaction { tx in
                for (t, k) in pending { try tx.setValue(value(t, k), at: ["feeds", tableNames[t], keyNames[k]]) }
            }
            pending.removeAll(keepingCapacity: true)
        }
    }
}
if !pending.isEmpty {
    try odb.transaction { tx in
        for (t, k) in pending { try tx.setValue(value(t, k), at: ["feeds", tableNames[t], keyNames[k]]) }
    }
}
var elapsed = nanoseconds() - start
print("ODB sets, transactions of \(transactionSize): \(rate(total, elapsed)) (floor 300,000/s)")
let beforeCompaction = try segmentBytes(odb.store)
try odb.store.compact()
let afterCompaction = try segmentBytes(odb.store)
print(
    "ODB bytes on disk: \(mb(beforeCompaction)) before compaction, \(mb(afterCompaction)) after = "
        + String(format: "%.2f× raw (floor 2×)", Double(afterCompaction) / Double(raw)))

// 2. Random reads, warm.
var found = 0
for path in paths.prefix(readCount) where try odb.value(at: path) != nil { found += 1 }
start = nanoseconds()
found = 0
for path in paths.prefix(readCount) where try odb.value(at: path) != nil { found += 1 }
elapsed = nanoseconds() - start
precondition(found == readCount)
print("ODB random value(at:), warm: \(rate(readCount, elapsed)) (floor 1,000,000/s)")
start = nanoseconds()
found = 0
for batch in stride(from: 0, to: readCount, by: 1_000) {
    try odb.read { view in
        for path in paths[batch..<min(batch + 1_000, readCount)] where try view.value(at: path) != nil { found += 1 }
    }
}
elapsed = nanoseconds() - start
precondition(found == readCount)
print("ODB random value(at:), warm, 1,000 per read closure (one snapshot): \(rate(readCount, elapsed))")

// 3. Reopen and first deep read, against opening the store alone (best of 3 each, alternating).
try odb.setValue("deep", at: ["a", "b", "c", "d", "e", "f", "g", "h", "i", "value"])
try odb.close()
var storeOpen = UInt64.max
var odbOpen = UInt64.max
for _ in 0..<3 {
    start = nanoseconds()
    let plain = try Store.open(at: directory, options: storeOptions)
    storeOpen = min(storeOpen, nanoseconds() - start)
    try plain.close()
    start = nanoseconds()
    let reopened = try ODB.open(at: directory, options: storeOptions)
    let first = try reopened.value(at: ["a", "b", "c", "d", "e", "f", "g", "h", "i", "value"])
    odbOpen = min(odbOpen, nanoseconds() - start)
    precondition(first == .string("deep"))
    try reopened.close()
}
print(
    String(
        format: "ODB reopen + first read of a value 10 tables deep: %.1f ms; store open alone: %.1f ms; "
            + "difference %.1f ms (floor 50 ms)",
        Double(odbOpen) / 1e6, Double(storeOpen) / 1e6, (Double(odbOpen) - Double(storeOpen)) / 1e6))
odb = try ODB.open(at: directory, options: storeOptions, cacheBudget: 4 << 30)

// 4. Random reads, cold (fresh open: every table decoded on first use).
start = nanoseconds()
found = 0
for path in paths.prefix(coldReadCount) where try odb.value(at: path) != nil { found += 1 }
elapsed = nanoseconds() - start
precondition(found == coldReadCount)
print(
    "ODB random value(at:), cold (\(coldReadCount) reads after reopening): \(rate(coldReadCount, elapsed)) (floor 200,000/s)"
)

// 4b. Sets in random order (each transaction of 1,000 touches ~1,000 different tables, each rewritten
// whole): the worst case for one record per table.
let randomSets = min(100_000, total)
start = nanoseconds()
for batch in stride(from: 0, to: randomSets, by: transactionSize) {
    try odb.transaction { tx in
        for (t, k) in samples[batch..<min(batch + transactionSize, randomSets)] {
            try tx.setValue(value(t, k), at: ["feeds", tableNames[t], keyNames[k]])
        }
    }
}
elapsed = nanoseconds() - start
print("ODB sets in random order over all tables, transactions of \(transactionSize): \(rate(randomSets, elapsed))")

// 5. Bytes written per set in a table of 100,000 children.
try odb.transaction { tx in
    for index in 0..<50_000 { try tx.setValue(.string("value \(index)"), at: ["big", "key\(index)"]) }
}
try odb.transaction { tx in
    for index in 50_000..<100_000 { try tx.setValue(.string("value \(index)"), at: ["big", "key\(index)"]) }
}
let records = try odb.store.count()
let bigBefore = try segmentBytes(odb.store)
let singleSets = 1_000
start = nanoseconds()
for _ in 0..<singleSets {
    let index = Int.random(in: 0..<100_000, using: &random)
    try odb.setValue(.string("changed \(index)"), at: ["big", "key\(index)"])
}
elapsed = nanoseconds() - start
let bigAfter = try segmentBytes(odb.store)
print(
    "ODB one setValue in a table of 100,000 children: \((bigAfter - bigBefore) / singleSets) bytes written per set, "
        + "\(try odb.store.count() - records) records more after \(singleSets) sets, \(rate(singleSets, elapsed)) durable single sets"
)
try odb.close()

// 6. SQLite: one table (parent, key COLLATE NOCASE, kind, value), WAL, synchronous FULL.
if !skipSQLite {
    let path = scratch.child("odb.sqlite")
    let sqlite = try SQLitePathTable(path: path)
    start = nanoseconds()
    try sqlite.setAll(workload, transactionSize: transactionSize)
    elapsed = nanoseconds() - start
    print("SQLite sets, transactions of \(transactionSize): \(rate(total, elapsed))")
    let queue = sqlite.queue
    try queue.read { db in
        for path in paths.prefix(readCount) { _ = try SQLitePathTable.value(at: path, in: db) }
        start = nanoseconds()
        found = 0
        for path in paths.prefix(readCount) where try SQLitePathTable.value(at: path, in: db) != nil { found += 1 }
        elapsed = nanoseconds() - start
    }
    print("SQLite random reads of a path, warm: \(rate(readCount, elapsed))")
    try queue.close()
    let size = ["", "-wal", "-shm"].reduce(0) { sum, suffix in
        let attributes = try? FileManager.default.attributesOfItem(atPath: path + suffix)
        return sum + ((attributes?[.size] as? NSNumber)?.intValue ?? 0)
    }
    print("SQLite bytes on disk: \(mb(size)) = " + String(format: "%.2f× raw", Double(size) / Double(raw)))
}
