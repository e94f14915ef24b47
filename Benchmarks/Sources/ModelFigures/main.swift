// Figures for `@Persistent` models against hand-written `FieldCodable` classes and plain `Codable`: the
// drawing saved and loaded through each, saves of a few changes in a context holding ~100,000 loaded
// objects, the cost of a tracked assignment, and memory per loaded object. Run:
//   cd Benchmarks && swift run -c release ModelFigures [--pages 1000] [--runs 5] [--changes-pages 474] [--only-memory]
import BenchmarkSupport
import Foundation
import LogStore
import LogStoreExamples
import LogStoreObjects
import LogStorePersistent
import PeerWorkloads

let arguments = CommandLine.arguments
func option(_ name: String, _ fallback: Int) -> Int {
    guard let index = arguments.firstIndex(of: name), index + 1 < arguments.count else { return fallback }
    return Int(arguments[index + 1]) ?? fallback
}
func textOption(_ name: String) -> String? {
    guard let index = arguments.firstIndex(of: name), index + 1 < arguments.count else { return nil }
    return arguments[index + 1]
}
let pages = option("--pages", 1_000)
let runs = option("--runs", 5)
let changesPages = option("--changes-pages", 474)

func seconds(since start: UInt64) -> Double { Double(nanoseconds() - start) / 1e9 }
func median(_ values: [Double]) -> Double { values.sorted()[values.count / 2] }
func line(_ label: String, _ value: String) {
    print(label.padding(toLength: 60, withPad: " ", startingAt: 0) + value)
}
func fail(_ error: any Error) -> Never {
    print("failed: \(error)")
    exit(1)
}

/// The three ways to declare the drawing.
enum Kind: String, CaseIterable {
    case model = "@Persistent"
    case fieldCodable = "FieldCodable (hand-written)"
    case codable = "Codable only"

    var types: [any PersistentObject.Type] { self == .model ? modelDrawingTypes : drawingTypes }
    var tuning: ObjectStoreTuning { ObjectStoreTuning(usesFieldCoding: self != .codable) }

    /// Builds the graph; returns its root and object count.
    func build(pages: Int) -> (any PersistentObject, Int) {
        if self == .model {
            let drawing = ScaledModelDrawing(pages: pages, layersPerPage: 10, shapesPerLayer: 20)
            return (drawing.contents, drawing.objectCount)
        }
        let drawing = ScaledDrawing(pages: pages, layersPerPage: 10, shapesPerLayer: 20)
        return (drawing.contents, drawing.objectCount)
    }

    func open(_ path: String) throws -> ObjectStore {
        var options = StoreOptions()
        options.compaction.background = false
        return try ObjectStore.open(at: path, options: options, types: types, tuning: tuning)
    }

    /// Stores the drawing of `pages` pages in `path`; returns the save time and the object count.
    func store(pages: Int, at path: String) throws -> (Double, Int) {
        let (contents, count) = build(pages: pages)
        let objects = try open(path)
        let context = objects.makeContext()
        try context.setRoot(contents, named: "main")
        let start = nanoseconds()
        let report = try context.save()
        let time = seconds(since: start)
        precondition(report.written == count, "saved \(report.written) of \(count)")
        try objects.close()
        return (time, count)
    }

    /// Loads the whole graph in `context`; returns the root.
    func load(_ context: ObjectContext) throws -> AnyObject {
        let root: AnyObject? =
            self == .model
            ? try context.root(named: "main", as: ModelContents.self)
            : try context.root(named: "main", as: Contents.self)
        guard let root else { fail(ObjectStoreError(.store, "no root")) }
        return root
    }

    /// The circles of the loaded graph under `root`.
    func circles(_ root: AnyObject) -> [AnyObject] {
        if let contents = root as? ModelContents {
            return contents.pages.flatMap { $0.layers.flatMap { $0.shapes.compactMap { $0 as? ModelCircle } } }
        }
        guard let contents = root as? Contents else { return [] }
        return contents.pages.flatMap { $0.layers.flatMap { $0.shapes.compactMap { $0 as? Circle } } }
    }
}

