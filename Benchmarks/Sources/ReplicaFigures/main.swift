// Replicas: how long a pass takes and how far the replica lags behind a busy writer, what a pass costs the
// writer's commits, and how fast the first pass copies a store against a plain sequential copy. Run from
// Benchmarks/:
//
//   swift run -c release ReplicaFigures                        # 10 s of writing, a pass every 100 ms
//   swift run -c release ReplicaFigures --seconds 5 --interval-ms 50 --rate 5000 --store-mib 256
//
// Lag: a writer thread commits batches of 10 records of 1 KiB (fsync every 10 ms), `--rate` a second, while
// the main thread runs a pass every interval; after each pass, the commits the store holds beyond the
// replica's (the writer's newest sequence minus the pass's). Commit latency: the writer's commits timed one
// by one, first alone for the same time, then beside the passes. First pass: a store of `--store-mib` of
// incompressible 1 KiB records in 64 MiB segments, replicated into an empty folder, against `cp -r` of the
// same store (page cache dropped before each, medians of `--runs`).

import BenchmarkSupport
import Foundation
import LogStore
import LogStoreExamples
import Synchronization

let arguments = CommandLine.arguments
func option(_ name: String) -> String? {
    guard let index = arguments.firstIndex(of: name), index + 1 < arguments.count else { return nil }
    return arguments[index + 1]
}
let seconds = Double(option("--seconds") ?? "") ?? 10
let intervalMilliseconds = Int(option("--interval-ms") ?? "") ?? 100
let storeMiB = Int(option("--store-mib") ?? "") ?? 1_024
let runs = Int(option("--runs") ?? "") ?? 3
let rate = Double(option("--rate") ?? "") ?? 2_000
let root = option("--directory") ?? NSTemporaryDirectory() + "replica-figures-\(getpid())"

func progress(_ text: String) { FileHandle.standardError.write(Data((text + "\n").utf8)) }
func percentile(_ values: [Double], _ fraction: Double) -> Double {
    let sorted = values.sorted()
    return sorted[min(sorted.count - 1, Int(Double(sorted.count) * fraction))]
}
func milliseconds(since start: UInt64) -> Double { Double(nanoseconds() - start) / 1e6 }

try? FileManager.default.removeItem(atPath: root)
try FileManager.default.createDirectory(atPath: root, withIntermediateDirectories: true)
defer { try? FileManager.default.removeItem(atPath: root) }

func payload(_ size: Int, _ generator: inout SplitMix64) -> [UInt8] {
    (0..<size / 8).flatMap { _ in withUnsafeBytes(of: generator.next()) { Array($0) } }
}

/// A flag one thread sets and another reads.
final class StopFlag: Sendable {
    let value = Atomic<Bool>(false)
}

/// Commits batches of ten 1 KiB records until `stop`, timing each; returns the latencies in milliseconds.
func writeUntilStopped(_ store: Store, _ stop: StopFlag, seed: UInt64) -> [Double] {
    var generator = SplitMix64(seed: seed)
    var latencies: [Double] = []
    let began = nanoseconds()
    while !stop.value.load(ordering: .relaxed) {
        // At most `rate` commits a second.
        let due = began + UInt64(Double(latencies.count) / rate * 1e9)
        let now = nanoseconds()
        if due > now { usleep(UInt32((due - now) / 1_000)) }
        var batch = WriteBatch()
        for _ in 0..<10 { batch.put(Record(id: store.newID(), typeTag: 1, payload: payload(1_024, &generator))) }
        let start = nanoseconds()
        guard (try? store.write(batch)) != nil else { break }
        latencies.append(milliseconds(since: start))
    }
    return latencies
}

/// Runs the writer on its own thread for `seconds`, calling `during` on this one until then.
func timedWriter(_ store: Store, seed: UInt64, during: () throws -> Void) rethrows -> [Double] {
    let stop = StopFlag()
    let result = Mutex<[Double]>([])
    let thread = Thread { result.withLock { $0 = writeUntilStopped(store, stop, seed: seed) } }
    thread.start()
    let end = Date().addingTimeInterval(seconds)
    while Date() < end { try during() }
    stop.value.store(true, ordering: .relaxed)
    while !thread.isFinished { usleep(1_000) }
    return result.withLock { $0 }
}

