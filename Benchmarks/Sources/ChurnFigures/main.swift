// Space under churn: a store of N objects overwritten in full five times (each round a new random order,
// batches of 1,000, default options: fsync .always, background compaction), with the bytes on disk
// sampled every 250 ms against the bytes of the live records; then an explicit compact. Then the same
// workload with background compaction off, for the write amplification compaction costs.
//
//   swift run -c release ChurnFigures [OBJECTS]      # default 1,000,000
//
// Bytes on disk: the blocks allocated to every file in the store directory (segments, hints, dictionaries,
// manifest). Live bytes: the frames of the live records (`StoreStatistics.liveBytes`). Bytes written:
// `wchar` of /proc/self/io over the workload (every write the process makes, segments and hints alike).

import BenchmarkSupport
import Dispatch
import Foundation
import LogStore
import LogStoreExamples
import Synchronization

let arguments = CommandLine.arguments
let objectCount = arguments.count > 1 ? Int(arguments[1]) ?? 1_000_000 : 1_000_000
let rounds = 5

func bytesWrittenByProcess() -> UInt64 {
    guard let text = try? String(contentsOfFile: "/proc/self/io", encoding: .utf8) else { return 0 }
    for line in text.split(separator: "\n") where line.hasPrefix("wchar:") {
        return UInt64(line.dropFirst(6).trimmingCharacters(in: .whitespaces)) ?? 0
    }
    return 0
}

struct Sample {
    var seconds: Double
    var disk: Int
    var live: UInt64
    var ratio: Double { live == 0 ? 0 : Double(disk) / Double(live) }
}

/// Runs the workload on a new store; returns the samples, the bytes written and the store's path.
func run(background: Bool, scratch: TemporaryDirectory) throws -> (samples: [Sample], written: UInt64, seconds: Double, afterCompact: Sample) {
    let path = scratch.child(background ? "churn" : "churn-no-compaction")
    var options = StoreOptions()
    options.compaction.background = background
    let store = try Store.open(at: path, options: options)
    var generator = PayloadGenerator()
    let pool = generator.pool(count: 10_000)
    var ids: [ObjectID] = []
    ids.reserveCapacity(objectCount)
    // The initial load (not sampled).
    var done = 0
    while done < objectCount {
        var batch = WriteBatch()
        for _ in 0..<min(1000, objectCount - done) {
            let id = store.newID()
            ids.append(id)
            batch.put(id, typeTag: 1, payload: pool[done % pool.count].payload)
            done += 1
        }
        try store.write(batch)
    }

    let samples = Mutex<[Sample]>([])
    let stop = Atomic<Bool>(false)
    let start = nanoseconds()
    let sampler = Thread {
        while !stop.load(ordering: .relaxed) {
            if let statistics = try? store.statistics() {
                let disk = directorySize(path).allocated
                let sample = Sample(
                    seconds: Double(nanoseconds() - start) / 1e9, disk: disk, live: statistics.liveBytes)
                samples.withLock { $0.append(sample) }
            }
            usleep(250_000)
        }
    }
    sampler.start()
    let writtenBefore = bytesWrittenByProcess()
    var random = SplitMix64(seed: 0xC4_0A11)
    for round in 0..<rounds {
        var order = ids
        for index in stride(from: order.count - 1, to: 0, by: -1) {
            order.swapAt(index, random.below(index + 1))
        }
        var position = 0
        while position < order.count {
            var batch = WriteBatch()
            for id in order[position..<min(position + 1000, order.count)] {
                batch.put(id, typeTag: 1, payload: pool[(position + round * 7919) % pool.count].payload)
                position += 1
            }
            try store.write(batch)
        }
    }
    let seconds = Double(nanoseconds() - start) / 1e9
    let written = bytesWrittenByProcess() - writtenBefore
    stop.store(true, ordering: .relaxed)
    while !sampler.isFinished { usleep(10_000) }
    try store.compact()
    let statistics = try store.statistics()
    let afterCompact = Sample(seconds: seconds, disk: directorySize(path).allocated, live: statistics.liveBytes)
    try store.close()
    removeTree(path)
    return (samples.withLock { $0 }, written, seconds, afterCompact)
}

let scratch = TemporaryDirectory(prefix: "logstore-churn")
defer { scratch.remove() }
print("Space under churn: \(objectCount) objects of 100-300 bytes, overwritten \(rounds) times in random order")
let churn = try run(background: true, scratch: scratch)
let worst = churn.samples.max { $0.ratio < $1.ratio }
let ratios = churn.samples.map(\.ratio).sorted()
print(
    "default options: \(churn.samples.count) samples over \(String(format: "%.1f", churn.seconds)) s; bytes on disk ÷ live bytes: "
        + "max \(String(format: "%.3f", worst?.ratio ?? 0)) (at \(String(format: "%.1f", worst?.seconds ?? 0)) s), "
        + "median \(String(format: "%.3f", ratios.isEmpty ? 0 : ratios[ratios.count / 2]))")
print("samples (s: ratio): " + churn.samples.map { String(format: "%.1f: %.2f", $0.seconds, $0.ratio) }.joined(separator: ", "))
print(
    "after an explicit compact: \(String(format: "%.3f", churn.afterCompact.ratio)) "
        + "(\(churn.afterCompact.disk) bytes on disk, \(churn.afterCompact.live) live)")
let plain = try run(background: false, scratch: scratch)
print(
    "bytes written: \(churn.written) with background compaction, \(plain.written) without; "
        + "write amplification of compaction \(String(format: "%.2f", Double(churn.written) / Double(plain.written)))")
print(
    "overwrite throughput: \(Int(Double(rounds * objectCount) / churn.seconds)) puts/s with background compaction, "
        + "\(Int(Double(rounds * objectCount) / plain.seconds)) without")
