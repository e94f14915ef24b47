// How soon a follower in another process hears of a commit. Run from Benchmarks/:
//
//   swift run -c release FollowerFigures [--samples 2000] [--gap-ms 2] [--policy always|never]
//
// This process opens a store and starts itself again as a child (`--follow DIR`) that opens the store
// read-only and reads its change feed (`store.changes()`), noting the monotonic clock (one clock for every
// process on the machine) as each batch arrives, until a batch writes an object of type 99 (the last). This process then commits SAMPLES single puts, GAP ms apart,
// with the fsync policy given, noting when each `write` returned. Printed: p50 / p90 / p99 / max of arrival
// minus return, and of arrival minus call.

import BenchmarkSupport
import Foundation
import LogStore

/// The marker type of the last batch: the child stops on it.
let lastBatchType: UInt32 = 99

/// The child: follows the store and prints `SEQUENCE NANOSECONDS` per batch (`missed SEQUENCE` for a run
/// it was not given one by one), until the batch of the marker type.
func follow(_ directory: String) async throws {
    var options = StoreOptions()
    options.readOnly = true
    options.createIfMissing = false
    let store = try Store.open(at: directory, options: options)
    let feed = try store.changes()
    FileHandle.standardOutput.write(Data("ready\n".utf8))
    var lines: [String] = []
    for await change in feed {
        guard case .batch(let batch) = change else {
            lines.append("missed \(change.sequence)")
            continue
        }
        lines.append("\(batch.sequence) \(nanoseconds())")
        if batch.written.contains(where: { $0.typeTag == lastBatchType }) { break }
    }
    FileHandle.standardOutput.write(Data((lines.joined(separator: "\n") + "\n").utf8))
    try store.close()
}

func percentile(_ sorted: [Double], _ fraction: Double) -> Double {
    guard !sorted.isEmpty else { return .nan }
    return sorted[min(sorted.count - 1, Int(Double(sorted.count) * fraction))]
}

let arguments = Array(CommandLine.arguments.dropFirst())
if arguments.first == "--follow", arguments.count == 2 {
    try await follow(arguments[1])
    exit(0)
}
var samples = 2_000
var gap = 2.0
var policy = FsyncPolicy.always
var rest = arguments[...]
while let argument = rest.popFirst() {
    switch argument {
    case "--samples": samples = Int(rest.popFirst() ?? "") ?? samples
    case "--gap-ms": gap = Double(rest.popFirst() ?? "") ?? gap
    case "--policy": policy = rest.popFirst() == "never" ? .never : .always
    default:
        print("usage: FollowerFigures [--samples N] [--gap-ms MS] [--policy always|never]")
        exit(2)
    }
}

let scratch = TemporaryDirectory(prefix: "logstore-follower-figures")
defer { scratch.remove() }
var options = StoreOptions()
options.fsyncPolicy = policy
let store = try Store.open(at: scratch.child("store"), options: options)
try store.put(typeTag: 1, payload: [0])

let child = Process()
child.executableURL = URL(fileURLWithPath: CommandLine.arguments[0])
child.arguments = ["--follow", scratch.child("store")]
let output = Pipe()
child.standardOutput = output
try child.run()
// The child says "ready" once its feed is made: every batch after that reaches it.
var received = Data()
while !(String(decoding: received, as: UTF8.self).contains("ready\n")) {
    let chunk = output.fileHandleForReading.availableData
    if chunk.isEmpty { break }
    received.append(chunk)
}

var calls: [UInt64: (call: UInt64, done: UInt64)] = [:]
var generator = PayloadGenerator()
let pool = generator.pool(count: 1_000)
for index in 0..<samples {
    let object = pool[index % pool.count]  // types 1...4
    let called = nanoseconds()
    let batch = try store.write { $0.put(store.newID(), typeTag: object.typeTag, payload: object.payload) }
    calls[batch.sequence] = (called, nanoseconds())
    try await Task.sleep(for: .microseconds(Int(gap * 1000)))
}
try store.put(typeTag: lastBatchType, payload: [0])
received.append(output.fileHandleForReading.readDataToEndOfFile())
child.waitUntilExit()
try store.close()

var fromReturn: [Double] = []
var fromCall: [Double] = []
var missed = 0
for line in String(decoding: received, as: UTF8.self).split(separator: "\n") {
    let fields = line.split(separator: " ")
    if fields.first == "missed" { missed += 1 }
    guard fields.count == 2, let sequence = UInt64(fields[0]), let at = UInt64(fields[1]),
        let times = calls[sequence]
    else { continue }
    fromReturn.append(Double(Int64(bitPattern: at &- times.done)) / 1e3)
    fromCall.append(Double(Int64(bitPattern: at &- times.call)) / 1e3)
}
fromReturn.sort()
fromCall.sort()
func line(_ values: [Double]) -> String {
    String(
        format: "p50 %.0f µs, p90 %.0f µs, p99 %.0f µs, max %.0f µs", percentile(values, 0.5),
        percentile(values, 0.9), percentile(values, 0.99), values.last ?? .nan)
}
print(
    "fsync policy \(policy == .always ? "always" : "never"), \(fromReturn.count) of \(samples) batches timed, "
        + "\(missed) missed runs")
print("commit returned → follower process: " + line(fromReturn))
print("commit called → follower process:   " + line(fromCall))
