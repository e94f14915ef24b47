// What observing the store costs its writers, and how soon an observer hears of a commit. Run from
// Benchmarks/:
//
//   swift run -c release ObserverFigures [--runs 3] [--count 200000] [--seconds 3] [--samples 2000]
//
// 1. Batched puts (1,000 per batch, fsync .always, COUNT objects) with 0, 1 and 100 observers, each a task
//    reading `store.changes()` and counting the objects written; the three run in turn, RUNS times.
// 2. Durable single puts from 8 writer threads for SECONDS, with 0, 1 and 100 observers, in turn.
// 3. Latency, commit → observer: one writer commits SAMPLES single durable puts 1 ms apart; one observer
//    notes when each batch reaches it. Printed from the moment `write` returned (acknowledged) and from
//    the moment it was called (which includes the fsync), as p50 / p99 / max.

import BenchmarkSupport
import Foundation
import LogStore
import Synchronization

/// The command line's settings, and the payloads every measurement writes.
struct Settings: Sendable {
    var runs = 3
    var count = 200_000
    var seconds = 3.0
    var samples = 2_000
    var pool: [GeneratedObject] = []

    static func parse() -> Settings {
        var settings = Settings()
        var arguments = CommandLine.arguments.dropFirst()
        while let argument = arguments.popFirst() {
            switch argument {
            case "--runs": settings.runs = Int(arguments.popFirst() ?? "") ?? settings.runs
            case "--count": settings.count = Int(arguments.popFirst() ?? "") ?? settings.count
            case "--seconds": settings.seconds = Double(arguments.popFirst() ?? "") ?? settings.seconds
            case "--samples": settings.samples = Int(arguments.popFirst() ?? "") ?? settings.samples
            default:
                print("usage: ObserverFigures [--runs R] [--count N] [--seconds S] [--samples N]")
                exit(2)
            }
        }
        var generator = PayloadGenerator()
        settings.pool = generator.pool(count: 10_000)
        return settings
    }
}

/// Starts `observers` tasks that read the store's change feed and count what they see.
func startObservers(_ observers: Int, on store: Store) throws -> [Task<Int, Never>] {
    try (0..<observers).map { _ in
        let feed = try store.changes()
        return Task.detached {
            var seen = 0
            for await change in feed {
                if case .batch(let batch) = change { seen += batch.written.count }
            }
            return seen
        }
    }
}

/// Batched puts per second with `observers` observers.
func batchedPuts(observers: Int, _ settings: Settings) async throws -> Double {
    let (count, pool) = (settings.count, settings.pool)
    let scratch = TemporaryDirectory(prefix: "logstore-observer-figures")
    defer { scratch.remove() }
    let store = try Store.open(at: scratch.child("store"))
    let tasks = try startObservers(observers, on: store)
    var nextIndex = 0
    let start = nanoseconds()
    var done = 0
    while done < count {
        let size = min(1000, count - done)
        try store.write { batch in
            for _ in 0..<size {
                let object = pool[nextIndex % pool.count]
                nextIndex += 1
                batch.put(store.newID(), typeTag: object.typeTag, payload: object.payload)
            }
        }
        done += size
    }
    let elapsed = Double(nanoseconds() - start) / 1e9
    try store.close()
    for task in tasks { _ = await task.value }
    return Double(count) / elapsed
}

/// Durable single puts per second from 8 writers with `observers` observers.
func durableWriters(observers: Int, _ settings: Settings) async throws -> Double {
    let (seconds, pool) = (settings.seconds, settings.pool)
    let scratch = TemporaryDirectory(prefix: "logstore-observer-figures")
    defer { scratch.remove() }
    let store = try Store.open(at: scratch.child("store"))
    let tasks = try startObservers(observers, on: store)
    let threads = 8
    let deadline = nanoseconds() + UInt64(seconds * 1e9)
    let written = Atomic<Int>(0)
    let start = nanoseconds()
    onThreads(threads) { writer in
        var index = writer * 1000
        var local = 0
        while nanoseconds() < deadline {
            let object = pool[index % pool.count]
            index += 1
            guard (try? store.put(typeTag: object.typeTag, payload: object.payload)) != nil else { break }
            local += 1
        }
        written.add(local, ordering: .relaxed)
    }
    let elapsed = Double(nanoseconds() - start) / 1e9
    try store.close()
    for task in tasks { _ = await task.value }
    return Double(written.load(ordering: .relaxed)) / elapsed
}

