// Figures for the object layer's secondary indexes and queries (FetchDescriptor, #Predicate), on N tasks
// (`QTask`: title, unique code, due date over a year, priority, done):
//   a. fill; open with and without indexes declared; the first query's index build, from the records and
//      from the index file; memory per entry; the index file's bytes;
//   b. a range query on `due` returning 1% of the tasks (decoded), warm and cold, against loading every
//      task and filtering in Swift;
//   c. equality lookups on the unique `code` (fetchIDs, fetch);
//   d. batched saves (1,000 new objects per save) with the two indexes against none, `.always` and `.never`
//      (a run ends when the indexes' background queue has caught up);
//   e. the same indexed class as a plain PersistentObject (not a model): what a context that keeps every
//      object it loaded costs each query and each save.
// Run from Benchmarks/:
//   swift build -c release --product QueryFigures
//   .build/release/QueryFigures [N = 1000000] [--runs 5] [--lookups 100000] [--save-batches 50]
//       [--builds 4] [--directory /tmp] [--store DIR] [--only open,build,range,lookups,saves,unmodeled]
//       [--codable] [--range-loop K] [--saves-of indexed|plain] [--synchronous-indexes]
// `--store DIR` keeps the filled stores in DIR (and reuses them when they hold N tasks), for profiling;
// `--only` runs some parts (the fill always runs when the stores are missing); `--saves-of` times the saves of
// one store only (to profile it; no ratio); `--synchronous-indexes` keeps the indexes on the committing thread
// (`ObjectStoreTuning.appliesIndexesInBackground` off).
import CMallocInfo
import Foundation
import LogStore
@_spi(Testing) import LogStoreObjects

// MARK: Options

let arguments = CommandLine.arguments
func option(_ name: String) -> String? {
    guard let index = arguments.firstIndex(of: name), index + 1 < arguments.count else { return nil }
    return arguments[index + 1]
}
func number(_ name: String, _ fallback: Int) -> Int { option(name).flatMap { Int($0) } ?? fallback }

let taskCount: Int = {
    if let value = option("--tasks").flatMap({ Int($0) }) { return value }
    if arguments.count > 1, let value = Int(arguments[1]) { return value }
    return 1_000_000
}()
let runs = max(1, number("--runs", 5))
let lookupCount = number("--lookups", 100_000)
let saveBatches = number("--save-batches", 50)
let buildRuns = max(1, number("--builds", 4))
let batchSize = 1_000
let workRoot = option("--directory") ?? "/tmp"
let keptStore = option("--store")
let parts: Set<String> =
    option("--only").map { Set($0.split(separator: ",").map(String.init)) } ?? [
        "open", "build", "range", "lookups", "saves", "unmodeled",
    ]
let codableOnly = arguments.contains("--codable")
/// The store whose saves part d times (both when nil).
let savesOf: Bool? = option("--saves-of").map { $0 == "indexed" }
let tuning = {
    var tuning = ObjectStoreTuning(usesFieldCoding: !codableOnly)
    tuning.appliesIndexesInBackground = !arguments.contains("--synchronous-indexes")
    return tuning
}()

// MARK: Helpers

/// The calling thread's CPU time (less disturbed than wall time by other work on a shared machine).
func threadCPUNanoseconds() -> UInt64 {
    var time = timespec()
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &time)
    return UInt64(time.tv_sec) * 1_000_000_000 + UInt64(time.tv_nsec)
}

func nanoseconds() -> UInt64 {
    var time = timespec()
    clock_gettime(CLOCK_MONOTONIC, &time)
    return UInt64(time.tv_sec) * 1_000_000_000 + UInt64(time.tv_nsec)
}
func seconds(since start: UInt64) -> Double { Double(nanoseconds() - start) / 1e9 }

