// LogStore, SQLite (through GRDB), LMDB, RocksDB and LevelDB side by side: the same deterministic data and workloads,
// the same durability, medians of several repetitions. Writes comparison.md, comparison.json and
// comparison.svg to the output directory. Run from Benchmarks/ (scripts/compare.sh installs the
// peers' Debian packages and runs it):
//
//   swift run -c release Comparison [--runs 3] [--objects 200000] [--lengths 100-220] [--gets 1000000]
//       [--reopen-objects 1000000] [--pages 500] [--tables 1000] [--values 100] [--path-reads 200000]
//       [--small-tasks 100000] [--tasks 1000000] [--task-queries 7] [--task-lookups 100000] [--only-queries]
//       [--output results] [--directory /tmp] [--commit SHA] [--quick]
//
// `--only-queries` runs the indexed-query rows alone (tasks; `--tasks 0` leaves them out), `--only-objects`
// the object graph and the small tasks alone.

import BenchmarkSupport
import Foundation
import LogStore
import PeerWorkloads

let arguments = CommandLine.arguments
func option(_ name: String) -> String? {
    guard let index = arguments.firstIndex(of: name), index + 1 < arguments.count else { return nil }
    return arguments[index + 1]
}
func number(_ name: String, _ fallback: Int) -> Int { option(name).flatMap { Int($0) } ?? fallback }

let quick = arguments.contains("--quick")
let runs = number("--runs", quick ? 1 : 3)
var parameters = KeyValueParameters()
parameters.objects = number("--objects", quick ? 20_000 : 200_000)
if let lengths = option("--lengths"), let dash = lengths.firstIndex(of: "-"),
    let low = Int(lengths[..<dash]), let high = Int(lengths[lengths.index(after: dash)...]), low <= high
{
    parameters.lengths = low...high
}
parameters.gets = number("--gets", quick ? 100_000 : 1_000_000)
if quick {
    parameters.singleCommits = 200
    parameters.commitsPerWriter = 50
    parameters.mixedOperationsPerThread = 5_000
}
let reopenObjects = number("--reopen-objects", quick ? 100_000 : 1_000_000)
let pages = number("--pages", quick ? 20 : 500)
let pathWorkload = PathTableWorkload(
    tableCount: number("--tables", quick ? 100 : 1_000), valuesPerTable: number("--values", 100))
let pathReads = number("--path-reads", quick ? 20_000 : 200_000)
let taskCount = number("--tasks", quick ? 20_000 : 1_000_000)
let smallTaskCount = number("--small-tasks", quick ? 10_000 : 100_000)
let taskQueries = max(1, number("--task-queries", 7))
let taskLookups = number("--task-lookups", quick ? 10_000 : 100_000)
let onlyQueries = arguments.contains("--only-queries")
/// `--only-objects`: the object graph and the small tasks alone.
let onlyObjects = arguments.contains("--only-objects")
let keyValueRows = !onlyQueries && !onlyObjects
let outputDirectory = option("--output") ?? "results"
let workRoot = option("--directory") ?? "/tmp"
let commit = option("--commit") ?? ProcessInfo.processInfo.environment["LOGSTORE_COMMIT"] ?? "unknown"
let peers = PeerKind.allCases
/// Where the reopen stores are kept (and reused when present) instead of a scratch directory.
let reopenStoreRoot = option("--reopen-store")

// `--put-loop DIR`: batched puts of the data set into a new LogStore store in DIR, and nothing else
// (for profiling).
if let path = option("--put-loop") {
    let data = DataSet(count: parameters.objects, lengths: parameters.lengths, reads: 1)
    let peer = try LogStorePeer(directory: path, count: data.count)
    let keys = Array(0..<data.count)
    let start = nanoseconds()
    for offset in stride(from: 0, to: data.count, by: parameters.batchSize) {
        let batch = keys[offset..<min(offset + parameters.batchSize, data.count)]
        try peer.writeBatch(keys: batch, records: batch.map { data.records[$0] }, fresh: true)
    }
    print(String(format: "%.0f puts/s", Double(data.count) * 1e9 / Double(nanoseconds() - start)))
    try peer.close()
    exit(0)
}

// `--open-loop DIR N`: open the LogStore store in DIR N times and print the median (for profiling).
if let path = option("--open-loop") {
    let count = arguments.last.flatMap { Int($0) } ?? 20
    var times: [Double] = []
    for _ in 0..<count {
        let start = nanoseconds()
        let store = try Store.open(at: path)
        times.append(Double(nanoseconds() - start) / 1e6)
        try store.close()
    }
    print(String(format: "open of %@: median %.1f ms over %d opens", path, Samples(values: times).median, count))
    exit(0)
}

func progress(_ text: String) {
    FileHandle.standardError.write(Data((text + "\n").utf8))
}

