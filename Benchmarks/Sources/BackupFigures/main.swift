// Checkpoints and backups: how long a checkpoint of a large store takes on one file system (hard links,
// no data copied), and how fast a backup to another file system and a restore from it copy, against a
// plain sequential copy of the same files (`cp -r`, then `sync` of the copies) on the same machine, in
// alternating order. Run from Benchmarks/:
//
//   swift run -c release BackupFigures                     # a 10 GB store, 2 GB copied to /dev/shm, 5 runs
//   swift run -c release BackupFigures --gigabytes 2 --copy-gigabytes 1 --runs 3 --other /dev/shm
//
// `--store DIR` keeps the large store in DIR (and reuses it when it is there).

import BenchmarkSupport
import Foundation
import LogStore
import LogStoreExamples

let arguments = CommandLine.arguments
func option(_ name: String) -> String? {
    guard let index = arguments.firstIndex(of: name), index + 1 < arguments.count else { return nil }
    return arguments[index + 1]
}
let gigabytes = Double(option("--gigabytes") ?? "") ?? 10
let copyGigabytes = Double(option("--copy-gigabytes") ?? "") ?? 2
let runs = Int(option("--runs") ?? "") ?? 5
let other = option("--other") ?? "/dev/shm"
let keptStore = option("--store")

struct FigureError: Error, CustomStringConvertible {
    let description: String
}

func progress(_ text: String) {
    FileHandle.standardError.write(Data((text + "\n").utf8))
}

func median(_ values: [Double]) -> Double { values.sorted()[values.count / 2] }
func seconds(since start: UInt64) -> Double { Double(nanoseconds() - start) / 1e9 }
func range(_ values: [Double], _ format: String) -> String {
    String(format: format, median(values)) + " (" + String(format: format, values.min() ?? 0) + "–"
        + String(format: format, values.max() ?? 0) + ")"
}

/// Fills a store at `path` with random (incompressible) 16 KiB records until it holds `bytes`.
func fill(_ path: String, bytes: Double) throws {
    var options = StoreOptions(fsyncPolicy: .never)
    options.compression = false
    options.compaction.background = false
    let store = try Store.open(at: path, options: options)
    var generator = SplitMix64(seed: 42)
    let recordSize = 16 << 10
    var written = 0.0
    while written < bytes {
        var batch = WriteBatch()
        for _ in 0..<256 {
            let payload = (0..<recordSize / 8).flatMap { _ -> [UInt8] in
                withUnsafeBytes(of: generator.next()) { Array($0) }
            }
            batch.put(Record(id: store.newID(), typeTag: 1, payload: payload))
        }
        try store.write(batch)
        written += Double(256 * recordSize)
    }
    try store.close()
}

func segmentCount(_ path: String) -> Int {
    ((try? FileManager.default.contentsOfDirectory(atPath: path)) ?? []).filter { $0.hasSuffix(".seg") }.count
}

/// Runs `command` through /bin/sh; throws when it fails.
func shell(_ command: String) throws {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: "/bin/sh")
    process.arguments = ["-c", command]
    try process.run()
    process.waitUntilExit()
    guard process.terminationStatus == 0 else { throw FigureError(description: "failed: \(command)") }
}

let scratch = TemporaryDirectory(prefix: "logstore-backup-figures")
defer { scratch.remove() }
let otherScratch = TemporaryDirectory(prefix: "logstore-backup-figures", root: other)
defer { otherScratch.remove() }

// 1. A checkpoint of a large store on one file system.
let large = keptStore ?? scratch.child("large")
if segmentCount(large) == 0 {
    progress(String(format: "filling a store of %.1f GB", gigabytes))
    try fill(large, bytes: gigabytes * 1e9)
}
let largeBytes = Double(directorySize(large, suffix: ".seg").logical)
var writable = StoreOptions()
writable.compaction.background = false
let store = try Store.open(at: large, options: writable)
// A commit in the segment being written, as in a store in use.
try store.put(typeTag: 2, payload: Array(repeating: 7, count: 4_096))
var checkpointTimes: [Double] = []
var report: CheckpointReport?
for run in 0..<runs {
    let destination = scratch.child("checkpoint-\(run)")
    let start = nanoseconds()
    report = try store.checkpoint(to: destination)
    checkpointTimes.append(seconds(since: start) * 1e3)
    removeTree(destination)
}
try store.close()
guard let report else { throw FigureError(description: "no checkpoint ran") }
let floor = 50 + Double(report.segments)

