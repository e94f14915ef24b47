// One-shot figures that are not iterated benchmarks: bytes on disk per payload byte, index memory
// per object, reopen time in a fresh process, and the latency distribution of single gets timed
// one by one. Run from Benchmarks/:
//
//   swift run -c release LogStoreFigures            # 1,000,000 objects
//   swift run -c release LogStoreFigures 200000     # another count
//
// Index memory is measured in a fresh child process (this executable started again with
// `--measure-open DIR OUT`), so nothing this process allocated while writing the store is counted:
// the child reads glibc's `mallinfo2()` (bytes in use on the heap, arena and mmapped chunks) and
// `/proc/self/status` (RssAnon, RssFile) just before and just after `Store.open`. The segment files
// are mapped, not read into the heap: their pages show up in RssFile, never in the heap figure.

import BenchmarkSupport
import CMallocInfo
import LogStore

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

// MARK: - Child mode: open a store and report what opening cost

struct OpenCost {
    var openNanoseconds: UInt64
    var heapBytes: Int
    var rssAnonBytes: Int
    var rssFileBytes: Int
    var objects: Int
    /// RssAnon delta after `malloc_trim(0)`: without the freed memory malloc kept.
    var rssAnonTrimmedBytes: Int = 0
}

func heapInUse() -> Int {
    Int(cmallocinfo_heap_in_use())
}

/// RssAnon and RssFile of this process, in bytes.
func residentSet() -> (anon: Int, file: Int) {
    guard let file = fopen("/proc/self/status", "r") else { return (0, 0) }
    defer { fclose(file) }
    var anon = 0
    var mapped = 0
    var line = [CChar](repeating: 0, count: 256)
    while fgets(&line, Int32(line.count), file) != nil {
        let text = stringFromCString(line)
        func kilobytes() -> Int { Int(text.split(separator: " ", omittingEmptySubsequences: true)[1]) ?? 0 }
        if text.hasPrefix("RssAnon:") { anon = kilobytes() * 1024 }
        if text.hasPrefix("RssFile:") { mapped = kilobytes() * 1024 }
    }
    return (anon, mapped)
}

func measureOpen(_ path: String) throws -> OpenCost {
    // Warm up the allocator and the runtime so their first-use costs are not counted.
    _ = Array(repeating: UInt8(0), count: 1024)
    _ = [Int: Int]()
    let heapBefore = heapInUse()
    let rssBefore = residentSet()
    let start = nanoseconds()
    let store = try Store.open(at: path)
    let elapsed = nanoseconds() - start
    let heapAfter = heapInUse()
    let rssAfter = residentSet()
    let objects = try store.count()
    cmallocinfo_trim()
    let rssTrimmed = residentSet()
    let cost = OpenCost(
        openNanoseconds: elapsed, heapBytes: heapAfter - heapBefore, rssAnonBytes: rssAfter.anon - rssBefore.anon,
        rssFileBytes: rssAfter.file - rssBefore.file, objects: objects,
        rssAnonTrimmedBytes: rssTrimmed.anon - rssBefore.anon)
    try store.close()
    return cost
}

let arguments = CommandLine.arguments
if arguments.count == 4, arguments[1] == "--measure-open" {
    let cost = try measureOpen(arguments[2])
    let line =
        "\(cost.openNanoseconds) \(cost.heapBytes) \(cost.rssAnonBytes) \(cost.rssFileBytes) \(cost.objects) \(cost.rssAnonTrimmedBytes)\n"
    let out = fopen(arguments[3], "w")!
    fputs(line, out)
    fclose(out)
    exit(0)
}

// MARK: - Parent mode

func selfExecutable() -> String {
    var buffer = [CChar](repeating: 0, count: 4096)
    let length = readlink("/proc/self/exe", &buffer, buffer.count - 1)
    precondition(length > 0, "cannot read /proc/self/exe")
    buffer[length] = 0
    return stringFromCString(buffer)
}

