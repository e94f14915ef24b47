// Durable single-record puts (fsync .always) from 1 and from N concurrent writers, each writer
// committing one record at a time for a fixed time; prints puts/s and the ratio. Run from Benchmarks/:
//
//   swift run -c release WriterFigures [--writers 8] [--seconds 3] [--runs 3]
//
// The package-benchmark suite measures the same ("Put: single record, fsync always, …"); this one runs
// longer, in one process, so that `perf` can watch it.

import BenchmarkSupport
import LogStore

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

var writers = 8
var seconds = 3.0
var runs = 3
var policy = FsyncPolicy.always
var arguments = CommandLine.arguments.dropFirst()
while let argument = arguments.popFirst() {
    switch argument {
    case "--writers": writers = Int(arguments.popFirst() ?? "") ?? writers
    case "--seconds": seconds = Double(arguments.popFirst() ?? "") ?? seconds
    case "--runs": runs = Int(arguments.popFirst() ?? "") ?? runs
    case "--no-sync": policy = .never
    default:
        print("usage: WriterFigures [--writers N] [--seconds S] [--runs R] [--no-sync]")
        exit(2)
    }
}

/// Puts per second of `threads` writers, each committing one record at a time for `seconds`.
func durablePuts(threads: Int, seconds: Double, policy: FsyncPolicy) throws -> Double {
    let directory = TemporaryDirectory()
    defer { directory.remove() }
    let store = try Store.open(at: directory.child("store"), options: StoreOptions(fsyncPolicy: policy))
    let settled = try fillStore(store, count: 10_000)
    var generator = PayloadGenerator()
    let pool = generator.pool(count: 10_000)
    let deadline = nanoseconds() + UInt64(seconds * 1e9)
    let counts = UnsafeMutablePointer<Int>.allocate(capacity: threads * 16)
    counts.initialize(repeating: 0, count: threads * 16)
    defer { counts.deallocate() }
    let started = nanoseconds()
    nonisolated(unsafe) let slots = counts
    onThreads(threads) { writer in
        var index = writer * 1000
        var written = 0
        let span = settled.lastID.rawValue - settled.firstID.rawValue + 1
        while nanoseconds() < deadline {
            let object = pool[index % pool.count]
            index += 1
            let id = store.newID()
            let references = object.referenceDistances.map {
                ObjectID(settled.firstID.rawValue + (id.rawValue &- $0) % span)
            }
            do {
                try store.put(id, typeTag: object.typeTag, references: references, payload: object.payload)
            } catch {
                fatalError("put failed: \(error)")
            }
            written += 1
        }
        slots[writer * 16] = written
    }
    let elapsed = Double(nanoseconds() - started) / 1e9
    let commits = try store.statistics().groupCommits
    try store.close()
    print(
        "  \(threads) writer(s): \(commits.groups) syncs, "
            + String(
                format: "%.2f commits per sync, sync %.0f µs, gather %.0f µs", commits.batchesPerGroup,
                Double(commits.syncNanoseconds) / Double(max(commits.groups, 1)) / 1e3,
                Double(commits.gatherNanoseconds) / Double(max(commits.groups, 1)) / 1e3))
    let total = (0..<threads).reduce(0) { $0 + counts[$1 * 16] }
    return Double(total) / elapsed
}

for run in 1...runs {
    let one = try durablePuts(threads: 1, seconds: seconds, policy: policy)
    let many = try durablePuts(threads: writers, seconds: seconds, policy: policy)
    print(
        "run \(run): 1 writer \(Int(one)) puts/s, \(writers) writers \(Int(many)) puts/s, ratio "
            + String(format: "%.2f", many / one))
}
