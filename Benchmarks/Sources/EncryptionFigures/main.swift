// Encryption at rest: a plain store against an encrypted one (`AESGCMCipher`, AES-256-GCM) on the same data,
// with the comparison's LogStore workloads. Run from Benchmarks/:
//
//   swift run -c release EncryptionFigures [--runs 3] [--objects 200000] [--gets 1000000]
//       [--reopen-objects 1000000]
//
// Each repetition runs the plain store and then the encrypted one (A B A B …), each in a fresh directory
// under /tmp, default options (fsync `.always`), after an untimed warm-up of both on a tenth of the data:
//   - batched puts: `--objects` PayloadGenerator records of 100–220 bytes, 1,000 per `write`;
//   - bytes on disk after close (every file of the store directory);
//   - random gets, 1 thread: `--gets` uniformly random ids in Snapshots of 1,000, every payload copied out;
//     "cold" on a fresh open (an encrypted store keeps decrypted copies of its segments: the anonymous
//     memory grown by the open alone shows how much it decrypts before the first get), then "warm" after
//     one untimed pass over every key; resident memory (/proc/self/status) grown from before the open to
//     after the warm gets;
//   - a store of `--reopen-objects` records closed cleanly: `Store.open` alone and open + one get, median
//     of 5 opens after an untimed one (warm page cache).
// Prints median (min–max) of the repetitions and the encryption floors.

import BenchmarkSupport
import CMallocInfo
import Foundation
import LogStore
import LogStoreEncryption

let arguments = CommandLine.arguments
func option(_ name: String) -> String? {
    guard let index = arguments.firstIndex(of: name), index + 1 < arguments.count else { return nil }
    return arguments[index + 1]
}
func number(_ name: String, _ fallback: Int) -> Int { option(name).flatMap { Int($0) } ?? fallback }
let runs = max(1, number("--runs", 3))
let objects = number("--objects", 200_000)
let gets = number("--gets", 1_000_000)
let reopenObjects = number("--reopen-objects", 1_000_000)
let batchSize = 1_000
let snapshotSize = 1_000
/// What each batch of an encrypted store adds on disk: a 12-byte nonce and a 16-byte tag.
let sealOverhead = 28.0

func progress(_ text: String) { FileHandle.standardError.write(Data((text + "\n").utf8)) }
func milliseconds(since start: UInt64) -> Double { Double(nanoseconds() - start) / 1e6 }
/// The process's CPU time so far (user and system, every thread: the store's background threads count), ns.
func cpuNanoseconds() -> UInt64 {
    var time = timespec()
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &time)
    return UInt64(time.tv_sec) * 1_000_000_000 + UInt64(time.tv_nsec)
}

/// The records of the comparison's data set: JSON-like, 100–220 bytes, 4 types, no references; key k is id k + 1.
func makeRecords(_ count: Int) -> [GeneratedObject] {
    var generator = PayloadGenerator(lengthRange: 100...220)
    return (0..<count).map { _ in generator.next(earlierCount: 0) }
}
/// The comparison's read keys (its DataSet draws them with the same seed), as ids.
func makeReadIDs(_ count: Int, objects: Int) -> [ObjectID] {
    randomIDs(count: count, in: 1...UInt64(objects), seed: 0xC0FF_EE00_1234)
}

let key = AESGCMCipher.newKey()
enum Kind: String, CaseIterable {
    case plain = "Plain"
    case encrypted = "Encrypted"

    func options() throws -> StoreOptions {
        var options = StoreOptions()
        if self == .encrypted { options.cipher = try AESGCMCipher(key: key) }
        return options
    }
}

/// Every regular file under `directory`, in bytes (st_size), by kind (the name's extension, or the whole
/// name when it has none); "" is the total.
func bytesOnDisk(_ directory: String) -> [String: Double] {
    let manager = FileManager.default
    var bytes: [String: Double] = [:]
    for case let name as String in manager.enumerator(atPath: directory)?.allObjects ?? [] {
        guard let attributes = try? manager.attributesOfItem(atPath: directory + "/" + name),
            attributes[.type] as? FileAttributeType == .typeRegular
        else { continue }
        let size = Double((attributes[.size] as? NSNumber)?.intValue ?? 0)
        let file = name.split(separator: "/").last.map(String.init) ?? name
        bytes[file.split(separator: ".").count > 1 ? "*." + file.split(separator: ".").last! : file, default: 0] += size
        bytes["", default: 0] += size
        if file.hasSuffix(".seg") { bytes["segmentFiles", default: 0] += 1 }
    }
    return bytes
}

