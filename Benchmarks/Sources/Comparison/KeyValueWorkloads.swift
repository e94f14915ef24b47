import BenchmarkSupport
import Foundation
import Synchronization

/// The sizes of the key-value workloads.
struct KeyValueParameters: Sendable {
    var objects = 200_000
    var lengths = 100...220
    var batchSize = 1_000
    var gets = 1_000_000
    var readTransactionSize = 1_000
    var singleCommits = 2_000
    var commitsPerWriter = 500
    var writers = 8
    var mixedOperationsPerThread = 50_000
    var overwriteRounds = 5
    var reopenRepetitions = 5
}

/// The figures of one store in one repetition, by figure key, and per-operation latencies (ns).
struct PeerRun: Sendable {
    var values: [String: Double] = [:]
    var latencies: [String: [UInt64]] = [:]
}

/// Per-commit latencies from several threads.
final class LatencyLog: Sendable {
    private let samples = Mutex<[UInt64]>([])

    func add(_ values: [UInt64]) { samples.withLock { $0 += values } }

    var all: [UInt64] { samples.withLock { $0 } }

    /// "p50 … µs, p99 … µs, max … µs".
    var summary: String {
        let sorted = samples.withLock { $0.sorted() }
        guard !sorted.isEmpty else { return "" }
        func percentile(_ p: Double) -> Double {
            Double(sorted[min(sorted.count - 1, Int(Double(sorted.count) * p))]) / 1_000
        }
        return String(
            format: "p50 %.0f µs, p99 %.0f µs, max %.0f µs", percentile(0.5), percentile(0.99),
            Double(sorted[sorted.count - 1]) / 1_000)
    }
}

/// Runs every key-value workload against one store, in one fresh directory.
struct KeyValueWorkloads {
    let parameters: KeyValueParameters
    let data: DataSet

    private func seconds(_ start: UInt64) -> Double { Double(nanoseconds() - start) / 1e9 }

