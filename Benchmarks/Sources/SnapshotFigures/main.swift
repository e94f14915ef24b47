// Gets through a snapshot against plain gets, in one process, alternating A B A B so that the machine's
// drift hits both alike; then the same while a writer thread overwrites objects in batches (the writer
// then copies the index pages a live snapshot shares), and what taking a snapshot costs. Run from
// Benchmarks/:
//
//   swift run -c release SnapshotFigures                 # 1,000,000 objects, 5 rounds
//   swift run -c release SnapshotFigures 200000 3        # another count and number of rounds

import BenchmarkSupport
import LogStore
import Synchronization

let arguments = CommandLine.arguments
let objectCount = arguments.count > 1 ? Int(arguments[1]) ?? 1_000_000 : 1_000_000
let rounds = arguments.count > 2 ? Int(arguments[2]) ?? 5 : 5

let scratch = TemporaryDirectory(prefix: "logstore-snapshot-figures")
defer { scratch.remove() }
let store = try Store.open(at: scratch.child("store"), options: StoreOptions(fsyncPolicy: .never))
let summary = try fillStore(store, count: objectCount)
let ids = randomIDs(count: 1_000_000, in: summary.firstID.rawValue...summary.lastID.rawValue, seed: 7)

func median(_ values: [Double]) -> Double {
    let sorted = values.sorted()
    return sorted[sorted.count / 2]
}

/// Gets per second of one pass over `ids`.
func plainGets() throws -> Double {
    var bytes = 0
    let start = nanoseconds()
    for id in ids { bytes &+= try store.get(id)?.payload.count ?? 0 }
    let elapsed = nanoseconds() - start
    precondition(bytes > 0)
    return Double(ids.count) * 1e9 / Double(elapsed)
}

/// Gets per second of one pass over `ids` through one snapshot taken at the start.
func snapshotGets() throws -> Double {
    var bytes = 0
    let start = nanoseconds()
    let view = try store.snapshot()
    for id in ids { bytes &+= try view.get(id)?.payload.count ?? 0 }
    let elapsed = nanoseconds() - start
    precondition(bytes > 0)
    return Double(ids.count) * 1e9 / Double(elapsed)
}

func report(_ title: String) throws {
    var plain: [Double] = []
    var snapshot: [Double] = []
    _ = try plainGets()  // warm-up
    _ = try snapshotGets()
    for _ in 0..<rounds {
        plain.append(try plainGets())
        snapshot.append(try snapshotGets())
    }
    let ratios = zip(snapshot, plain).map { $0 / $1 }
    func list(_ values: [Double]) -> String {
        values.map { String(format: "%.0f K", $0 / 1e3) }.joined(separator: ", ")
    }
    print("## \(title)")
    print("plain gets/s:    median \(String(format: "%.0f K", median(plain) / 1e3))  (\(list(plain)))")
    print("snapshot gets/s: median \(String(format: "%.0f K", median(snapshot) / 1e3))  (\(list(snapshot)))")
    print(
        "snapshot ÷ plain: median \(String(format: "%.3f", median(ratios)))  (\(ratios.map { String(format: "%.3f", $0) }.joined(separator: ", ")))"
    )
}

print("\(objectCount) objects of ~200 B, 1,000,000 random gets per pass, 1 reading thread, \(rounds) rounds")
try report("Idle store")

/// Gets per second of `threads` threads each making one pass over `ids` (plain gets, or through one snapshot
/// per thread), the total over the wall time.
func getsOnThreads(_ threads: Int, snapshot: Bool) -> Double {
    let start = nanoseconds()
    onThreads(threads) { worker in
        var bytes = 0
        let offset = worker * ids.count / threads
        do {
            if snapshot {
                let view = try store.snapshot()
                for index in 0..<ids.count {
                    bytes &+= try view.get(ids[(offset + index) % ids.count])?.payload.count ?? 0
                }
            } else {
                for index in 0..<ids.count {
                    bytes &+= try store.get(ids[(offset + index) % ids.count])?.payload.count ?? 0
                }
            }
        } catch {
            fatalError("get failed: \(error)")
        }
        precondition(bytes > 0)
    }
    return Double(threads * ids.count) * 1e9 / Double(nanoseconds() - start)
}

// Plain gets and snapshot gets on 1 and 2 threads: how reads scale with threads.
do {
    var rates: [String: [Double]] = [:]
    _ = getsOnThreads(2, snapshot: false)  // warm-up
    for _ in 0..<rounds {
        for snapshot in [false, true] {
            for threads in [1, 2] {
                rates["\(snapshot ? "snapshot" : "plain") \(threads)", default: []].append(
                    getsOnThreads(threads, snapshot: snapshot))
            }
        }
    }
    print("## Gets on 1 and 2 threads (each thread a pass over the 1,000,000 ids; total gets/s, median)")
    for kind in ["plain", "snapshot"] {
        let one = median(rates["\(kind) 1"] ?? [])
        let two = median(rates["\(kind) 2"] ?? [])
        let scaling = zip(rates["\(kind) 2"] ?? [], rates["\(kind) 1"] ?? []).map { $0 / $1 }
        print(
            "\(kind) gets: 1 thread \(String(format: "%.0f K", one / 1e3)), 2 threads "
                + "\(String(format: "%.0f K", two / 1e3)), 2 ÷ 1 median \(String(format: "%.2f", median(scaling)))"
                + "  (\(scaling.map { String(format: "%.2f", $0) }.joined(separator: ", ")))")
    }
}

// A writer overwrites random objects in batches of 1,000 while the reader reads.
let stop = Atomic<Bool>(false)
let written = Atomic<Int>(0)
let writerIDs = randomIDs(count: 100_000, in: summary.firstID.rawValue...summary.lastID.rawValue, seed: 11)
onThreads(2) { worker in
    if worker == 1 {
        do {
            try report("While a writer overwrites random objects in batches of 1,000")
        } catch {
            print("error: \(error)")
        }
        stop.store(true, ordering: .relaxed)
        return
    }
    let payload = [UInt8](repeating: 42, count: 200)
    var position = 0
    while !stop.load(ordering: .relaxed) {
        var batch = WriteBatch()
        for _ in 0..<1_000 {
            batch.put(writerIDs[position % writerIDs.count], typeTag: 1, payload: payload)
            position += 1
        }
        _ = try? store.write(batch)
        written.add(1_000, ordering: .relaxed)
    }
}
print("writer: \(written.load(ordering: .relaxed)) puts during the reads")

// The cost of taking a snapshot.
do {
    let count = 1_000_000
    let start = nanoseconds()
    for _ in 0..<count { _ = try store.snapshot() }
    print("## Taking a snapshot: \(String(format: "%.0f", Double(nanoseconds() - start) / Double(count))) ns each")
}
try store.close()
