// LogStore benchmarks (package-benchmark). Run from Benchmarks/:
//
//   swift package --allow-writing-to-package-directory benchmark
//
// Every benchmark runs in its own process (package-benchmark does that), so each prepares its own
// store in a setup closure, outside the measured region, and removes it in its teardown. Stores
// live in fresh directories under /tmp. See README.md for what each one measures.

import Benchmark
import BenchmarkSupport
import LogStore

/// Objects in the pre-filled stores that the read and reopen benchmarks use.
let prefilledObjects = 1_000_000

/// State shared by a benchmark's setup, body and teardown.
final class Fixture: @unchecked Sendable {
    var directory: TemporaryDirectory?
    var store: Store?
    var pool: [GeneratedObject] = []
    var poolPosition = 0
    var firstID = ObjectID(1)
    var readIDs: [ObjectID] = []
    var readPosition = 0
    var gang: ThreadGang?

    /// A fresh store directory; the store is opened with `options` when `open` is set.
    func makeStore(options: StoreOptions = StoreOptions(), open: Bool = true) throws {
        let directory = TemporaryDirectory(prefix: "logstore-bench")
        self.directory = directory
        if open { store = try Store.open(at: directory.child("store"), options: options) }
    }

    /// A store holding `count` generated objects, and `readCount` random ids to read from it.
    func makeFilledStore(count: Int, readCount: Int) throws {
        try makeStore()
        let summary = try fillStore(store!, count: count)
        firstID = summary.firstID
        readIDs = randomIDs(count: readCount, in: summary.firstID.rawValue...summary.lastID.rawValue)
    }

    /// Closes the store and removes its directory.
    func tearDown() throws {
        gang?.stop()
        gang = nil
        try store?.close()
        store = nil
        directory?.remove()
        directory = nil
        pool = []
        readIDs = []
    }

    /// The next `count` ids to read, wrapping around the prepared random ids.
    @inline(__always)
    func nextReadIDs(_ count: Int) -> ArraySlice<ObjectID> {
        if readPosition + count > readIDs.count { readPosition = 0 }
        defer { readPosition += count }
        return readIDs[readPosition..<readPosition + count]
    }

    /// Objects written in setup that concurrent writers may reference (see ``settledReferences``).
    var settled: ClosedRange<UInt64> = 1...1

    /// Writes `count` objects that later puts can reference, whatever order concurrent writers commit in.
    func makeSettledObjects(count: Int) throws {
        let summary = try fillStore(store!, count: count)
        settled = summary.firstID.rawValue...summary.lastID.rawValue
    }

    /// The references of `object` mapped into the settled objects: the store refuses a reference to an
    /// object that is not live yet, and with concurrent writers an earlier id may still be uncommitted.
    @inline(__always)
    func settledReferences(_ object: GeneratedObject, for id: ObjectID) -> [ObjectID] {
        if object.referenceDistances.isEmpty { return [] }
        let count = UInt64(settled.count)
        return object.referenceDistances.map { ObjectID(settled.lowerBound + (id.rawValue &- $0) % count) }
    }

    /// The next pooled object (round-robin over the pre-generated pool).
    @inline(__always)
    func nextObject() -> GeneratedObject {
        if poolPosition == pool.count { poolPosition = 0 }
        defer { poolPosition += 1 }
        return pool[poolPosition]
    }
}

enum Metrics {
    /// Payload megabytes (10^6 bytes) per second written in an iteration.
    static let payloadMegabytesPerSecond = BenchmarkMetric.custom(
        "Payload MB/s", polarity: .prefersLarger, useScalingFactor: false)
}