    /// The process's CPU time so far (user and system, every thread: a store's background threads count),
    /// in nanoseconds.
    private func cpuNanoseconds() -> UInt64 {
        var time = timespec()
        clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &time)
        return UInt64(time.tv_sec) * 1_000_000_000 + UInt64(time.tv_nsec)
    }

    /// Microseconds of CPU per operation since `start` (a ``cpuNanoseconds()`` reading).
    private func cpuMicroseconds(since start: UInt64, operations: Int) -> Double {
        Double(cpuNanoseconds() - start) / 1_000 / Double(max(1, operations))
    }

    /// The batches of a fill (ascending keys) or of an overwrite round (shuffled keys).
    private func batches(round: Int?) -> [(keys: ArraySlice<Int>, records: [ComparisonRecord])] {
        let keys = round.map { data.shuffledKeys(round: $0) } ?? Array(0..<data.count)
        return stride(from: 0, to: keys.count, by: parameters.batchSize).map { start in
            let slice = keys[start..<min(start + parameters.batchSize, keys.count)]
            let records = slice.map { key in round.map { data.record(forKey: key, round: $0) } ?? data.records[key] }
            return (slice, records)
        }
    }

    /// Reads `keys` in read transactions of `readTransactionSize` on `threads` threads; returns gets/s.
    private func timedGets(_ peer: any KeyValuePeer, keys: [Int], threads: Int) throws -> Double {
        let chunk = parameters.readTransactionSize
        let failures = Mutex<[String]>([])
        let start = nanoseconds()
        onThreads(threads) { thread in
            let share = keys.count / threads
            let mine = keys[(thread * share)..<((thread + 1) * share)]
            var bytes = 0
            do {
                for offset in stride(from: mine.startIndex, to: mine.endIndex, by: chunk) {
                    bytes &+= try peer.read(keys: mine[offset..<min(offset + chunk, mine.endIndex)])
                }
            } catch { failures.withLock { $0.append("\(error)") } }
            if bytes == 0 { failures.withLock { $0.append("no bytes read") } }
        }
        let elapsed = seconds(start)
        if let failure = failures.withLock({ $0.first }) { throw ComparisonError("gets failed: \(failure)") }
        return Double(keys.count / threads * threads) / elapsed
    }

    /// `perThread` single-record commits on each of `threads` threads; returns commits/s.
    private func timedCommits(_ peer: any KeyValuePeer, threads: Int, perThread: Int, latencies: LatencyLog) throws
        -> Double
    {
        let failures = Mutex<[String]>([])
        let start = nanoseconds()
        onThreads(threads) { thread in
            var times: [UInt64] = []
            times.reserveCapacity(perThread)
            do {
                for index in 0..<perThread {
                    let key = data.writeKeys[(thread * perThread + index) % data.writeKeys.count]
                    let began = nanoseconds()
                    try peer.commitOne(key: key, record: data.record(forKey: key, round: 1 + index % 2))
                    times.append(nanoseconds() - began)
                }
            } catch { failures.withLock { $0.append("\(error)") } }
            latencies.add(times)
        }
        let elapsed = seconds(start)
        if let failure = failures.withLock({ $0.first }) { throw ComparisonError("commits failed: \(failure)") }
        return Double(threads * perThread) / elapsed
    }

    /// 90% single gets and 10% single-record commits on two threads; returns operations/s.
    private func timedMixed(_ peer: any KeyValuePeer) throws -> Double {
        let perThread = parameters.mixedOperationsPerThread
        let failures = Mutex<[String]>([])
        let start = nanoseconds()
        onThreads(2) { thread in
            do {
                for index in 0..<perThread {
                    let position = (thread * perThread + index) % data.readKeys.count
                    if index % 10 == 9 {
                        let key = data.writeKeys[position]
                        try peer.commitOne(key: key, record: data.record(forKey: key, round: 3))
                    } else {
                        _ = try peer.read(keys: data.readKeys[position...position])
                    }
                }
            } catch { failures.withLock { $0.append("\(error)") } }
        }
        let elapsed = seconds(start)
        if let failure = failures.withLock({ $0.first }) { throw ComparisonError("mixed failed: \(failure)") }
        return Double(2 * perThread) / elapsed
    }

    /// One repetition of every workload on `kind`, in `directory` (created by the store, removed after).
    func run(_ kind: PeerKind, directory: String) throws -> PeerRun {
        var result = PeerRun()
        let fill = batches(round: nil)

        // Batched puts of new records.
        var peer = try kind.open(directory: directory, count: data.count)
        var start = nanoseconds()
        var cpuStart = cpuNanoseconds()
        for batch in fill { try peer.writeBatch(keys: batch.keys, records: batch.records, fresh: true) }
        result.values["puts"] = Double(data.count) / seconds(start)
        // The CPU figure includes the close: work a store defers past its commits (RocksDB builds and
        // compresses its tables from the memtable) counts.
        try peer.close()
        result.values["putsCPU"] = cpuMicroseconds(since: cpuStart, operations: data.count)
        result.values["bytesFresh"] = Double(directorySize(directory).logical)

        // Reopen and one get, warm page cache.
        var opens: [Double] = []
        for index in 0..<(parameters.reopenRepetitions + 1) {
            start = nanoseconds()
            let reopened = try kind.open(directory: directory, count: data.count)
            _ = try reopened.read(keys: data.readKeys[index...index])
            if index > 0 { opens.append(seconds(start) * 1_000) }  // the first open warms the page cache
            try reopened.close()
        }
        result.values["reopen"] = Samples(values: opens).median

        // Random gets, 1 and 2 threads, after one untimed pass over every key.
        peer = try kind.open(directory: directory, count: data.count)
        _ = try peer.read(keys: Array(0..<data.count)[...])
        cpuStart = cpuNanoseconds()
        result.values["gets1"] = try timedGets(peer, keys: data.readKeys, threads: 1)
        result.values["gets1CPU"] = cpuMicroseconds(since: cpuStart, operations: data.readKeys.count)
        result.values["gets2"] = try timedGets(peer, keys: data.readKeys, threads: 2)

        // Durable single-record commits, 1 and `writers` threads.
        let single = LatencyLog()
        result.values["commits1"] = try timedCommits(
            peer, threads: 1, perThread: parameters.singleCommits, latencies: single)
        result.latencies["commits1"] = single.all
        let many = LatencyLog()
        result.values["commits8"] = try timedCommits(
            peer, threads: parameters.writers, perThread: parameters.commitsPerWriter, latencies: many)
        result.latencies["commits8"] = many.all

        // Mixed, two threads.
        result.values["mixed"] = try timedMixed(peer)

        // Overwrite every record `overwriteRounds` times in batches, then reclaim the space.
        let rounds = (0..<parameters.overwriteRounds).map { batches(round: 4 + $0) }
        start = nanoseconds()
        cpuStart = cpuNanoseconds()
        for round in rounds {
            for batch in round { try peer.writeBatch(keys: batch.keys, records: batch.records, fresh: false) }
        }
        result.values["overwrite"] = Double(data.count * parameters.overwriteRounds) / seconds(start)
        try peer.close()
        result.values["overwriteCPU"] = cpuMicroseconds(
            since: cpuStart, operations: data.count * parameters.overwriteRounds)
        result.values["bytesOverwritten"] = Double(directorySize(directory).logical)
        peer = try kind.open(directory: directory, count: data.count)
        start = nanoseconds()
        try peer.reclaimSpace()
        result.values["reclaim"] = seconds(start)
        try peer.close()
        result.values["bytesReclaimed"] = Double(directorySize(directory).logical)

        // Every key still reads back as the last overwrite round wrote it.
        peer = try kind.open(directory: directory, count: data.count)
        let bytes = try peer.read(keys: Array(0..<data.count)[...])
        try peer.close()
        let expected = (0..<data.count).reduce(0) {
            $0 + data.record(forKey: $1, round: 4 + parameters.overwriteRounds - 1).payload.count
        }
        if bytes != expected {
            throw ComparisonError("\(kind.rawValue) read back \(bytes) bytes, expected \(expected)")
        }
        return result
    }
}

extension KeyValueWorkloads {
    /// Fills a store with `objects` records (the data set's, repeated) in batches (unless `directory`
    /// exists: then it is reused as it is), closes it, and times
    /// `reopenRepetitions` opens, each with one get (warm page cache); returns milliseconds.
    func reopenTimes(_ kind: PeerKind, objects: Int, directory: String) throws -> [Double] {
        let existing = FileManager.default.fileExists(atPath: directory)
        let peer = try kind.open(directory: directory, count: objects)
        for start in stride(from: 0, to: existing ? 0 : objects, by: parameters.batchSize) {
            let keys = start..<min(start + parameters.batchSize, objects)
            try peer.writeBatch(
                keys: Array(keys)[...], records: keys.map { data.records[$0 % data.count] }, fresh: true)
        }
        try peer.close()
        var times: [Double] = []
        for index in 0..<(parameters.reopenRepetitions + 1) {
            let start = nanoseconds()
            let reopened = try kind.open(directory: directory, count: objects)
            let key = data.readKeys[index % data.readKeys.count] % objects
            guard try reopened.read(keys: [key][...]) > 0 else {
                throw ComparisonError("\(kind.rawValue): key \(key) missing")
            }
            let elapsed = Double(nanoseconds() - start) / 1e6
            try reopened.close()
            if index > 0 { times.append(elapsed) }  // the first open warms the page cache
        }
        return times
    }
}
