// Figures for the object layer (issue 4): the drawing model scaled up, saved and loaded through
// LogStoreObjects, and the same model stored as GRDB Codable records. Run:
//   cd Benchmarks && swift run -c release ObjectFigures [--pages 1000] [--runs 3] [--skip-codable] [--skip-grdb] [--skip-random] [--keep DIR]
import BenchmarkSupport
import Foundation
import GRDB
import LogStore
import LogStoreExamples
import LogStoreObjects
import PeerWorkloads

let arguments = CommandLine.arguments
func option(_ name: String, _ fallback: Int) -> Int {
    guard let index = arguments.firstIndex(of: name), index + 1 < arguments.count else { return fallback }
    return Int(arguments[index + 1]) ?? fallback
}
let pages = option("--pages", 1_000)
let runs = option("--runs", 3)
let skipsRandom = arguments.contains("--skip-random")
/// Where to copy the first run's store (for `logstore-tool stats`); it must not exist.
let keptStore = arguments.firstIndex(of: "--keep").flatMap { $0 + 1 < arguments.count ? arguments[$0 + 1] : nil }
let randomLoads = 10_000

func seconds(since start: UInt64) -> Double { Double(nanoseconds() - start) / 1e9 }
func rate(_ count: Int, _ seconds: Double) -> String {
    String(format: "%8.0f objects/s  (%.3f s)", Double(count) / seconds, seconds)
}
func line(_ label: String, _ value: String, _ floor: String = "") {
    print(label.padding(toLength: 52, withPad: " ", startingAt: 0) + value + (floor.isEmpty ? "" : "   [\(floor)]"))
}
func median(_ values: [Double]) -> Double { values.sorted()[values.count / 2] }

/// Resident anonymous memory of this process, from /proc/self/status.
func residentAnonymousBytes() -> Int {
    guard let status = try? String(contentsOfFile: "/proc/self/status", encoding: .utf8) else { return 0 }
    for line in status.split(separator: "\n") where line.hasPrefix("RssAnon:") {
        let digits = line.split(separator: " ").dropFirst().first.flatMap { Int($0) } ?? 0
        return digits * 1024
    }
    return 0
}

print("Object layer figures: drawing of \(pages) pages × 10 layers × 20 shapes, \(runs) runs, median shown")

// MARK: LogStoreObjects

/// The figures of one coding path, medians of `runs` runs.
struct ObjectFigures {
    var saveTimes: [Double] = []
    var loadTimes: [Double] = []
    var openAndLoadTimes: [Double] = []
    var randomTimes: [Double] = []
    var countTimes: [Double] = []
    var objectCount = 0
    var loadMemory = 0
    var diskBytes = 0
}

/// Saves and loads the scaled drawing `runs` times, through `FieldCodable` or through `Codable` only.
func measureObjects(usesFieldCoding: Bool) -> ObjectFigures {
    var figures = ObjectFigures()
    for run in 0..<runs {
        let directory = TemporaryDirectory(prefix: "logstore-objects-bench")
        defer { directory.remove() }
        let path = directory.child("store")
        do {
            var options = StoreOptions()
            options.compaction.background = false
            let drawing = ScaledDrawing(pages: pages, layersPerPage: 10, shapesPerLayer: 20)
            figures.objectCount = drawing.objectCount
            let objects = try ObjectStore.open(
                at: path, options: options, types: drawingTypes,
                tuning: ObjectStoreTuning(usesFieldCoding: usesFieldCoding))
            let context = objects.makeContext()
            try context.setRoot(drawing.contents, named: "main")
            let start = nanoseconds()
            let report = try context.save()
            figures.saveTimes.append(seconds(since: start))
            precondition(report.written == drawing.objectCount, "saved \(report.written) of \(drawing.objectCount)")
            try objects.close()
            figures.diskBytes = directorySize(path).logical
            if run == 0, let keep = keptStore { try FileManager.default.copyItem(atPath: path, toPath: keep) }

            // Cold: a fresh object store (open included in the second figure) and a fresh context.
            let memoryBefore = residentAnonymousBytes()
            let openStart = nanoseconds()
            let reopened = try ObjectStore.open(
                at: path, options: options, types: drawingTypes,
                tuning: ObjectStoreTuning(usesFieldCoding: usesFieldCoding))
            let fresh = reopened.makeContext()
            let loadStart = nanoseconds()
            let contents = try fresh.root(named: "main", as: Contents.self)
            figures.loadTimes.append(seconds(since: loadStart))
            figures.openAndLoadTimes.append(seconds(since: openStart))
            // The first run only: later ones reuse the memory the earlier graphs left with malloc.
            if run == 0 { figures.loadMemory = residentAnonymousBytes() - memoryBefore }
            let reached = ScaledDrawing.reachableCount(contents)
            precondition(reached == drawing.objectCount, "loaded \(reached) of \(drawing.objectCount)")

            // Random loads by id in another fresh context: any object but the root (which would load the
            // whole graph); a page loads its layers and their shapes with it, a layer its shapes.
            let rootID = try reopened.store.root(named: "main")
            let ids = try reopened.store.ids().filter { id in
                id != rootID && (try? reopened.store.header(of: id)?.typeTag) != TypeNames.keyRecordTag
            }
            var generator = SplitMix64(seed: 0x5EED)
            let sample = (0..<randomLoads).map { _ in ids[Int(generator.next() % UInt64(ids.count))] }
            let randomContext = reopened.makeContext()
            var held: [any PersistentObject] = []
            held.reserveCapacity(randomLoads)
            if !skipsRandom {
                let randomStart = nanoseconds()
                for id in sample {
                    if let object = try randomContext.object(id: id, as: (any PersistentObject).self) {
                        held.append(object)
                    }
                }
                figures.randomTimes.append(seconds(since: randomStart))
            }

            let countStart = nanoseconds()
            var counts: [Int] = []
            for type in drawingTypes { counts.append(try fresh.count(of: type)) }
            figures.countTimes.append(seconds(since: countStart))
            precondition(counts.reduce(0, +) == drawing.objectCount)
            withExtendedLifetime(contents) {}
            try reopened.close()
        } catch {
            print("failed: \(error)")
            exit(1)
        }
    }
    return figures
}