/// Resident anonymous memory of this process, from /proc/self/status.
func residentAnonymousBytes() -> Int {
    guard let status = try? String(contentsOfFile: "/proc/self/status", encoding: .utf8) else { return 0 }
    for line in status.split(separator: "\n") where line.hasPrefix("RssAnon:") {
        return (line.split(separator: " ").dropFirst().first.flatMap { Int($0) } ?? 0) * 1024
    }
    return 0
}

// MARK: Memory, in a child process of its own per kind

if let kindName = textOption("--memory"), let path = textOption("--path"),
    let kind = Kind.allCases.first(where: { "\($0)" == kindName })
{
    // The store was written by the parent process: this process only opens it and loads the graph.
    do {
        let before = residentAnonymousBytes()
        let objects = try kind.open(path)
        let root = try kind.load(objects.makeContext())
        let after = residentAnonymousBytes()
        print(after - before)
        withExtendedLifetime(root) {}
        try objects.close()
    } catch {
        fail(error)
    }
    exit(0)
}

print("Model figures: drawing of \(pages) pages × 10 layers × 20 shapes, \(runs) runs (kinds interleaved), medians")

let onlyMemory = arguments.contains("--only-memory")

// MARK: Save and load of the whole drawing, per kind

var saveTimes: [Kind: [Double]] = [:]
var loadTimes: [Kind: [Double]] = [:]
var objectCount = 0
for _ in 0..<(onlyMemory ? 0 : runs) {
    for kind in Kind.allCases {
        let directory = TemporaryDirectory(prefix: "logstore-model-bench")
        defer { directory.remove() }
        let path = directory.child("store")
        do {
            let (saveTime, count) = try kind.store(pages: pages, at: path)
            objectCount = count
            saveTimes[kind, default: []].append(saveTime)
            let objects = try kind.open(path)
            let start = nanoseconds()
            let root = try kind.load(objects.makeContext())
            loadTimes[kind, default: []].append(seconds(since: start))
            withExtendedLifetime(root) {}
            try objects.close()
        } catch {
            fail(error)
        }
    }
}
func ratio(_ times: [Kind: [Double]], _ a: Kind, _ b: Kind) -> Double {
    median(times[b] ?? [1]) / median(times[a] ?? [1])
}
if !onlyMemory {
    print("\nWhole drawing (\(objectCount) objects), objects/s")
    for kind in Kind.allCases {
        let save = Double(objectCount) / median(saveTimes[kind] ?? [1])
        let load = Double(objectCount) / median(loadTimes[kind] ?? [1])
        line("  \(kind.rawValue): save / cold load", String(format: "%9.0f / %9.0f", save, load))
    }
    line(
        "  @Persistent ÷ FieldCodable, save / load (speed)",
        String(format: "%.3f / %.3f", ratio(saveTimes, .model, .fieldCodable), ratio(loadTimes, .model, .fieldCodable)))
    line(
        "  @Persistent ÷ Codable only, save / load (speed)",
        String(format: "%.3f / %.3f", ratio(saveTimes, .model, .codable), ratio(loadTimes, .model, .codable)))
}

// MARK: Saving a few changes among ~100,000 loaded objects

if onlyMemory { objectCount = ScaledDrawing(pages: pages, layersPerPage: 10, shapesPerLayer: 20).objectCount }
print("\nsave() after changing k circles, context holding the whole loaded drawing of \(changesPages) pages")
for kind in onlyMemory ? [] : [Kind.model, .fieldCodable] {
    let directory = TemporaryDirectory(prefix: "logstore-model-changes")
    defer { directory.remove() }
    do {
        let (_, count) = try kind.store(pages: changesPages, at: directory.child("store"))
        let objects = try kind.open(directory.child("store"))
        let context = objects.makeContext()
        let root = try kind.load(context)
        let circles = kind.circles(root)
        var generator = SplitMix64(seed: 0xC4A4)
        for changes in [1, 100] {
            var times: [Double] = []
            for round in 0..<(kind == .model ? 30 : 5) {
                for _ in 0..<changes {
                    let circle = circles[Int(generator.next() % UInt64(circles.count))]
                    if let circle = circle as? ModelCircle { circle.radius += 1 }
                    if let circle = circle as? Circle { circle.radius += 1 }
                }
                let start = nanoseconds()
                let report = try context.save()
                if round > 0 { times.append(seconds(since: start)) }
                precondition(report.written <= changes && report.written > 0, "wrote \(report.written)")
            }
            line(
                "  \(kind.rawValue), \(count) loaded, \(changes) changed",
                String(format: "median %8.3f ms, max %8.3f ms", median(times) * 1e3, (times.max() ?? 0) * 1e3))
        }
        withExtendedLifetime(root) {}
        try objects.close()
    } catch {
        fail(error)
    }
}