/// Runs this executable as `--measure-open path` in a new process and reads what it measured.
func openInChild(_ path: String, scratch: TemporaryDirectory) -> OpenCost {
    let out = scratch.child("open-cost.txt")
    let argv = [selfExecutable(), "--measure-open", path, out]
    var cArguments: [UnsafeMutablePointer<CChar>?] = argv.map { strdup($0) } + [nil]
    defer { for argument in cArguments { free(argument) } }
    var pid: pid_t = 0
    let spawned = posix_spawn(&pid, argv[0], nil, nil, &cArguments, environ)
    precondition(spawned == 0, "posix_spawn failed: \(spawned)")
    var status: Int32 = 0
    waitpid(pid, &status, 0)
    precondition(status == 0, "child failed with status \(status)")
    let file = fopen(out, "r")!
    defer { fclose(file) }
    var line = [CChar](repeating: 0, count: 256)
    _ = fgets(&line, Int32(line.count), file)
    let fields = stringFromCString(line).split(separator: " ").map {
        Int($0.trimmingCharacters(in: .whitespacesAndNewlines))!
    }
    return OpenCost(
        openNanoseconds: UInt64(fields[0]), heapBytes: fields[1], rssAnonBytes: fields[2], rssFileBytes: fields[3],
        objects: fields[4], rssAnonTrimmedBytes: fields[5])
}

extension Substring {
    func trimmingCharacters(in _: WhitespaceSet) -> Substring {
        var text = self
        while let last = text.last, last.isWhitespace { text = text.dropLast() }
        while let first = text.first, first.isWhitespace { text = text.dropFirst() }
        return text
    }
}
enum WhitespaceSet { case whitespacesAndNewlines }

func format(_ value: Double, _ digits: Int = 2) -> String {
    if digits == 0 { return String(Int(value.rounded())) }
    var factor = 1.0
    for _ in 0..<digits { factor *= 10 }
    let rounded = (value * factor).rounded() / factor
    var text = String(rounded)
    if let dot = text.firstIndex(of: ".") {
        let decimals = text.distance(from: dot, to: text.endIndex) - 1
        if decimals < digits { text += String(repeating: "0", count: digits - decimals) }
    } else if digits > 0 {
        text += "." + String(repeating: "0", count: digits)
    }
    return text
}

func median(_ values: [Double]) -> Double {
    let sorted = values.sorted()
    return sorted[sorted.count / 2]
}

let objectCount = arguments.count > 1 ? Int(arguments[1]) ?? 1_000_000 : 1_000_000
let scratch = TemporaryDirectory(prefix: "logstore-figures")
defer { scratch.remove() }

print("LogStore figures, \(objectCount) objects (generated payloads of 100-300 bytes, 0-4 references)")
print("")

// 1. Build the store with default options (fsync .always, batches of 1000).
let path = scratch.child("store")
var store = try Store.open(at: path)
let fillStart = nanoseconds()
let summary = try fillStore(store, count: objectCount)
let fillSeconds = Double(nanoseconds() - fillStart) / 1e9
try store.close()
print(
    "fill (incl. payload generation): \(format(fillSeconds)) s, \(format(Double(objectCount) / fillSeconds, 0)) objects/s"
)

// 2. Bytes on disk per payload byte: segment files alone, and everything in the store directory
// (segment hint files, the segment manifest, the lock file).
let segments = directorySize(path, suffix: ".seg")
let hints = directorySize(path, suffix: ".hint")
let everything = directorySize(path)
let payloadBytes = Double(summary.payloadBytes)
print("")
print("## Space")
print(
    "payload bytes:                 \(summary.payloadBytes) (mean \(format(payloadBytes / Double(objectCount), 1)) B/object)"
)
print(
    "references:                    \(summary.referenceCount) (mean \(format(Double(summary.referenceCount) / Double(objectCount))) /object, 8 B each)"
)
print("segment files:                 \(segments.files), \(segments.logical) bytes (allocated \(segments.allocated))")
print("hint files:                    \(hints.files), \(hints.logical) bytes")
print(
    "all files in the directory:    \(everything.files), \(everything.logical) bytes (allocated \(everything.allocated))"
)
print(
    "bytes on disk / payload bytes: \(format(Double(everything.logical) / payloadBytes, 3)) all files, \(format(Double(segments.logical) / payloadBytes, 3)) segments only (st_size); \(format(Double(everything.allocated) / payloadBytes, 3)) allocated blocks"
)
print(
    "on-disk bytes per object:      \(format(Double(everything.logical) / Double(objectCount), 1)) all files, \(format(Double(segments.logical) / Double(objectCount), 1)) segments only"
)