/// Values of one figure over the runs.
struct Samples {
    var values: [Double] = []
    mutating func add(_ value: Double) { values.append(value) }
    var median: Double {
        let sorted = values.sorted()
        guard !sorted.isEmpty else { return .nan }
        return sorted.count % 2 == 1
            ? sorted[sorted.count / 2] : (sorted[sorted.count / 2 - 1] + sorted[sorted.count / 2]) / 2
    }
    var minimum: Double { values.min() ?? .nan }
    var maximum: Double { values.max() ?? .nan }
    /// "median (min–max) unit" with `format` applied to each.
    func text(_ format: (Double) -> String) -> String {
        values.count > 1 ? "\(format(median)) (\(format(minimum))–\(format(maximum)))" : format(median)
    }
}

func rateText(_ value: Double) -> String {
    if value >= 1e6 { return String(format: "%.2f M/s", value / 1e6) }
    if value >= 1e3 { return String(format: "%.1f k/s", value / 1e3) }
    return String(format: "%.1f /s", value)
}
func millisecondsText(_ value: Double) -> String {
    String(format: value < 10 ? "%.2f ms" : "%.1f ms", value * 1e3)
}
func line(_ label: String, _ value: String, _ floor: String = "") {
    print(label.padding(toLength: 60, withPad: " ", startingAt: 0) + value + (floor.isEmpty ? "" : "   [\(floor)]"))
}
func judged(_ text: String, _ met: Bool) -> String { text + (met ? ": pass" : ": FAIL") }
func grouped(_ value: Int) -> String {
    let digits = String(value)
    var result = ""
    for (index, character) in digits.enumerated() {
        if index > 0 && (digits.count - index) % 3 == 0 { result.append(",") }
        result.append(character)
    }
    return result
}
func progress(_ text: String) { FileHandle.standardError.write(Data((text + "\n").utf8)) }
func fail(_ text: String) -> Never {
    progress("QueryFigures: \(text)")
    cleanUpOnFailure?()
    exit(1)
}
nonisolated(unsafe) var cleanUpOnFailure: (() -> Void)?

/// Resident anonymous memory of this process (RssAnon of /proc/self/status), in bytes.
func residentAnonymousBytes() -> Int {
    guard let status = try? String(contentsOfFile: "/proc/self/status", encoding: .utf8) else { return 0 }
    for line in status.split(separator: "\n") where line.hasPrefix("RssAnon:") {
        return (line.split(separator: " ").dropFirst().first.flatMap { Int($0) } ?? 0) * 1024
    }
    return 0
}
/// Bytes malloc has handed out and not taken back (mallinfo2).
func heapInUse() -> Int { Int(cmallocinfo_heap_in_use()) }

func run(_ command: String) -> String {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: "/bin/sh")
    process.arguments = ["-c", command]
    let pipe = Pipe()
    process.standardOutput = pipe
    process.standardError = FileHandle.nullDevice
    do { try process.run() } catch { return "" }
    let data = pipe.fileHandleForReading.readDataToEndOfFile()
    process.waitUntilExit()
    return String(decoding: data, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
}

func removeTree(_ path: String) { try? FileManager.default.removeItem(atPath: path) }

// MARK: Setup

let date = ISO8601DateFormatter().string(from: Date())
let cpu = run("grep -m1 'model name' /proc/cpuinfo | cut -d: -f2")
let memory = String(format: "%.1f GiB", Double(ProcessInfo.processInfo.physicalMemory) / 1_073_741_824)
print("Query figures, \(date)")
print(
    "Machine: \(ProcessInfo.processInfo.activeProcessorCount) cores (\(cpu)), \(memory), Linux \(run("uname -r")), "
        + "stores under \(workRoot) (\(run("df -T \(workRoot) | tail -1 | awk '{print $2\" on \"$1}'")))"
)
print(
    "\(grouped(taskCount)) tasks (QTask: title, code unique, due over a year, priority 0..<5, done), \(runs) runs, "
        + "medians with (min–max); \(codableOnly ? "Codable only (usesFieldCoding: false)" : "FieldCodable")")