/// A fresh directory under `workRoot`, removed by `body`'s end.
func withScratch<T>(_ body: (TemporaryDirectory) throws -> T) throws -> T {
    let scratch = TemporaryDirectory(prefix: "logstore-comparison", root: workRoot)
    defer { scratch.remove() }
    return try body(scratch)
}

/// The figures: key, title, unit, higher is better.
let definitions: [(String, String, FigureUnit, Bool)] = [
    ("puts", "Batched puts (1,000 per transaction)", .perSecond, true),
    ("putsCPU", "Batched puts: CPU per put, close included (all threads)", .microseconds, false),
    ("gets1", "Random gets, 1 thread", .perSecond, true),
    ("gets1CPU", "Random gets, 1 thread: CPU per get", .microseconds, false),
    ("gets2", "Random gets, 2 threads", .perSecond, true),
    ("commits1", "Durable single-record commits, 1 thread", .perSecond, true),
    ("commits8", "Durable single-record commits, \(parameters.writers) threads", .perSecond, true),
    ("mixed", "Mixed 90% get / 10% commit, 2 threads", .perSecond, true),
    ("overwrite", "Overwrite all records \(parameters.overwriteRounds)× (batches of 1,000)", .perSecond, true),
    ("overwriteCPU", "Overwrite: CPU per record written, close included (all threads)", .microseconds, false),
    // LogStore's background compaction reclaims most of it during the overwrites (their time includes
    // it); its `compact()` here does what is left.
    ("reclaim", "Reclaim space after the overwrites (LogStore: what background compaction left)", .seconds, false),
    ("bytesFresh", "Bytes on disk, fresh", .bytes, false),
    ("bytesOverwritten", "Bytes on disk after the overwrites", .bytes, false),
    ("bytesReclaimed", "Bytes on disk after reclaiming", .bytes, false),
    ("reopen", "Reopen + one get, \(grouped(parameters.objects)) records", .milliseconds, false),
    ("reopen1M", "Reopen + one get, \(grouped(reopenObjects)) records", .milliseconds, false),
    ("graphSave", "Object graph: save", .perSecond, true),
    ("graphLoad", "Object graph: open + cold load", .perSecond, true),
    ("graphBytes", "Object graph: bytes on disk", .bytes, false),
    ("smallTaskSave", "Small tasks with tags: saves of 1,000", .perSecond, true),
    ("smallTaskLoad", "Small tasks with tags: open + cold load", .perSecond, true),
    ("smallTaskBytes", "Small tasks with tags: bytes on disk", .bytes, false),
    ("smallTaskPayload", "Small tasks with tags: object payloads (LogStore, before compression)", .bytes, false),
    ("pathSets", "Path tables: sets (transactions of 1,000)", .perSecond, true),
    ("pathReads", "Path tables: random reads by path", .perSecond, true),
    ("pathBytes", "Path tables: bytes on disk", .bytes, false),
    ("taskInserts", "Tasks: inserts, due and unique code indexed (1,000 per transaction)", .perSecond, true),
    ("taskFirstQuery", "Tasks: open + first range query (LogStore builds its indexes)", .milliseconds, false),
    ("taskRange", "Tasks: range query on due, 1% of the tasks, decoded (LogStore: new context)", .perSecond, true),
    ("taskRangeWarm", "Tasks: the same range query again (LogStore: same context, tasks loaded)", .perSecond, true),
    ("taskLookups", "Tasks: lookups by unique code (ids; LogStore `fetchUniqueID`)", .perSecond, true),
    (
        "taskLookupsPredicate", "Tasks: lookups by unique code (ids; LogStore `fetchIDs` + `#Predicate`)", .perSecond,
        true
    ),
    ("taskBytes", "Tasks: bytes on disk", .bytes, false),
]
var figures: [String: Figure] = [:]
/// Commit latencies of every repetition, by figure key and store.
var latencies: [String: LatencyLog] = [:]
for (key, title, unit, higher) in definitions {
    figures[key] = Figure(key: key, title: title, unit: unit.rawValue, higherIsBetter: higher)
}
@MainActor func record(_ run: PeerRun, for peer: PeerKind) {
    for (key, value) in run.values {
        figures[key]?.samples[peer.rawValue, default: Samples()].values.append(value)
    }
    for (key, values) in run.latencies {
        latencies["\(key) \(peer.rawValue)", default: LatencyLog()].add(values)
        figures[key]?.notes[peer.rawValue] = latencies["\(key) \(peer.rawValue)"]?.summary
    }
}