// The same objects without the shared dictionary (LZ4 only from 512 bytes: none of these payloads).
do {
    let plainPath = scratch.child("store-plain")
    var options = StoreOptions(fsyncPolicy: .never)
    options.sharedDictionary = false
    let plain = try Store.open(at: plainPath, options: options)
    try fillStore(plain, count: objectCount)
    try plain.close()
    let size = directorySize(plainPath, suffix: ".seg")
    let all = directorySize(plainPath)
    print(
        "without the shared dictionary: \(format(Double(all.logical) / payloadBytes, 3)) all files, \(format(Double(size.logical) / payloadBytes, 3)) segments only"
    )
    removeTree(plainPath)
}

// A second, independent generator: four schemas, one per type tag.
for sharedDictionary in [true, false] {
    let otherPath = scratch.child("store-four-schemas")
    var options = StoreOptions(fsyncPolicy: .never)
    options.sharedDictionary = sharedDictionary
    let other = try Store.open(at: otherPath, options: options)
    let otherPayload = try fillStoreWithFourSchemas(other, count: objectCount)
    try other.close()
    let all = directorySize(otherPath)
    print(
        "four schemas (\(format(Double(otherPayload) / Double(objectCount), 1)) B/object), \(sharedDictionary ? "shared dictionary" : "no dictionary    "): \(format(Double(all.logical) / Double(otherPayload), 3)) all files"
    )
    removeTree(otherPath)
}

// 3. Index memory and reopen time, each in a fresh process.
print("")
print("## Open (fresh process each time)")
var warm: [OpenCost] = []
for _ in 0..<5 { warm.append(openInChild(path, scratch: scratch)) }
var cold: [OpenCost] = []
for _ in 0..<5 {
    evictFromPageCache(path)
    cold.append(openInChild(path, scratch: scratch))
}
precondition(warm.allSatisfy { $0.objects == objectCount })
let heapPerObject = median(warm.map { Double($0.heapBytes) / Double(objectCount) })
let anonPerObject = median(warm.map { Double($0.rssAnonBytes) / Double(objectCount) })
let filePerObject = median(warm.map { Double($0.rssFileBytes) / Double(objectCount) })
let trimmedPerObject = median(warm.map { Double($0.rssAnonTrimmedBytes) / Double(objectCount) })
print(
    "reopen, warm page cache:        median \(format(median(warm.map { Double($0.openNanoseconds) / 1e6 }), 1)) ms (runs: \(warm.map { format(Double($0.openNanoseconds) / 1e6, 1) }.joined(separator: ", ")))"
)
print(
    "reopen, page cache evicted:     median \(format(median(cold.map { Double($0.openNanoseconds) / 1e6 }), 1)) ms (runs: \(cold.map { format(Double($0.openNanoseconds) / 1e6, 1) }.joined(separator: ", ")))"
)
print("index memory, heap in use:      \(format(heapPerObject)) bytes/object (mallinfo2 delta over Store.open)")
print("index memory, RssAnon:          \(format(anonPerObject)) bytes/object (resident anonymous memory delta)")
print("  RssAnon after malloc_trim(0):  \(format(trimmedPerObject)) bytes/object (freed memory malloc kept, returned)")
print(
    "mapped segment pages, RssFile:  \(format(filePerObject)) bytes/object (file pages touched by the scan; not index)")

// 4. Single-get latency, each get timed by itself (clock_gettime around it).
print("")
print("## Get latency, each of 1,000,000 random gets timed alone (1 thread, warm)")
do {
    store = try Store.open(at: path)
    let ids = randomIDs(count: 1_000_000, in: summary.firstID.rawValue...summary.lastID.rawValue, seed: 7)
    var samples = [UInt64](repeating: 0, count: ids.count)
    var checksum = 0
    for _ in 0..<2 {  // the first pass warms caches; keep the second
        for (position, id) in ids.enumerated() {
            let start = nanoseconds()
            let record = try store.get(id)
            samples[position] = nanoseconds() - start
            checksum &+= record!.payload.count
        }
    }
    let total = samples.reduce(0, +)
    samples.sort()
    func percentile(_ p: Double) -> UInt64 { samples[min(samples.count - 1, Int(Double(samples.count) * p))] }
    print(
        "p50 \(percentile(0.5)) ns, p90 \(percentile(0.9)) ns, p99 \(percentile(0.99)) ns, p99.9 \(percentile(0.999)) ns, max \(samples.last!) ns"
    )
    print(
        "mean \(format(Double(total) / Double(ids.count), 0)) ns incl. timer (\(format(1e9 * Double(ids.count) / Double(total), 0)) gets/s); checksum \(checksum)"
    )
    try store.close()
}
