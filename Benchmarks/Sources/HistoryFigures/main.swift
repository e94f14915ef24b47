// Retained moments: how long opening one takes against a normal open of the store (both read-only, from
// hint files), and what moments cost on disk under churn against the records they keep alive. Run from
// Benchmarks/:
//
//   swift run -c release HistoryFigures                       # 1M objects for the open, 100k for churn
//   swift run -c release HistoryFigures --objects 200000 --churn-objects 20000 --steps 5 --runs 3
//
// Space: every step overwrites a tenth of the objects (random ones), compacts the store (`compact()`: every
// segment holding garbage that no moment holds), and retains a moment. What the moments cost is the files
// they hold that the store no longer has plus the garbage in the store's segments they hold (compaction
// leaves those alone); the records they keep alive are their records (id and version) that the store no
// longer has, each counted once however many moments hold it.

import BenchmarkSupport
import Foundation
import LogStore
import LogStoreExamples

let arguments = CommandLine.arguments
func option(_ name: String) -> String? {
    guard let index = arguments.firstIndex(of: name), index + 1 < arguments.count else { return nil }
    return arguments[index + 1]
}
let objects = Int(option("--objects") ?? "") ?? 1_000_000
let churnObjects = Int(option("--churn-objects") ?? "") ?? 100_000
let steps = Int(option("--steps") ?? "") ?? 10
let runs = Int(option("--runs") ?? "") ?? 5
let root = option("--directory") ?? NSTemporaryDirectory() + "history-figures-\(getpid())"

func progress(_ text: String) { FileHandle.standardError.write(Data((text + "\n").utf8)) }
func median(_ values: [Double]) -> Double { values.sorted()[values.count / 2] }
func milliseconds(since start: UInt64) -> Double { Double(nanoseconds() - start) / 1e6 }
func mib(_ bytes: UInt64) -> String { String(format: "%.1f MiB", Double(bytes) / 1_048_576) }

var options = StoreOptions(fsyncPolicy: .never)
options.segmentSize = 8 << 20
options.compression = false
options.compaction.background = false
var generator = SplitMix64(seed: 7)
func payload(_ size: Int, _ generator: inout SplitMix64) -> [UInt8] {
    (0..<size / 8).flatMap { _ in withUnsafeBytes(of: generator.next()) { Array($0) } }
}

try? FileManager.default.removeItem(atPath: root)
try FileManager.default.createDirectory(atPath: root, withIntermediateDirectories: true)
defer { try? FileManager.default.removeItem(atPath: root) }

// Open: a store of `objects` 200-byte records, a moment of it, opened alternately with the store.
let openPath = root + "/open"
do {
    let store = try Store.open(at: openPath, options: options)
    var written = 0
    while written < objects {
        var batch = WriteBatch()
        for _ in 0..<min(1_000, objects - written) {
            batch.put(Record(id: store.newID(), typeTag: 1, payload: payload(200, &generator)))
        }
        try store.write(batch)
        written += batch.count
    }
    try store.retain(as: "all")
    try store.writeHints()
    try store.close()
}
var normal: [Double] = []
var retained: [Double] = []
let readOnly = StoreOptions(createIfMissing: false, readOnly: true)
for _ in 0..<runs {
    var start = nanoseconds()
    try Store.open(at: openPath, options: readOnly).close()
    normal.append(milliseconds(since: start))
    start = nanoseconds()
    try Store.open(at: openPath, retained: "all").close()
    retained.append(milliseconds(since: start))
}
print("open of \(objects) objects (200 B each), read-only, median of \(runs), alternating:")
print(
    String(
        format: "  store %.1f ms, retained moment %.1f ms: %.2fx (floor: at most 1.5x)", median(normal),
        median(retained), median(retained) / median(normal)))
try FileManager.default.removeItem(atPath: openPath)

// Space under churn.
let churnPath = root + "/churn"
let store = try Store.open(at: churnPath, options: options)
var ids: [ObjectID] = []
var batch = WriteBatch()
for _ in 0..<churnObjects {
    let id = store.newID()
    ids.append(id)
    batch.put(Record(id: id, typeTag: 1, payload: payload(1_024, &generator)))
    if batch.count == 1_000 {
        try store.write(batch)
        batch = WriteBatch()
    }
}
if !batch.isEmpty { try store.write(batch) }
for step in 0..<steps {
    for _ in 0..<(churnObjects / 10) {
        let id = ids[Int(generator.next() % UInt64(ids.count))]
        batch.put(Record(id: id, typeTag: 1, payload: payload(1_024, &generator)))
        if batch.count == 1_000 {
            try store.write(batch)
            batch = WriteBatch()
        }
    }
    if !batch.isEmpty {
        try store.write(batch)
        batch = WriteBatch()
    }
    _ = try store.compact()
    try store.retain(as: "step-\(step)")
    progress("step \(step + 1) of \(steps)")
}
let live = try store.snapshot()
var keptAlive: [UInt64: Set<UInt64>] = [:]
var keptBytes: UInt64 = 0
let usage = try store.historyUsage()
print(
    "space under churn: \(churnObjects) objects of 1 KiB (incompressible), 8 MiB segments, a tenth overwritten "
        + "per step, then compact(), then a moment:")
print("  moment   files not in the store   garbage held in the store   records it keeps alive")
for moment in usage.moments {
    let opened = try Store.open(at: churnPath, retained: moment.name)
    let view = try opened.snapshot()
    var alive: UInt64 = 0
    for id in view.ids() where view.version(of: id) != live.version(of: id) {
        guard let (record, version) = try view.versionedGet(id) else { continue }
        alive += UInt64(record.payload.count)
        if keptAlive[id.rawValue, default: []].insert(version).inserted { keptBytes += UInt64(record.payload.count) }
    }
    try opened.close()
    print("  \(moment.name)   \(mib(moment.bytesNotInStore))   \(mib(moment.garbageBytesHeld))   \(mib(alive))")
}
let storeBytes = try store.statistics().totalBytes
print(
    "  all moments: \(mib(usage.bytes)) of files not in the store and \(mib(usage.garbageBytesHeld)) of garbage "
        + "held in it (each once) = \(mib(usage.totalBytes)), for \(mib(keptBytes)) of records they keep alive (each "
        + "version once): " + String(format: "%.2fx", Double(usage.totalBytes) / Double(max(keptBytes, 1)))
        + "; the store's segments: \(mib(storeBytes))")
try store.close()