var payloadBytes = 0
var taskRows = 0
do {
    progress("generating \(grouped(parameters.objects)) records of \(parameters.lengths) bytes")
    let data = DataSet(count: parameters.objects, lengths: parameters.lengths, reads: parameters.gets)
    payloadBytes = data.payloadBytes

    // Warm-up: every key-value workload once on a tenth of the data, not recorded.
    if keyValueRows {
        var warmParameters = parameters
        warmParameters.objects = max(parameters.objects / 10, 2_000)
        warmParameters.gets = max(parameters.gets / 10, 10_000)
        warmParameters.singleCommits = 100
        warmParameters.commitsPerWriter = 20
        warmParameters.mixedOperationsPerThread = 2_000
        let warmData = DataSet(count: warmParameters.objects, lengths: parameters.lengths, reads: warmParameters.gets)
        for peer in peers {
            progress("warm-up: \(peer.rawValue)")
            _ = try withScratch {
                try KeyValueWorkloads(parameters: warmParameters, data: warmData).run(
                    peer, directory: $0.child("store"))
            }
        }
    }

    // The key-value workloads, each repetition in a rotated order of stores.
    let workloads = KeyValueWorkloads(parameters: parameters, data: data)
    for repetition in 0..<runs where keyValueRows {
        for offset in 0..<peers.count {
            let peer = peers[(repetition + offset) % peers.count]
            progress("key-value workloads, repetition \(repetition + 1) of \(runs): \(peer.rawValue)")
            record(try withScratch { try workloads.run(peer, directory: $0.child("store")) }, for: peer)
        }
    }

    // Reopen of a larger store.
    if reopenObjects > 0 && keyValueRows {
        for peer in peers {
            progress("reopen of \(grouped(reopenObjects)) records: \(peer.rawValue)")
            let opens: [Double]
            if let root = reopenStoreRoot {
                let directory = root + "/" + peer.rawValue.filter { $0.isLetter }
                opens = try workloads.reopenTimes(peer, objects: reopenObjects, directory: directory)
            } else {
                opens = try withScratch { scratch in
                    try workloads.reopenTimes(peer, objects: reopenObjects, directory: scratch.child("store"))
                }
            }
            figures["reopen1M"]?.samples[peer.rawValue] = Samples(values: opens)
        }
    }

    // The object graph: LogStoreObjects against GRDB Codable records.
    if pages > 0 && !onlyQueries {
        let graph = ObjectGraphWorkload(pages: pages)
        for repetition in 0..<runs {
            progress("object graph (\(grouped(graph.objectCount)) objects), repetition \(repetition + 1) of \(runs)")
            record(try withScratch { try graph.runLogStore(directory: $0.child("objects")) }, for: .logStore)
            record(try withScratch { try graph.runGRDB(directory: $0.child("grdb")) }, for: .sqlite)
        }
    }

    // Small records: tasks with tags, LogStoreObjects against SQLite tables.
    if smallTaskCount > 0 && !onlyQueries {
        let small = SmallTaskWorkload(count: smallTaskCount)
        for repetition in 0..<runs {
            progress("small tasks (\(grouped(smallTaskCount))), repetition \(repetition + 1) of \(runs)")
            let order: [PeerKind] = repetition % 2 == 0 ? [.logStore, .sqlite] : [.sqlite, .logStore]
            for peer in order {
                if peer == .logStore {
                    record(try withScratch { try small.runLogStore(directory: $0.child("small")) }, for: .logStore)
                } else {
                    record(try withScratch { try small.runGRDB(directory: $0.child("small-grdb")) }, for: .sqlite)
                }
            }
        }
    }

    // Path tables: the ODB against SQLite.
    if pathWorkload.tableCount > 0 && keyValueRows {
        let paths = PathTableComparison(workload: pathWorkload, reads: pathReads)
        for repetition in 0..<runs {
            progress("path tables (\(grouped(pathWorkload.total)) values), repetition \(repetition + 1) of \(runs)")
            record(try withScratch { try paths.runODB(directory: $0.child("odb")) }, for: .logStore)
            record(try withScratch { try paths.runSQLite(directory: $0.child("sqlite")) }, for: .sqlite)
        }
    }

    // Indexed queries: LogStoreObjects against SQLite with CREATE INDEX, the stores in alternating order.
    if taskCount > 0 && !onlyObjects {
        progress("generating \(grouped(taskCount)) tasks")
        let tasks = TaskQueryWorkload(count: taskCount, queries: taskQueries, lookups: taskLookups)
        let warmTasks = TaskQueryWorkload(count: max(taskCount / 20, 1_000), queries: 2, lookups: 1_000)
        progress("warm-up: tasks")
        _ = try withScratch { try warmTasks.runLogStore(directory: $0.child("tasks")) }
        _ = try withScratch { try warmTasks.runGRDB(directory: $0.child("tasks-grdb")) }
        for repetition in 0..<runs {
            progress("tasks (\(grouped(taskCount))), repetition \(repetition + 1) of \(runs)")
            let order: [PeerKind] = repetition % 2 == 0 ? [.logStore, .sqlite] : [.sqlite, .logStore]
            for peer in order {
                if peer == .logStore {
                    record(try withScratch { try tasks.runLogStore(directory: $0.child("tasks")) }, for: .logStore)
                } else {
                    record(try withScratch { try tasks.runGRDB(directory: $0.child("tasks-grdb")) }, for: .sqlite)
                }
            }
        }
        taskRows = tasks.rowsPerQuery
    }
} catch {
    progress("comparison failed: \(error)")
    exit(1)
}