/// Commit → observer latency in microseconds: from `write`'s return, and from its call.
func latencies(_ settings: Settings) async throws -> (fromReturn: [Double], fromCall: [Double]) {
    let (samples, pool) = (settings.samples, settings.pool)
    let scratch = TemporaryDirectory(prefix: "logstore-observer-figures")
    defer { scratch.remove() }
    let store = try Store.open(at: scratch.child("store"))
    let feed = try store.changes()
    let observer = Task.detached { () -> [UInt64: UInt64] in
        var received: [UInt64: UInt64] = [:]
        for await change in feed {
            if case .batch(let batch) = change { received[batch.sequence] = nanoseconds() }
        }
        return received
    }
    var calls: [UInt64: (call: UInt64, done: UInt64)] = [:]
    for index in 0..<samples {
        let object = pool[index % pool.count]
        let called = nanoseconds()
        let batch = try store.write { $0.put(store.newID(), typeTag: object.typeTag, payload: object.payload) }
        calls[batch.sequence] = (called, nanoseconds())
        try await Task.sleep(for: .milliseconds(1))
    }
    try store.close()
    let received = await observer.value
    var fromReturn: [Double] = []
    var fromCall: [Double] = []
    for (sequence, times) in calls {
        guard let at = received[sequence] else { continue }
        fromReturn.append(Double(Int64(bitPattern: at &- times.done)) / 1e3)
        fromCall.append(Double(at - times.call) / 1e3)
    }
    return (fromReturn.sorted(), fromCall.sorted())
}

func percentile(_ sorted: [Double], _ fraction: Double) -> Double {
    guard !sorted.isEmpty else { return .nan }
    return sorted[min(sorted.count - 1, Int(Double(sorted.count) * fraction))]
}

func format(_ value: Double) -> String { String(format: "%.0f", value) }

let settings = Settings.parse()
for run in 1...settings.runs {
    var batched: [Int: Double] = [:]
    var writers: [Int: Double] = [:]
    for observers in [0, 1, 100] { batched[observers] = try await batchedPuts(observers: observers, settings) }
    for observers in [0, 1, 100] { writers[observers] = try await durableWriters(observers: observers, settings) }
    let none = batched[0] ?? 1
    let durableNone = writers[0] ?? 1
    print(
        "run \(run): batched puts/s 0 observers \(format(none)), 1: \(format(batched[1] ?? 0)) "
            + "(\(String(format: "%.3f", (batched[1] ?? 0) / none))), 100: \(format(batched[100] ?? 0)) "
            + "(\(String(format: "%.3f", (batched[100] ?? 0) / none)))")
    print(
        "run \(run): 8 durable writers puts/s 0 observers \(format(durableNone)), 1: \(format(writers[1] ?? 0)) "
            + "(\(String(format: "%.3f", (writers[1] ?? 0) / durableNone))), 100: \(format(writers[100] ?? 0)) "
            + "(\(String(format: "%.3f", (writers[100] ?? 0) / durableNone)))")
}
let (fromReturn, fromCall) = try await latencies(settings)
print(
    "latency, write returned → observer (µs): p50 \(format(percentile(fromReturn, 0.5))), "
        + "p99 \(format(percentile(fromReturn, 0.99))), max \(format(fromReturn.last ?? .nan)) "
        + "(\(fromReturn.count) samples; negative: the observer heard before the committer woke)")
print(
    "latency, write called → observer (µs, includes the fsync): p50 \(format(percentile(fromCall, 0.5))), "
        + "p99 \(format(percentile(fromCall, 0.99))), max \(format(fromCall.last ?? .nan))")