// Lag and commit latency.
var options = StoreOptions(fsyncPolicy: .interval(.milliseconds(10)))
options.segmentSize = 8 << 20
options.compression = false
let store = try Store.open(at: root + "/busy", options: options)
progress("writer alone for \(seconds) s")
let alone = timedWriter(store, seed: 1) { usleep(10_000) }
let replica = root + "/busy-replica"
try store.replicate(to: replica)
var passes: [Double] = []
var lags: [Double] = []
var shipped: UInt64 = 0
progress("writer beside a pass every \(intervalMilliseconds) ms")
let beside = try timedWriter(store, seed: 2) {
    let start = nanoseconds()
    let pass = try store.replicate(to: replica)
    passes.append(milliseconds(since: start))
    lags.append(Double(try store.snapshot().sequence - pass.sequence))
    shipped += pass.bytesCopied + pass.bytesAppended
    usleep(UInt32(intervalMilliseconds) * 1_000)
}
try store.close()
print(
    "a writer committing \(Int(rate)) batches of 10 x 1 KiB a second (fsync every 10 ms) for \(seconds) s, "
        + "a pass every \(intervalMilliseconds) ms (after a first pass):")
print(
    String(
        format: "  passes: %d, %.1f MiB shipped; pass time p50 %.2f ms, p99 %.2f ms, max %.2f ms", passes.count,
        Double(shipped) / 1_048_576, percentile(passes, 0.5), percentile(passes, 0.99), passes.max() ?? 0))
print(
    String(
        format: "  lag after a pass (commits the replica lacks): p50 %.0f, p99 %.0f, max %.0f",
        percentile(lags, 0.5), percentile(lags, 0.99), lags.max() ?? 0))
print(
    String(
        format: "  commit latency alone: p50 %.3f ms, p99 %.3f ms (%d commits); beside the passes: p50 %.3f ms, "
            + "p99 %.3f ms (%d commits)", percentile(alone, 0.5), percentile(alone, 0.99), alone.count,
        percentile(beside, 0.5), percentile(beside, 0.99), beside.count))

// First pass against a plain copy.
var fillOptions = StoreOptions(fsyncPolicy: .never)
fillOptions.segmentSize = 64 << 20
fillOptions.compression = false
fillOptions.compaction.background = false
let large = root + "/large"
do {
    let filled = try Store.open(at: large, options: fillOptions)
    var generator = SplitMix64(seed: 3)
    for _ in 0..<(storeMiB * 1_024 / 1_000) {
        var batch = WriteBatch()
        for _ in 0..<1_000 { batch.put(Record(id: filled.newID(), typeTag: 1, payload: payload(1_024, &generator))) }
        try filled.write(batch)
    }
    try filled.sync()
    try filled.close()
}
let bytes = Double(directorySize(large).logical)
var replicaSeconds: [Double] = []
var copySeconds: [Double] = []
for run in 0..<runs {
    progress("first pass, run \(run + 1) of \(runs)")
    let target = root + "/first-replica"
    let copy = root + "/plain-copy"
    removeTree(target)
    removeTree(copy)
    evictFromPageCache(large)
    let opened = try Store.open(at: large, options: StoreOptions(createIfMissing: false, readOnly: true))
    var start = nanoseconds()
    try opened.replicate(to: target)
    replicaSeconds.append(Double(nanoseconds() - start) / 1e9)
    try opened.close()
    evictFromPageCache(large)
    start = nanoseconds()
    let process = Process()
    process.executableURL = URL(fileURLWithPath: "/bin/sh")
    process.arguments = ["-c", "cp -r '\(large)' '\(copy)' && sync '\(copy)'/*"]
    try process.run()
    process.waitUntilExit()
    copySeconds.append(Double(nanoseconds() - start) / 1e9)
}
let replicaRate = bytes / 1_048_576 / percentile(replicaSeconds, 0.5)
let copyRate = bytes / 1_048_576 / percentile(copySeconds, 0.5)
print(
    String(
        format: "first pass of a %.0f MiB store (cold cache, median of %d): %.0f MiB/s; cp -r + sync: %.0f MiB/s "
            + "(%.0f%%)", bytes / 1_048_576, runs, replicaRate, copyRate, 100 * replicaRate / copyRate))