// MARK: A tracked assignment

print("\n10,000,000 assignments of `radius` on loaded circles (round robin), ns per assignment")
var assignmentCosts: [Kind: Double] = [:]
for kind in onlyMemory ? [] : [Kind.model, .fieldCodable, .model, .fieldCodable] {
    let directory = TemporaryDirectory(prefix: "logstore-model-assign")
    defer { directory.remove() }
    do {
        _ = try kind.store(pages: 100, at: directory.child("store"))
        let objects = try kind.open(directory.child("store"))
        let context = objects.makeContext()
        let root = try kind.load(context)
        let assignments = 10_000_000
        var checksum = 0.0
        let start: UInt64
        if kind == .model {
            let circles = kind.circles(root).compactMap { $0 as? ModelCircle }
            start = nanoseconds()
            for index in 0..<assignments { circles[index % circles.count].radius = Double(index) }
            checksum = circles.reduce(0) { $0 + $1.radius }
        } else {
            let circles = kind.circles(root).compactMap { $0 as? Circle }
            start = nanoseconds()
            for index in 0..<assignments { circles[index % circles.count].radius = Double(index) }
            checksum = circles.reduce(0) { $0 + $1.radius }
        }
        let cost = Double(nanoseconds() - start) / Double(assignments)
        assignmentCosts[kind] = min(assignmentCosts[kind] ?? .infinity, cost)
        precondition(checksum > 0)
        withExtendedLifetime(root) {}
        try objects.close()
    } catch {
        fail(error)
    }
}
for kind in [Kind.model, .fieldCodable] {
    line("  \(kind.rawValue) (best of 2)", String(format: "%.2f ns", assignmentCosts[kind] ?? 0))
}
line(
    "  tracked − untracked",
    String(format: "%.2f ns", (assignmentCosts[.model] ?? 0) - (assignmentCosts[.fieldCodable] ?? 0)))

// MARK: Memory per loaded object

print("\nMemory of the loaded drawing (RssAnon delta in a process of its own, \(objectCount) objects)")
var memory: [Kind: Double] = [:]
for kind in [Kind.model, .fieldCodable] {
    let directory = TemporaryDirectory(prefix: "logstore-model-memory")
    defer { directory.remove() }
    let path = directory.child("store")
    var samples: [Double] = []
    do {
        let (_, count) = try kind.store(pages: pages, at: path)
        for _ in 0..<3 {
            let process = Process()
            process.executableURL = URL(fileURLWithPath: CommandLine.arguments[0])
            process.arguments = ["--memory", "\(kind)", "--path", path]
            let pipe = Pipe()
            process.standardOutput = pipe
            try process.run()
            let output = String(decoding: pipe.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
            process.waitUntilExit()
            samples.append((Double(output.trimmingCharacters(in: .whitespacesAndNewlines)) ?? .nan) / Double(count))
        }
    } catch {
        fail(error)
    }
    memory[kind] = median(samples)
    line("  \(kind.rawValue) (median of 3 processes)", String(format: "%.1f B/object", memory[kind] ?? .nan))
}
line(
    "  @Persistent − FieldCodable",
    String(format: "%.1f B/object", (memory[.model] ?? 0) - (memory[.fieldCodable] ?? 0)))