// 2. Backup to another file system and restore from it, against cp -r + sync.
let small = scratch.child("small")
progress(String(format: "filling a store of %.1f GB", copyGigabytes))
try fill(small, bytes: copyGigabytes * 1e9)
let smallBytes = Double(directorySize(small).logical)
let source = try Store.open(at: small, options: StoreOptions(readOnly: true))
var backupRates: [Double] = []
var restoreRates: [Double] = []
var copyOutRates: [Double] = []
var copyInRates: [Double] = []
for run in 0..<runs {
    let backup = otherScratch.child("backup-\(run)")
    let restored = scratch.child("restored-\(run)")
    let plainOut = otherScratch.child("cp-\(run)")
    let plainIn = scratch.child("cp-back-\(run)")
    for first in run % 2 == 0 ? [true, false] : [false, true] {
        if first {
            var start = nanoseconds()
            try source.backup(to: backup)
            backupRates.append(smallBytes / seconds(since: start) / 1e6)
            let opened = try Store.open(at: backup, options: StoreOptions(readOnly: true))
            start = nanoseconds()
            try opened.checkpoint(to: restored, hardLinks: false)
            restoreRates.append(smallBytes / seconds(since: start) / 1e6)
            try opened.close()
        } else {
            var start = nanoseconds()
            try shell("cp -r '\(small)' '\(plainOut)' && sync '\(plainOut)'/*")
            copyOutRates.append(smallBytes / seconds(since: start) / 1e6)
            start = nanoseconds()
            try shell("cp -r '\(plainOut)' '\(plainIn)' && sync '\(plainIn)'/*")
            copyInRates.append(smallBytes / seconds(since: start) / 1e6)
        }
    }
    for path in [backup, restored, plainOut, plainIn] { removeTree(path) }
}
try source.close()

print("## Checkpoints and backups\n")
print(String(format: "- Large store: %.2f GB in %d segments (`%@`)", largeBytes / 1e9, report.segments, large))
print(String(format: "- Copy store: %.2f GB; other file system: `%@`", smallBytes / 1e9, other))
print("- Runs: \(runs), medians with the lowest and highest\n")
print("| Figure | Measured | Floor | Met |")
print("| --- | ---: | ---: | --- |")
print(
    "| Checkpoint, one file system (ms) | \(range(checkpointTimes, "%.1f")) | ≤ \(Int(floor)) (50 + 1 per segment) | "
        + (median(checkpointTimes) <= floor ? "yes" : "**no**") + " |")
print(
    "| — of which copied | \(report.copiedSegments) segments, \(report.bytesCopied) B | | |")
let backupShare = median(backupRates) / median(copyOutRates)
let restoreShare = median(restoreRates) / median(copyInRates)
print("| Backup to \(other) (MB/s) | \(range(backupRates, "%.0f")) | | |")
print("| `cp -r` + `sync` to \(other) (MB/s) | \(range(copyOutRates, "%.0f")) | | |")
print(
    String(format: "| Backup ÷ plain copy | %.2f | ≥ 0.80 | %@ |", backupShare, backupShare >= 0.8 ? "yes" : "**no**"))
print("| Restore from \(other) (MB/s) | \(range(restoreRates, "%.0f")) | | |")
print("| `cp -r` + `sync` back (MB/s) | \(range(copyInRates, "%.0f")) | | |")
print(
    String(format: "| Restore ÷ plain copy | %.2f | ≥ 0.80 | %@ |", restoreShare, restoreShare >= 0.8 ? "yes" : "**no**"))