func report(_ figures: ObjectFigures, _ title: String, floors: Bool) {
    let count = figures.objectCount
    print(
        "\n\(title) (\(count) objects, \(String(format: "%.2f", Double(figures.diskBytes) / 1e6)) MB on disk, "
            + "\(String(format: "%.1f", Double(figures.diskBytes) / Double(count))) B/object)")
    line(
        "save the whole graph (one save, fsync .always)", rate(count, median(figures.saveTimes)),
        floors ? "floor ≥ 400,000/s" : "")
    line(
        "cold full load through the root (fresh context)", rate(count, median(figures.loadTimes)),
        floors ? "floor ≥ 600,000/s" : "")
    line("  … including ObjectStore.open", rate(count, median(figures.openAndLoadTimes)))
    if floors {
        // Only the process's first graph: later ones reuse memory that malloc kept from earlier ones.
        line(
            "  memory of the loaded graph (RssAnon delta)",
            String(format: "%.0f B/object", Double(figures.loadMemory) / Double(count)))
    }
    if !figures.randomTimes.isEmpty {
        line("load 10,000 random objects by id (fresh context)", rate(randomLoads, median(figures.randomTimes)))
    }
    line("count per type (5 types)", String(format: "%.1f µs", median(figures.countTimes) * 1e6))
}

let fieldCoded = measureObjects(usesFieldCoding: true)
report(fieldCoded, "LogStoreObjects, FieldCodable model", floors: true)
if !arguments.contains("--skip-codable") {
    let codable = measureObjects(usesFieldCoding: false)
    report(codable, "LogStoreObjects, the same model through Codable only (usesFieldCoding: false)", floors: false)
}

// MARK: GRDB

if arguments.contains("--skip-grdb") { exit(0) }
var grdbSave: [Double] = []
var grdbLoad: [Double] = []
var grdbRandom: [Double] = []
var grdbCount: [Double] = []
var grdbObjects = 0
var grdbDisk = 0
for _ in 0..<runs {
    let directory = TemporaryDirectory(prefix: "logstore-objects-grdb")
    defer { directory.remove() }
    let path = directory.child("drawing.sqlite")
    do {
        let drawing = ScaledDrawing(pages: pages, layersPerPage: 10, shapesPerLayer: 20)
        var queue: DatabaseQueue? = try DatabaseQueue(path: path)
        try queue?.write { try GRDBDrawing.createSchema($0) }
        let start = nanoseconds()
        grdbObjects = try queue.map { try GRDBDrawing.save(drawing.contents, in: $0) } ?? 0
        grdbSave.append(seconds(since: start))
        queue = nil
        grdbDisk = directorySize(directory.path).logical

        let reopened = try DatabaseQueue(path: path)
        let loadStart = nanoseconds()
        let (contents, built) = try GRDBDrawing.load(from: reopened)
        grdbLoad.append(seconds(since: loadStart))
        precondition(built == grdbObjects && contents.pages.count == pages, "GRDB loaded \(built) of \(grdbObjects)")

        let all = try GRDBDrawing.allObjects(in: reopened)
        var generator = SplitMix64(seed: 0x5EED)
        let sample = (0..<randomLoads).map { _ in all[Int(generator.next() % UInt64(all.count))] }
        let randomStart = nanoseconds()
        let found = try GRDBDrawing.loadRandom(sample, from: reopened)
        grdbRandom.append(seconds(since: randomStart))
        precondition(found == randomLoads)

        let countStart = nanoseconds()
        let counts = try GRDBDrawing.counts(in: reopened)
        grdbCount.append(seconds(since: countStart))
        precondition(counts.reduce(0, +) == grdbObjects)
    } catch {
        print("GRDB failed: \(error)")
        exit(1)
    }
}
print(
    "\nGRDB \(GRDB.Database.sqliteLibVersionNumber) Codable records, same model (\(grdbObjects) objects, \(String(format: "%.2f", Double(grdbDisk) / 1e6)) MB on disk, "
        + "\(String(format: "%.1f", Double(grdbDisk) / Double(grdbObjects))) B/object)"
)
line("save the whole graph (one transaction)", rate(grdbObjects, median(grdbSave)))
line("full load, rebuilding the graph", rate(grdbObjects, median(grdbLoad)))
line("load 10,000 random rows by primary key", rate(randomLoads, median(grdbRandom)))
line("count per table (5 tables, SELECT COUNT(*))", String(format: "%.1f µs", median(grdbCount) * 1e6))
