import BenchmarkSupport
import Foundation
import GRDB
import LogStore
import LogStoreExamples
import LogStoreObjects
import PeerWorkloads

/// The drawing object graph (pages × 10 layers × 20 shapes, a layer shared by two pages) saved in one
/// save and loaded cold: through LogStoreObjects, and as GRDB Codable records (a table per class).
struct ObjectGraphWorkload {
    let pages: Int

    private func seconds(_ start: UInt64) -> Double { Double(nanoseconds() - start) / 1e9 }

    /// Objects in the graph.
    var objectCount: Int { ScaledDrawing(pages: pages, layersPerPage: 10, shapesPerLayer: 20).objectCount }

    /// Save (objects/s), cold load (fresh open and context, objects/s), bytes on disk.
    func runLogStore(directory: String) throws -> PeerRun {
        var result = PeerRun()
        let drawing = ScaledDrawing(pages: pages, layersPerPage: 10, shapesPerLayer: 20)
        let objects = try ObjectStore.open(at: directory, types: drawingTypes)
        let context = objects.makeContext()
        try context.setRoot(drawing.contents, named: "main")
        var start = nanoseconds()
        let report = try context.save()
        result.values["graphSave"] = Double(drawing.objectCount) / seconds(start)
        guard report.written == drawing.objectCount else {
            throw ComparisonError("saved \(report.written) of \(drawing.objectCount) objects")
        }
        try objects.close()
        result.values["graphBytes"] = Double(directorySize(directory).logical)

        start = nanoseconds()
        let reopened = try ObjectStore.open(at: directory, types: drawingTypes)
        let contents = try reopened.makeContext().root(named: "main", as: Contents.self)
        result.values["graphLoad"] = Double(drawing.objectCount) / seconds(start)
        let reached = ScaledDrawing.reachableCount(contents)
        guard reached == drawing.objectCount else {
            throw ComparisonError("loaded \(reached) of \(drawing.objectCount) objects")
        }
        try reopened.close()
        return result
    }

    func runGRDB(directory: String) throws -> PeerRun {
        var result = PeerRun()
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        let path = directory + "/drawing.sqlite"
        let drawing = ScaledDrawing(pages: pages, layersPerPage: 10, shapesPerLayer: 20)
        var queue: DatabaseQueue? = try DatabaseQueue(path: path)
        // SQLite's defaults: a rollback journal, `synchronous = FULL` (every commit synced).
        let synchronous = try queue?.read { try Int.fetchOne($0, sql: "PRAGMA synchronous") }
        guard synchronous == 2 else { throw ComparisonError("GRDB drawing: synchronous is not FULL") }
        try queue?.write { try GRDBDrawing.createSchema($0) }
        var start = nanoseconds()
        let saved = try queue.map { try GRDBDrawing.save(drawing.contents, in: $0) } ?? 0
        result.values["graphSave"] = Double(saved) / seconds(start)
        try queue?.close()
        queue = nil
        result.values["graphBytes"] = Double(directorySize(directory).logical)

        start = nanoseconds()
        let reopened = try DatabaseQueue(path: path)
        let (contents, built) = try GRDBDrawing.load(from: reopened)
        result.values["graphLoad"] = Double(built) / seconds(start)
        guard built == saved, contents.pages.count == pages else {
            throw ComparisonError("GRDB loaded \(built) of \(saved) objects")
        }
        try reopened.close()
        return result
    }
}

/// Path tables (`feeds.feedT.settingK`): the ODB against one SQLite table
/// `node(parent, key COLLATE NOCASE, kind, value)`. Sets table by table in transactions of 1,000,
/// random warm reads of a value by path, bytes on disk.
struct PathTableComparison {
    let workload: PathTableWorkload
    let reads: Int

    private func seconds(_ start: UInt64) -> Double { Double(nanoseconds() - start) / 1e9 }

    private var samplePaths: [(Int, Int)] {
        var random = SplitMix64(seed: 0x0DB0_0DB0)
        return (0..<reads).map { _ in (random.below(workload.tableCount), random.below(workload.valuesPerTable)) }
    }

    func runODB(directory: String) throws -> PeerRun {
        var result = PeerRun()
        let odb = try ODB.open(at: directory)
        var start = nanoseconds()
        var pending: [(Int, Int)] = []
        func flush() throws {
            try odb.transaction { tx in
                for (table, key) in pending {
                    try tx.setValue(workload.value(table, key), at: workload.path(table, key))
                }
            }
            pending.removeAll(keepingCapacity: true)
        }
        for table in 0..<workload.tableCount {
            for key in 0..<workload.valuesPerTable {
                pending.append((table, key))
                if pending.count == 1_000 { try flush() }
            }
        }
        if !pending.isEmpty { try flush() }
        result.values["pathSets"] = Double(workload.total) / seconds(start)
        let paths = samplePaths.map { workload.path($0.0, $0.1) }
        for path in paths where try odb.value(at: path) == nil { throw ComparisonError("ODB: \(path) missing") }
        start = nanoseconds()
        var found = 0
        for path in paths where try odb.value(at: path) != nil { found += 1 }
        result.values["pathReads"] = Double(found) / seconds(start)
        try odb.close()
        result.values["pathBytes"] = Double(directorySize(directory).logical)
        return result
    }

    func runSQLite(directory: String) throws -> PeerRun {
        var result = PeerRun()
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        let sqlite = try SQLitePathTable(path: directory + "/odb.sqlite")
        var start = nanoseconds()
        try sqlite.setAll(workload, transactionSize: 1_000)
        result.values["pathSets"] = Double(workload.total) / seconds(start)
        let paths = samplePaths.map { workload.path($0.0, $0.1) }
        let found = try sqlite.queue.read { db in
            for path in paths where try SQLitePathTable.value(at: path, in: db) == nil {
                throw ComparisonError("SQLite: \(path) missing")
            }
            start = nanoseconds()
            var found = 0
            for path in paths where try SQLitePathTable.value(at: path, in: db) != nil { found += 1 }
            return found
        }
        result.values["pathReads"] = Double(found) / seconds(start)
        try sqlite.close()
        result.values["pathBytes"] = Double(directorySize(directory).logical)
        return result
    }
}