let root: String = {
    if let keptStore {
        try? FileManager.default.createDirectory(atPath: keptStore, withIntermediateDirectories: true)
        return keptStore
    }
    var template = Array((workRoot + "/logstore-query-XXXXXX").utf8CString)
    guard let made = mkdtemp(&template) else { fail("cannot make a directory under \(workRoot)") }
    return String(cString: made)
}()
/// Removes the stores unless `--store` keeps them.
func cleanUp() { if keptStore == nil { removeTree(root) } }
cleanUpOnFailure = cleanUp
let indexedPath = root + "/indexed"
let plainPath = root + "/plain"

progress("generating \(grouped(taskCount)) tasks")
let specs = TaskData.specs(0..<taskCount)

func open(_ path: String, indexed: Bool, policy: FsyncPolicy = .always) throws -> ObjectStore {
    var options = StoreOptions()
    options.fsyncPolicy = policy
    return try ObjectStore.open(
        at: path, options: options, types: indexed ? [QTask.self] : [PlainTask.self], tuning: tuning)
}

/// Saves tasks `range` of `tasks`, `batchSize` per save, into `objects`; returns the seconds.
func save(_ tasks: ArraySlice<TaskSpec>, into objects: ObjectStore, indexed: Bool) throws -> Double {
    let context = objects.makeContext()
    let start = nanoseconds()
    var offset = tasks.startIndex
    while offset < tasks.endIndex {
        let end = min(offset + batchSize, tasks.endIndex)
        for spec in tasks[offset..<end] {
            if indexed { try context.insert(QTask(spec)) } else { try context.insert(PlainTask(spec)) }
        }
        let report = try context.save()
        guard report.written == end - offset else { fail("saved \(report.written) of \(end - offset)") }
        offset = end
    }
    // The index work the background queue still has for these saves is part of their time.
    while objects.indexBacklog > 0 { usleep(100) }
    return seconds(since: start)
}

/// How many tasks the store at `path` holds (nil when there is no store).
func storedCount(_ path: String) -> Int? {
    guard FileManager.default.fileExists(atPath: path) else { return nil }
    guard let objects = try? open(path, indexed: false) else { return nil }
    defer { try? objects.close() }
    return try? objects.makeContext().count(of: PlainTask.self)
}

// MARK: a. Fill, open, index build, memory

do {
    print("\na. Fill, open, index build, memory")
    for (path, indexed) in [(indexedPath, true), (plainPath, false)] {
        if let count = storedCount(path), count == taskCount {
            line("fill (\(indexed ? "indexed" : "no index")): reusing", path)
            continue
        }
        removeTree(path)
        progress("filling \(path)")
        let objects = try open(path, indexed: indexed)
        let time = try save(specs[...], into: objects, indexed: indexed)
        try objects.close()
        line(
            "fill, \(indexed ? "due + unique code indexed" : "no index"), saves of 1,000 (.always)",
            String(format: "%@  (%.1f s)", rateText(Double(taskCount) / time), time))
    }

    if parts.contains("open") {
        var withIndexes = Samples()
        var without = Samples()
        for repetition in 0..<(runs + 1) {
            for indexed in repetition % 2 == 0 ? [true, false] : [false, true] {
                let start = nanoseconds()
                let objects = try open(indexedPath, indexed: indexed)
                let time = seconds(since: start)
                try objects.close()
                if repetition > 0 { indexed ? withIndexes.add(time) : without.add(time) }
            }
        }
        line("open, indexes declared (QTask)", withIndexes.text(millisecondsText))
        line("open, no index declared (PlainTask, same store)", without.text(millisecondsText))
    }
} catch {
    fail("\(error)")
}

var builds = Samples()
var buildsFromFile = Samples()
/// Closes that write the index file (after a build from the records), and those with nothing to write.
var closesWriting = Samples()
var closesUnchanged = Samples()
var heapPerEntry = Samples()
var rssPerEntry = Samples()
var openIndexed: ObjectStore?
let width = TaskData.yearLength * 0.01