/// VmRSS and RssAnon of /proc/self/status in bytes, after giving free heap back to the system (malloc_trim).
func residentMemory() -> (rss: Double, anonymous: Double) {
    cmallocinfo_trim()
    let status = (try? String(contentsOfFile: "/proc/self/status", encoding: .utf8)) ?? ""
    func field(_ name: String) -> Double {
        let line = status.split(separator: "\n").first { $0.hasPrefix(name + ":") }
        return Double(line?.split(separator: " ").dropFirst().first ?? "").map { $0 * 1_024 } ?? .nan
    }
    return (field("VmRSS"), field("RssAnon"))
}

/// Writes `records` (repeated up to `count`) as ids 1...count, `batchSize` per `write`; returns puts/s.
func fill(_ store: Store, _ records: [GeneratedObject], count: Int) throws -> Double {
    try store.reserveIDs(through: ObjectID(UInt64(count)))
    let start = nanoseconds()
    for offset in stride(from: 0, to: count, by: batchSize) {
        var batch = WriteBatch()
        for index in offset..<min(offset + batchSize, count) {
            let record = records[index % records.count]
            batch.put(ObjectID(UInt64(index) + 1), typeTag: record.typeTag, payload: record.payload)
        }
        try store.write(batch)
    }
    return Double(count) * 1e9 / Double(nanoseconds() - start)
}

/// Reads `ids` in Snapshots of `snapshotSize`, copying every payload out; returns gets/s.
func timedGets(_ store: Store, _ ids: [ObjectID]) throws -> Double {
    var bytes = 0
    let start = nanoseconds()
    for offset in stride(from: 0, to: ids.count, by: snapshotSize) {
        let snapshot = try store.snapshot()
        for id in ids[offset..<min(offset + snapshotSize, ids.count)] {
            bytes &+= try snapshot.get(id)?.payload.count ?? 0
        }
    }
    let rate = Double(ids.count) * 1e9 / Double(nanoseconds() - start)
    if bytes == 0 { throw LogStoreError(.invalidArgument, "no payload read") }
    return rate
}

/// One repetition of every workload on `kind`; returns the figures by key.
func run(_ kind: Kind, records: [GeneratedObject], readIDs: [ObjectID], reopenCount: Int) throws -> [String: Double] {
    var figures: [String: Double] = [:]
    let options = try kind.options()
    let scratch = TemporaryDirectory(prefix: "logstore-encryption-figures")
    defer { scratch.remove() }
    let directory = scratch.child("store")

    // Batched puts, then the bytes the closed store holds.
    var store = try Store.open(at: directory, options: options)
    var cpuStart = cpuNanoseconds()
    figures["puts"] = try fill(store, records, count: records.count)
    try store.close()
    figures["putsCPU"] = Double(cpuNanoseconds() - cpuStart) / 1e3 / Double(records.count)
    for (file, bytes) in bytesOnDisk(directory) {
        figures[file == "segmentFiles" ? file : "bytes" + file] = bytes
    }

    // Random gets on a fresh open (cold), then after an untimed pass over every key (warm).
    let before = residentMemory()
    store = try Store.open(at: directory, options: options)
    figures["rssOpen"] = residentMemory().anonymous - before.anonymous
    figures["getsCold"] = try timedGets(store, readIDs)
    _ = try timedGets(store, (1...UInt64(records.count)).map { ObjectID($0) })
    cpuStart = cpuNanoseconds()
    figures["gets"] = try timedGets(store, readIDs)
    figures["getsCPU"] = Double(cpuNanoseconds() - cpuStart) / 1e3 / Double(readIDs.count)
    let after = residentMemory()
    figures["rss"] = after.rss - before.rss
    figures["rssAnonymous"] = after.anonymous - before.anonymous
    try store.close()

    // Open of a larger store closed cleanly: open alone and open + one get, median of 5 after an untimed open.
    guard reopenCount > 0 else { return figures }
    let large = scratch.child("large")
    store = try Store.open(at: large, options: options)
    _ = try fill(store, records, count: reopenCount)
    try store.close()
    var opens: [Double] = []
    var opensWithGet: [Double] = []
    for index in 0...5 {
        let id = ObjectID((readIDs[index % readIDs.count].rawValue - 1) % UInt64(reopenCount) + 1)
        let start = nanoseconds()
        let reopened = try Store.open(at: large, options: options)
        let opened = milliseconds(since: start)
        guard try reopened.get(id) != nil else { throw LogStoreError(.invalidArgument, "\(id) missing") }
        let openedWithGet = milliseconds(since: start)
        try reopened.close()
        if index > 0 {  // the first open warms the page cache
            opens.append(opened)
            opensWithGet.append(openedWithGet)
        }
    }
    figures["open"] = opens.sorted()[opens.count / 2]
    figures["openGet"] = opensWithGet.sorted()[opensWithGet.count / 2]
    return figures
}