let benchmarks: @Sendable () -> Void = {
    Benchmark.defaultConfiguration = .init(
        metrics: [.wallClock, .throughput],
        timeUnits: .automatic,
        warmupIterations: 10,
        maxDuration: .seconds(5),
        maxIterations: 1_000_000
    )

    // MARK: - 2. Batched puts

    do {
        let fixture = Fixture()
        Benchmark(
            "Put: batches of 1000, fsync always",
            configuration: .init(
                metrics: [.wallClock, .throughput, Metrics.payloadMegabytesPerSecond],
                scalingFactor: .kilo,
                maxDuration: .seconds(6),
                maxIterations: 4_000,
                setup: {
                    try fixture.makeStore()  // default options: fsync .always, 64 MiB segments
                    var generator = PayloadGenerator()
                    fixture.pool = generator.pool(count: 100_000)
                },
                teardown: { try fixture.tearDown() }
            )
        ) { benchmark in
            let store = fixture.store!
            // Building the batch is the caller's work, not the store's: done outside the measurement.
            var batch = WriteBatch()
            batch.reserveCapacity(benchmark.scaledIterations.count)
            var payloadBytes = 0
            for _ in benchmark.scaledIterations {
                let object = fixture.nextObject()
                let id = store.newID()
                batch.put(
                    id, typeTag: object.typeTag, references: object.references(for: id, firstID: fixture.firstID),
                    payload: object.payload)
                payloadBytes += object.payload.count
            }
            benchmark.startMeasurement()
            let start = nanoseconds()
            try store.write(batch)
            let elapsed = nanoseconds() - start
            benchmark.stopMeasurement()
            benchmark.measurement(
                Metrics.payloadMegabytesPerSecond, Int(Double(payloadBytes) * 1e3 / Double(max(elapsed, 1))))
        }
    }

    // MARK: - 3. Random gets

    do {
        let fixture = Fixture()
        Benchmark(
            "Get: random, 1 thread",
            configuration: .init(
                metrics: [.wallClock, .throughput, .mallocCountTotal],
                scalingFactor: .kilo,
                setup: { try fixture.makeFilledStore(count: prefilledObjects, readCount: 1 << 20) },
                teardown: { try fixture.tearDown() }
            )
        ) { benchmark in
            let store = fixture.store!
            for id in fixture.nextReadIDs(benchmark.scaledIterations.count) {
                blackHole(try store.get(id))
            }
        }
    }

    do {
        let fixture = Fixture()
        Benchmark(
            "Get: random, 2 threads",
            configuration: .init(
                metrics: [.wallClock, .throughput],
                scalingFactor: .kilo,
                setup: {
                    try fixture.makeFilledStore(count: prefilledObjects, readCount: 1 << 20)
                    fixture.gang = ThreadGang(2)
                },
                teardown: { try fixture.tearDown() }
            )
        ) { benchmark in
            // One iteration is 1,000 gets in all, 500 on each thread, so throughput is gets/s of both.
            let store = fixture.store!
            let ids = fixture.nextReadIDs(benchmark.scaledIterations.count)
            let gang = fixture.gang!
            let share = ids.count / gang.count
            gang.run { worker in
                let start = ids.startIndex + worker * share
                for id in ids[start..<start + share] {
                    blackHole(try? store.get(id))
                }
            }
        }
    }

    do {
        let fixture = Fixture()
        Benchmark(
            "Get: random, 1 thread, latency of one get",
            configuration: .init(
                metrics: [.wallClock],
                scalingFactor: .one,
                maxDuration: .seconds(4),
                setup: { try fixture.makeFilledStore(count: prefilledObjects, readCount: 1 << 20) },
                teardown: { try fixture.tearDown() }
            )
        ) { benchmark in
            let id = fixture.nextReadIDs(1).first!
            blackHole(try fixture.store!.get(id))
        }
    }

    // MARK: - 4. Durable single-record puts

    do {
        let fixture = Fixture()
        Benchmark(
            "Put: single record, fsync always, 1 writer",
            configuration: .init(
                metrics: [.wallClock, .throughput],
                scalingFactor: .one,
                maxDuration: .seconds(5),
                maxIterations: 20_000,
                setup: {
                    try fixture.makeStore()
                    try fixture.makeSettledObjects(count: 10_000)
                    var generator = PayloadGenerator()
                    fixture.pool = generator.pool(count: 10_000)
                },
                teardown: { try fixture.tearDown() }
            )
        ) { benchmark in
            let object = fixture.nextObject()
            let store = fixture.store!
            let id = store.newID()
            try store.put(
                id, typeTag: object.typeTag, references: fixture.settledReferences(object, for: id),
                payload: object.payload)
        }
    }

    do {
        let fixture = Fixture()
        let writers = 8
        Benchmark(
            "Put: single record, fsync always, 8 writers",
            configuration: .init(
                metrics: [.wallClock, .throughput],
                warmupIterations: 2,
                scalingFactor: .kilo,
                maxDuration: .seconds(6),
                maxIterations: 200,
                setup: {
                    try fixture.makeStore()
                    try fixture.makeSettledObjects(count: 10_000)
                    var generator = PayloadGenerator()
                    fixture.pool = generator.pool(count: 10_000)
                    fixture.gang = ThreadGang(writers)
                },
                teardown: { try fixture.tearDown() }
            )
        ) { benchmark in
            // One iteration is 1,000 single-record puts in all: 8 threads x 125, each put its own commit.
            // The threads live through the run (the caller and 7 parked ones, woken per iteration), as an
            // application's writer threads would: creating threads is not what is measured.
            let store = fixture.store!
            let pool = fixture.pool
            let perWriter = benchmark.scaledIterations.count / writers
            let offset = fixture.poolPosition
            fixture.poolPosition = (fixture.poolPosition + writers * perWriter) % pool.count
            fixture.gang!.run { writer in
                for index in 0..<perWriter {
                    let object = pool[(offset + writer * perWriter + index) % pool.count]
                    let id = store.newID()
                    do {
                        try store.put(
                            id, typeTag: object.typeTag, references: fixture.settledReferences(object, for: id),
                            payload: object.payload)
                    } catch {
                        fatalError("put failed: \(error)")
                    }
                }
            }
        }
    }

    // MARK: - 5. Reopen

    for cold in [false, true] {
        let fixture = Fixture()
        Benchmark(
            cold ? "Reopen: 1M-object store, page cache evicted" : "Reopen: 1M-object store, warm page cache",
            configuration: .init(
                metrics: [.wallClock, .peakMemoryResident],
                warmupIterations: 1,
                scalingFactor: .one,
                maxDuration: .seconds(10),
                maxIterations: cold ? 15 : 30,
                setup: {
                    try fixture.makeFilledStore(count: prefilledObjects, readCount: 0)
                    try fixture.store!.close()
                    fixture.store = nil
                },
                teardown: { try fixture.tearDown() }
            )
        ) { benchmark in
            let path = fixture.directory!.child("store")
            if cold { evictFromPageCache(path) }
            benchmark.startMeasurement()
            let store = try Store.open(at: path)
            benchmark.stopMeasurement()
            let count = try store.count()
            precondition(count == prefilledObjects, "reopened store has \(count) objects")
            try store.close()
        }
    }
}