func rangeDescriptor(_ window: (Double, Double)) -> FetchDescriptor<QTask> {
    let low = Date(timeIntervalSinceReferenceDate: window.0)
    let high = Date(timeIntervalSinceReferenceDate: window.1)
    return FetchDescriptor<QTask>(
        predicate: #Predicate { $0.due >= low && $0.due < high }, sortBy: [SortDescriptor(\.due)])
}

do {
    if parts.contains("build") || parts.contains("range") || parts.contains("lookups") {
        let count = parts.contains("build") ? buildRuns : 1
        for build in 0..<count {
            openIndexed = nil
            // Every other build starts without the index file (built from the records); the others read the
            // file the previous close wrote.
            let fromRecords = build % 2 == 0
            if fromRecords {
                for name in try FileManager.default.contentsOfDirectory(atPath: indexedPath)
                where name.hasSuffix(".lsindex") {
                    try FileManager.default.removeItem(atPath: indexedPath + "/" + name)
                }
            }
            let objects = try open(indexedPath, indexed: true)
            let context = objects.makeContext()
            _ = try context.count(of: QTask.self)
            cmallocinfo_trim()
            let heapBefore = heapInUse()
            let rssBefore = residentAnonymousBytes()
            let start = nanoseconds()
            let plan = try context.explain(rangeDescriptor((TaskData.yearStart, TaskData.yearStart + width)))
            let time = seconds(since: start)
            let heapAfter = heapInUse()
            let rssAfter = residentAnonymousBytes()
            guard plan.index == "due" else { fail("the range query does not use the index: \(plan)") }
            if objects.indexFilesRead > 0 { buildsFromFile.add(time) } else { builds.add(time) }
            progress(
                String(
                    format: "build %d: %.2f s, %@", build + 1, time,
                    objects.indexFilesRead > 0 ? "from the index file" : "from the records")
                    + objects.indexFileNotes.map { " (\($0))" }.joined())
            // Two indexes, one entry per task in each.
            heapPerEntry.add(Double(heapAfter - heapBefore) / Double(2 * taskCount))
            rssPerEntry.add(Double(rssAfter - rssBefore) / Double(2 * taskCount))
            if build == count - 1 {
                openIndexed = objects
            } else {
                let closeStart = nanoseconds()
                try objects.close()
                let closeTime = seconds(since: closeStart)
                if fromRecords { closesWriting.add(closeTime) } else { closesUnchanged.add(closeTime) }
            }
        }
        if parts.contains("build") {
            line(
                "first query: index built from the records (explain; due + code)",
                builds.text { String(format: "%.2f s", $0) }
                    + String(format: "  (%@ tasks/s)", rateText(Double(taskCount) / builds.median)))
            if !buildsFromFile.values.isEmpty {
                line(
                    "first query: index read from its file, then caught up",
                    buildsFromFile.text { String(format: "%.2f s", $0) })
            }
            if !closesWriting.values.isEmpty {
                line(
                    "close after a build from the records (writes the file)",
                    closesWriting.text { String(format: "%.0f ms", $0 * 1000) })
            }
            if !closesUnchanged.values.isEmpty {
                line(
                    "close after a build from the file (nothing to write)",
                    closesUnchanged.text { String(format: "%.0f ms", $0 * 1000) })
            }
            let fileBytes =
                (try? FileManager.default.contentsOfDirectory(atPath: indexedPath))?
                .filter { $0.hasSuffix(".lsindex") }
                .compactMap { try? FileManager.default.attributesOfItem(atPath: indexedPath + "/" + $0)[.size] as? Int }
                .reduce(0, +) ?? 0
            if fileBytes > 0 {
                line(
                    "index file on disk, per task (2 entries)",
                    String(format: "%.1f B  (%.1f MB)", Double(fileBytes) / Double(taskCount), Double(fileBytes) / 1e6))
            }
            line(
                "memory per index entry (malloc heap in use, 2 entries/task)",
                heapPerEntry.text { String(format: "%.0f B", $0) }
                    + String(format: "  (%.0f MB for both indexes)", heapPerEntry.median * Double(2 * taskCount) / 1e6))
            line("memory per index entry (RssAnon)", rssPerEntry.text { String(format: "%.0f B", $0) })
        }
    }
} catch {
    fail("\(error)")
}

// MARK: b. Range query on due, 1% of the tasks

do {
    if parts.contains("range"), let objects = openIndexed {
        print("\nb. Range query on due returning 1% of the tasks (records decoded, sorted by due)")
        var random = TaskRandom(seed: 0xB0B_0001)
        let windows: [(Double, Double)] = (0..<runs).map { _ in
            let low = TaskData.yearStart + random.unit() * (TaskData.yearLength - width)
            return (low, low + width)
        }
        let expected = windows.map { window in
            specs.reduce(0) { $0 + ($1.due >= window.0 && $1.due < window.1 ? 1 : 0) }
        }
        func check(_ found: [QTask], _ run: Int) {
            guard found.count == expected[run] else { fail("range query: \(found.count) of \(expected[run]) tasks") }
            for index in found.indices.dropFirst() where found[index - 1].due > found[index].due {
                fail("range query: results out of order")
            }
        }
        let plan = try objects.makeContext().explain(rangeDescriptor(windows[0]))
        line("plan", plan.description)
        line("results per query", "\(expected.min() ?? 0)–\(expected.max() ?? 0) tasks")

        // `--range-loop K`: K cold fetches and nothing else (for profiling).
        if let loops = option("--range-loop").flatMap({ Int($0) }) {
            var times = Samples()
            var cpuTimes = Samples()
            progress("range-loop: \(loops) cold fetches")
            for loop in 0..<loops {
                let context = objects.makeContext()
                let start = nanoseconds()
                let cpuStart = threadCPUNanoseconds()
                let found = try context.fetch(rangeDescriptor(windows[loop % windows.count]))
                times.add(seconds(since: start))
                cpuTimes.add(Double(threadCPUNanoseconds() - cpuStart) / 1e9)
                check(found, loop % windows.count)
            }
            line("range-loop: cold fetches", times.text(millisecondsText))
            line("range-loop: thread CPU per fetch", cpuTimes.text(millisecondsText))
            exit(0)
        }

        var fetchCold = Samples()
        var fetchWarm = Samples()
        var countOnly = Samples()
        var idsOnly = Samples()
        for (run, window) in windows.enumerated() {
            let descriptor = rangeDescriptor(window)
            let cold = objects.makeContext()
            var start = nanoseconds()
            let found = try cold.fetch(descriptor)
            fetchCold.add(seconds(since: start))
            check(found, run)
            start = nanoseconds()
            let again = try cold.fetch(descriptor)
            fetchWarm.add(seconds(since: start))
            check(again, run)
            start = nanoseconds()
            let counted = try cold.fetchCount(descriptor)
            countOnly.add(seconds(since: start))
            guard counted == expected[run] else { fail("fetchCount \(counted) of \(expected[run])") }
            let fresh = objects.makeContext()
            start = nanoseconds()
            let ids = try fresh.fetchIDs(descriptor)
            idsOnly.add(seconds(since: start))
            guard ids.count == expected[run] else { fail("fetchIDs \(ids.count) of \(expected[run])") }
            withExtendedLifetime(found) {}
        }

        // The same answer without a query: every task loaded, filtered and sorted in Swift.
        var scanCold = Samples()
        var scanWarm = Samples()
        func filtered(_ all: [QTask], _ window: (Double, Double)) -> [QTask] {
            let low = Date(timeIntervalSinceReferenceDate: window.0)
            let high = Date(timeIntervalSinceReferenceDate: window.1)
            return all.filter { $0.due >= low && $0.due < high }.sorted { $0.due < $1.due }
        }
        for (run, window) in windows.enumerated() {
            progress("scan \(run + 1) of \(runs)")
            let context = objects.makeContext()
            var start = nanoseconds()
            var all = try context.objects(of: QTask.self)
            let found = filtered(all, window)
            scanCold.add(seconds(since: start))
            check(found, run)
            guard all.count == taskCount else { fail("loaded \(all.count) of \(taskCount) tasks") }
            // Warm: the context holds every task already.
            start = nanoseconds()
            let again = filtered(try context.objects(of: QTask.self), window)
            scanWarm.add(seconds(since: start))
            check(again, run)
            all = []
            withExtendedLifetime(all) {}
        }
        let coldRatio = scanCold.median / fetchCold.median
        let warmRatio = scanWarm.median / fetchWarm.median
        line("fetch, cold (new context: ids from the index, decode)", fetchCold.text(millisecondsText))
        line("fetch, warm (same context, objects already loaded)", fetchWarm.text(millisecondsText))
        line("fetchIDs (new context)", idsOnly.text(millisecondsText))
        line("fetchCount", countOnly.text(millisecondsText))
        line("load all tasks (objects(of:)) + filter + sort, cold", scanCold.text(millisecondsText))
        line("load all tasks (objects(of:)) + filter + sort, warm", scanWarm.text(millisecondsText))
        line("ratio cold: load all ÷ fetch", String(format: "%.0f×", coldRatio), judged("≥ 50×", coldRatio >= 50))
        line("ratio warm: load all ÷ fetch", String(format: "%.0f×", warmRatio), judged("≥ 50×", warmRatio >= 50))

        // The predicate without an index: fetch scans and evaluates it on every task.
        let plain = try open(plainPath, indexed: false)
        var scanPredicate = Samples()
        for run in 0..<min(runs, 3) {
            let low = Date(timeIntervalSinceReferenceDate: windows[run].0)
            let high = Date(timeIntervalSinceReferenceDate: windows[run].1)
            let descriptor = FetchDescriptor<PlainTask>(
                predicate: #Predicate { $0.due >= low && $0.due < high }, sortBy: [SortDescriptor(\.due)])
            let context = plain.makeContext()
            let start = nanoseconds()
            let found = try context.fetch(descriptor)
            scanPredicate.add(seconds(since: start))
            guard found.count == expected[run] else { fail("scan fetch: \(found.count) of \(expected[run])") }
        }
        try plain.close()
        line(
            "fetch with no index declared (PlainTask: scan + predicate), cold",
            scanPredicate.text(millisecondsText)
                + String(format: "  (%.0f× the indexed fetch)", scanPredicate.median / fetchCold.median))
    }
} catch {
    fail("\(error)")
}

// MARK: c. Equality lookups on the unique code

do {
    if parts.contains("lookups"), let objects = openIndexed, lookupCount > 0 {
        print("\nc. Equality lookups on the unique code (#Predicate { $0.code == c }), one thread, warm")
        var random = TaskRandom(seed: 0xC0DE)
        let codes = (0..<lookupCount).map { _ in specs[random.below(taskCount)].code }
        func lookupIDs(_ context: ObjectContext, _ code: String) throws -> [ObjectID] {
            try context.fetchIDs(FetchDescriptor<QTask>(predicate: #Predicate { $0.code == code }))
        }
        func lookup(_ context: ObjectContext, _ code: String) throws -> [QTask] {
            try context.fetch(FetchDescriptor<QTask>(predicate: #Predicate { $0.code == code }))
        }
        let plan = try objects.makeContext().explain(
            FetchDescriptor<QTask>(predicate: #Predicate { $0.code == "QT-000000000000" }))
        line("plan", plan.description)

        var ids = Samples()
        var fetchHeld = Samples()
        var fetchFresh = Samples()
        var uniqueHeld = Samples()
        var uniqueFresh = Samples()
        let idContext = objects.makeContext()
        for code in codes.prefix(10_000) { _ = try lookupIDs(idContext, code) }
        for run in 0..<runs {
            progress("lookups \(run + 1) of \(runs)")
            var found = 0
            var start = nanoseconds()
            for code in codes { found += try lookupIDs(idContext, code).count }
            ids.add(Double(codes.count) / seconds(since: start))
            guard found == codes.count else { fail("fetchIDs found \(found) of \(codes.count)") }

            // Warm: the context holds the objects (an untimed pass loaded them).
            let held = objects.makeContext()
            var kept: [QTask] = []
            kept.reserveCapacity(codes.count)
            for code in codes { kept += try lookup(held, code) }
            found = 0
            start = nanoseconds()
            for code in codes { found += try lookup(held, code).count }
            fetchHeld.add(Double(codes.count) / seconds(since: start))
            guard found == codes.count, kept.count == codes.count else { fail("fetch found \(found)") }
            found = 0
            start = nanoseconds()
            for code in codes where try held.fetchUnique(QTask.self, where: \.code, equals: code) != nil { found += 1 }
            uniqueHeld.add(Double(codes.count) / seconds(since: start))
            guard found == codes.count else { fail("fetchUnique found \(found)") }
            kept = []

            let freshUnique = objects.makeContext()
            found = 0
            start = nanoseconds()
            for code in codes where try freshUnique.fetchUnique(QTask.self, where: \.code, equals: code) != nil {
                found += 1
            }
            uniqueFresh.add(Double(codes.count) / seconds(since: start))
            guard found == codes.count else { fail("fetchUnique found \(found)") }

            // Each object decoded: a new context, nothing held.
            let fresh = objects.makeContext()
            found = 0
            start = nanoseconds()
            for code in codes { found += try lookup(fresh, code).count }
            fetchFresh.add(Double(codes.count) / seconds(since: start))
            guard found == codes.count else { fail("fetch found \(found)") }
        }
        line("fetchIDs", ids.text(rateText), judged("≥ 1M/s", ids.median >= 1e6))
        line(
            "fetch, objects already loaded in the context", fetchHeld.text(rateText),
            judged("≥ 1M/s", fetchHeld.median >= 1e6))
        line("fetch, new context (each object decoded)", fetchFresh.text(rateText))
        line(
            "fetchUnique(where: \\.code, equals:), objects already loaded", uniqueHeld.text(rateText),
            judged("≥ 1M/s", uniqueHeld.median >= 1e6))
        line("fetchUnique, new context (each object decoded)", uniqueFresh.text(rateText))
    }
} catch {
    fail("\(error)")
}
if let objects = openIndexed {
    try? objects.close()
    openIndexed = nil
}

// MARK: d. Batched saves, indexed against not

do {
    if parts.contains("saves"), saveBatches > 0 {
        print(
            "\nd. Batched saves of new tasks (1,000 per save, \(saveBatches) saves per run) into the \(grouped(taskCount))-task"
                + " stores: due + unique code indexed against no index")
        let indexedCopy = root + "/saves-indexed"
        let plainCopy = root + "/saves-plain"
        var nextNumber = taskCount
        for (name, policy) in [(".always", FsyncPolicy.always), (".never", FsyncPolicy.never)] {
            // Copies, so that the stores of the other figures stay as filled.
            for (source, copy) in [(indexedPath, indexedCopy), (plainPath, plainCopy)] {
                removeTree(copy)
                try FileManager.default.copyItem(atPath: source, toPath: copy)
            }
            defer {
                removeTree(indexedCopy)
                removeTree(plainCopy)
            }
            let indexed = try open(indexedCopy, indexed: true, policy: policy)
            let plain = try open(plainCopy, indexed: false, policy: policy)
            // The index is built (untimed) and both stores take one batch before the timed runs.
            _ = try indexed.makeContext().explain(rangeDescriptor((0, 1)))
            let warm = TaskData.specs(nextNumber..<(nextNumber + batchSize))
            nextNumber += batchSize
            _ = try save(warm[...], into: indexed, indexed: true)
            _ = try save(warm[...], into: plain, indexed: false)
            var withIndexes = Samples()
            var without = Samples()
            var ratios = Samples()
            for run in 0..<runs {
                progress("saves \(name), run \(run + 1) of \(runs)")
                let batch = TaskData.specs(nextNumber..<(nextNumber + saveBatches * batchSize))
                nextNumber += batch.count
                var rates: [Bool: Double] = [:]
                for isIndexed in run % 2 == 0 ? [true, false] : [false, true] where savesOf ?? isIndexed == isIndexed {
                    let time = try save(batch[...], into: isIndexed ? indexed : plain, indexed: isIndexed)
                    rates[isIndexed] = Double(batch.count) / time
                }
                if let rate = rates[true] { withIndexes.add(rate) }
                if let rate = rates[false] { without.add(rate) }
                if let indexedRate = rates[true], let plainRate = rates[false] { ratios.add(indexedRate / plainRate) }
            }
            try indexed.close()
            try plain.close()
            line("saves \(name), due + unique code indexed", withIndexes.text(rateText))
            line("saves \(name), no index", without.text(rateText))
            line(
                "ratio \(name): indexed ÷ no index (per run)", ratios.text { String(format: "%.2f", $0) },
                judged("≥ 0.70", ratios.median >= 0.70))
        }
    }
} catch {
    fail("\(error)")
}
// MARK: e. The indexed class as a plain PersistentObject

do {
    if parts.contains("unmodeled") {
        print(
            "\ne. The same indexed class as a plain PersistentObject (UnmodeledTask, not a model): the context keeps"
                + " every task it loaded or saved")
        let objects = try ObjectStore.open(at: indexedPath, types: [UnmodeledTask.self], tuning: tuning)
        _ = try objects.makeContext().explain(
            FetchDescriptor<UnmodeledTask>(predicate: #Predicate { $0.code == "QT-000000000000" }))
        let ids = try objects.makeContext().ids(of: UnmodeledTask.self)
        var random = TaskRandom(seed: 0xE0E0)
        let codes = (0..<2_000).map { _ in specs[random.below(taskCount)].code }
        for (held, lookups) in [(0, 2_000), (1_000, 2_000), (10_000, 500), (100_000, 100)] where held <= ids.count {
            let context = objects.makeContext()
            for id in ids.prefix(held) { _ = try context.object(id: id, as: UnmodeledTask.self) }
            var rates = Samples()
            let codes = codes.prefix(lookups)
            for _ in 0..<3 {
                var found = 0
                let start = nanoseconds()
                for code in codes {
                    found += try context.fetchIDs(
                        FetchDescriptor<UnmodeledTask>(predicate: #Predicate { $0.code == code })
                    ).count
                }
                rates.add(Double(codes.count) / seconds(since: start))
                guard found == codes.count else { fail("unmodeled lookups found \(found) of \(codes.count)") }
            }
            line("fetchIDs by code, \(grouped(held)) tasks loaded in the context", rates.text(rateText))
        }
        try objects.close()

        // Saves of 1,000 new tasks through one context, into a copy of the store.
        let copy = root + "/saves-unmodeled"
        removeTree(copy)
        try FileManager.default.copyItem(atPath: indexedPath, toPath: copy)
        defer { removeTree(copy) }
        let saving = try ObjectStore.open(at: copy, types: [UnmodeledTask.self], tuning: tuning)
        // The index is built first (untimed), as in d.
        _ = try saving.makeContext().explain(
            FetchDescriptor<UnmodeledTask>(predicate: #Predicate { $0.code == "QT-000000000000" }))
        let context = saving.makeContext()
        let batches = 40
        let tasks = TaskData.specs((taskCount + 10_000_000)..<(taskCount + 10_000_000 + batches * batchSize))
        var times: [Double] = []
        for batch in 0..<batches {
            for spec in tasks[(batch * batchSize)..<((batch + 1) * batchSize)] {
                try context.insert(UnmodeledTask(spec))
            }
            let start = nanoseconds()
            let report = try context.save()
            times.append(seconds(since: start))
            guard report.written >= batchSize else { fail("saved \(report.written)") }
        }
        try saving.close()
        let first = Double(5 * batchSize) / times.prefix(5).reduce(0, +)
        let last = Double(5 * batchSize) / times.suffix(5).reduce(0, +)
        line("saves of 1,000 through one context (.always): saves 1–5", rateText(first))
        line(
            "  saves \(batches - 4)–\(batches) (the context holds \(grouped((batches - 5) * batchSize)) tasks)",
            rateText(last))
    }
} catch {
    fail("\(error)")
}

cleanUp()