// The machine.
let cpuInfo = (try? String(contentsOfFile: "/proc/cpuinfo", encoding: .utf8)) ?? ""
let model =
    cpuInfo.split(separator: "\n").first { $0.hasPrefix("model name") }
    .flatMap { $0.split(separator: ":", maxSplits: 1).last }.map { $0.trimmingCharacters(in: .whitespaces) }
    ?? "unknown"
let hasAES = cpuInfo.split(separator: "\n").first { $0.hasPrefix("flags") }?.split(separator: " ").contains("aes")
let formatter = ISO8601DateFormatter()
let began = nanoseconds()

// Untimed warm-up of both stores on a tenth of the data.
for kind in Kind.allCases {
    progress("warm-up: \(kind.rawValue)")
    let count = max(objects / 10, 2_000)
    _ = try run(
        kind, records: makeRecords(count), readIDs: makeReadIDs(max(gets / 10, 10_000), objects: count),
        reopenCount: 0)
}

progress("generating \(objects) records")
let records = makeRecords(objects)
let readIDs = makeReadIDs(gets, objects: objects)
var samples: [String: [Kind: [Double]]] = [:]
for repetition in 0..<runs {
    for kind in Kind.allCases {
        progress("repetition \(repetition + 1) of \(runs): \(kind.rawValue)")
        for (figure, value) in try run(kind, records: records, readIDs: readIDs, reopenCount: reopenObjects) {
            samples[figure, default: [:]][kind, default: []].append(value)
        }
    }
}

@MainActor func median(_ figure: String, _ kind: Kind) -> Double {
    let values = (samples[figure]?[kind] ?? []).sorted()
    guard !values.isEmpty else { return .nan }
    return values.count % 2 == 1
        ? values[values.count / 2] : (values[values.count / 2 - 1] + values[values.count / 2]) / 2
}
/// "1,234,567.8" with `decimals` digits after the point.
func grouped(_ value: Double, _ decimals: Int = 0) -> String {
    guard value.isFinite else { return "–" }
    let text = String(format: "%.\(decimals)f", abs(value))
    let digits = text.prefix { $0 != "." }
    var result = value < 0 && text.contains(where: { $0 != "0" && $0 != "." }) ? "-" : ""
    for (index, character) in digits.enumerated() {
        if index > 0 && (digits.count - index) % 3 == 0 { result.append(",") }
        result.append(character)
    }
    return result + text.dropFirst(digits.count)
}
/// "median (min–max)", each scaled by `scale`.
@MainActor func cell(_ figure: String, _ kind: Kind, scale: Double = 1, decimals: Int = 0) -> String {
    let values = samples[figure]?[kind] ?? []
    guard let low = values.min(), let high = values.max() else { return "–" }
    let text = grouped(median(figure, kind) / scale, decimals)
    return low == high ? text : "\(text) (\(grouped(low / scale, decimals))–\(grouped(high / scale, decimals)))"
}