let ordered = definitions.compactMap { figures[$0.0] }.filter { !$0.samples.isEmpty }
let payloadMB = Double(payloadBytes) / 1e6
let recordsText =
    "\(grouped(parameters.objects)) JSON-like records of \(parameters.lengths.lowerBound)–\(parameters.lengths.upperBound) "
    + "bytes (\(String(format: "%.1f", payloadMB)) MB of payload), 4 types, no references; the same bytes for every store"
let repetitionsText =
    "\(runs), each store in a fresh directory, stores in rotated order, after an untimed warm-up on a tenth of the data"
let getsText =
    "\(grouped(parameters.gets)) uniformly random keys, after one untimed pass over every key; read transactions of "
    + "\(parameters.readTransactionSize) gets (a `Snapshot` in LogStore); every value copied out"
let commitsText =
    "\(grouped(parameters.singleCommits)) on one thread, \(parameters.commitsPerWriter) on each of \(parameters.writers) "
    + "threads; each replaces one record in a transaction of its own"
let graphText = "\(pages) pages × 10 layers × 20 shapes, one save; load = open + fresh context + whole graph"
let smallTaskText =
    "\(grouped(smallTaskCount)) tasks (a title of 8–30 bytes, done, priority) carrying 0–3 of "
    + "\(SmallTaskValues.tagCount) shared tags, saved in saves of 1,000; load = open + fresh context + every task "
    + "and its tags; LogStore: `@Persistent` classes; SQLite: `task`, `tag` and a `taskTag` join table, WAL, "
    + "`synchronous = FULL`"
let pathText =
    "\(grouped(pathWorkload.tableCount)) tables × \(pathWorkload.valuesPerTable) values, \(grouped(pathReads)) random reads"
let tasksText =
    "\(grouped(taskCount)) tasks (title, unique code, due over a year, priority, done), indexes on due and code; "
    + "\(taskQueries) range queries of 1% (\(grouped(taskRows)) rows each, sorted by due, every row decoded); "
    + "\(grouped(taskLookups)) lookups by code; LogStore: `@Persistent` class, `FetchDescriptor` + `#Predicate`, `fetchUniqueID`; "
    + "SQLite: `task` table, `CREATE INDEX` on due, `CREATE UNIQUE INDEX` on code, rows decoded into structs "
    + "(`FetchableRecord`, columns by position), each query in a read of its own, lookups in reads of 1,000"
var describedParameters: [String: String] = [
    "Records": recordsText, "Repetitions": repetitionsText, "Gets": getsText, "Commits": commitsText,
    "Object graph": graphText, "Path tables": pathText,
]
if smallTaskCount > 0 { describedParameters["Small tasks"] = smallTaskText }
if taskCount > 0 { describedParameters["Tasks"] = tasksText }
if onlyQueries { describedParameters = describedParameters.filter { $0.key == "Tasks" } }
if onlyObjects {
    describedParameters = describedParameters.filter { ["Object graph", "Small tasks"].contains($0.key) }
}
let report = ComparisonReport(
    machine: MachineInfo.current(workDirectory: workRoot, commit: commit),
    command: "scripts/compare.sh " + arguments.dropFirst().joined(separator: " "),
    parameters: describedParameters,
    durability: Dictionary(uniqueKeysWithValues: peers.map { ($0.rawValue, $0.durability) }),
    setup: Dictionary(uniqueKeysWithValues: peers.map { ($0.rawValue, $0.setup) }),
    figures: ordered,
    floors: FloorCheck.all(figures: figures, payloadBytes: Double(payloadBytes), reopenCount: reopenObjects))

do {
    try FileManager.default.createDirectory(atPath: outputDirectory, withIntermediateDirectories: true)
    let encoder = JSONEncoder()
    encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
    try encoder.encode(report).write(to: URL(fileURLWithPath: outputDirectory + "/comparison.json"))
    let names = peers.map(\.rawValue)
    let markdown = MarkdownReport(report: report, peers: names).text
    try Data(markdown.utf8).write(to: URL(fileURLWithPath: outputDirectory + "/comparison.md"))
    try Data(ComparisonChart(report: report, peers: names).svg.utf8)
        .write(to: URL(fileURLWithPath: outputDirectory + "/comparison.svg"))
    print(markdown)
} catch {
    progress("writing the results failed: \(error)")
    exit(1)
}