let batches = Double((objects + batchSize - 1) / batchSize)
// Every segment but the newest ends with a seal frame, a batch of its own.
let seals = max(0, median("segmentFiles", .plain) - 1)
let batchesWritten = batches + seals
let extraBytes = median("bytes", .encrypted) - median("bytes", .plain)
print(
    "processor: \(model); AES instructions: \(hasAES == true ? "yes" : "no"); cores: \(ProcessInfo.processInfo.activeProcessorCount)"
)
print("date: \(formatter.string(from: Date()))")
print("command: swift run -c release EncryptionFigures " + arguments.dropFirst().joined(separator: " "))
print(
    "\(grouped(Double(objects))) records of 100–220 bytes, \(grouped(Double(gets))) random gets, reopen store of "
        + "\(grouped(Double(reopenObjects))) records; \(runs) repetitions (plain, encrypted, plain, …): median (min–max)"
)
print("")
print("| Workload | Unit | Plain | Encrypted | Encrypted ÷ plain |")
print("| --- | --- | ---: | ---: | ---: |")
let rows: [(String, String, String, Double, Int)] = [
    ("puts", "Batched puts (1,000 per batch)", "puts/s", 1, 0),
    ("putsCPU", "Batched puts: CPU per put, close included (all threads)", "µs", 1, 3),
    ("bytes", "Bytes on disk after close", "bytes", 1, 0),
    ("gets", "Random gets, 1 thread (after a pass over every key)", "gets/s", 1, 0),
    ("getsCPU", "Random gets: CPU per get (after the pass)", "µs", 1, 3),
    ("getsCold", "Random gets, 1 thread, cold (fresh open, no pass)", "gets/s", 1, 0),
    ("rss", "RSS growth, open → after the gets (VmRSS)", "MiB", 1_048_576, 1),
    ("rssAnonymous", "… of it anonymous (RssAnon)", "MiB", 1_048_576, 1),
    ("rssOpen", "RssAnon growth, open alone (before any get)", "MiB", 1_048_576, 1),
    ("open", "Open, \(grouped(Double(reopenObjects))) records", "ms", 1, 2),
    ("openGet", "Open + one get, \(grouped(Double(reopenObjects))) records", "ms", 1, 2),
]
for (figure, title, unit, scale, decimals) in rows where samples[figure] != nil {
    let ratio = median(figure, .encrypted) / median(figure, .plain)
    print(
        "| \(title) | \(unit) | \(cell(figure, .plain, scale: scale, decimals: decimals)) | "
            + "\(cell(figure, .encrypted, scale: scale, decimals: decimals)) | \(String(format: "%.2f", ratio)) |")
}
print(
    "| Encrypted − plain bytes, per batch (\(grouped(batches)) batches) | B | – | "
        + "\(grouped(extraBytes / batches, 1)) | – |")
print("| Encrypted − plain bytes, per record | B | – | \(grouped(extraBytes / Double(objects), 3)) | – |")
let extraSegmentBytes = median("bytes*.seg", .encrypted) - median("bytes*.seg", .plain)
print(
    "| … of it in segments (*.seg), per batch written (\(grouped(batches)) of records, \(grouped(seals)) seals) "
        + "| B | – | \(grouped(extraSegmentBytes / batchesWritten, 1)) | – |")
let extraSideBytes = extraBytes - extraSegmentBytes
print("| … of it in the other files (identity, hint and dictionary envelopes) | B | – | \(grouped(extraSideBytes)) | – |")

let fileKinds = samples.keys.filter { $0.hasPrefix("bytes") && $0 != "bytes" }.sorted()
print(
    "\nbytes by file (median, plain → encrypted): "
        + fileKinds.map {
            "\($0.dropFirst(5)) \(grouped(median($0, .plain))) → \(grouped(median($0, .encrypted)))"
        }.joined(separator: "; "))
print("")
print("Floors:")
func check(_ text: String, _ met: Bool) { print("- \(text): \(met ? "met" : "**not met**")") }
let putRatio = median("puts", .encrypted) / median("puts", .plain)
let getRatio = median("gets", .encrypted) / median("gets", .plain)
let coldRatio = median("getsCold", .encrypted) / median("getsCold", .plain)
let openRatio = median("open", .encrypted) / median("open", .plain)
let openGetRatio = median("openGet", .encrypted) / median("openGet", .plain)
check(String(format: "batched puts encrypted ≥ 80%% of plain (%.0f%%)", 100 * putRatio), putRatio >= 0.8)
check(String(format: "random gets encrypted ≥ 80%% of plain (%.0f%%)", 100 * getRatio), getRatio >= 0.8)
check(String(format: "random gets, cold, encrypted ≥ 80%% of plain (%.0f%%)", 100 * coldRatio), coldRatio >= 0.8)
if samples["open"] != nil {
    check(String(format: "open encrypted ≤ 1.3× plain (%.2f×)", openRatio), openRatio <= 1.3)
    check(String(format: "open + one get encrypted ≤ 1.3× plain (%.2f×)", openGetRatio), openGetRatio <= 1.3)
}
check(
    String(format: "bytes encrypted ≤ plain + 28 B per batch (+%.1f B per batch)", extraBytes / batches),
    extraBytes <= sealOverhead * batches)
check(
    String(
        format: "segments: encrypted ≤ plain + 28 B per batch written (+%.1f B per batch)",
        extraSegmentBytes / batchesWritten),
    extraSegmentBytes <= sealOverhead * batchesWritten)
print(String(format: "\nrun time: %.0f s", Double(nanoseconds() - began) / 1e9))
