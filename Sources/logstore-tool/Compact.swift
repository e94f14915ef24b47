import ArgumentParser
import Foundation
import LogStore

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// `compact DIR [--json]`: frees unreachable objects (mark-sweep), then rewrites the sealed segments
/// that hold garbage, with progress and a summary.
struct Compact: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Free unreachable objects and reclaim the space of garbage in sealed segments.",
        discussion: """
            Opens the store for writing (so no other process may have it open for writing), runs a \
            mark-sweep pass, which frees the objects that nothing reachable from a named root or a pinned \
            object refers to (cycles among them), and then compacts every sealed segment that holds \
            garbage. Objects whose last referrer went away were already freed when that happened; this \
            command counts those it frees itself. Progress is a bar on a terminal and a line per 10% \
            otherwise (on standard error, and only on a terminal, with --json).

            When the segment being written holds garbage, it is sealed first and compacted too (the next \
            write starts a new segment). Hint files are written for every sealed segment that has none, so \
            the next open rebuilds the index from them.
            """
    )

    @OptionGroup var store: StoreDirectory

    @Flag(help: "Print the summary as JSON.")
    var json = false

    @Option(help: "Size of compaction's segments, and at which the newest one is full (default: the engine's).")
    var segmentSize: Int?

    @Flag(
        help: """
            Rewrite every segment, garbage or not, in the current format version (converts a store written by an \
            older version as a whole; the segment being written is sealed first).
            """)
    var rewriteAll = false

    func validate() throws {
        if let segmentSize, !(LogStoreLimits.minSegmentSize...LogStoreLimits.maxSegmentSize).contains(segmentSize) {
            throw ValidationError(
                "--segment-size must be between \(LogStoreLimits.minSegmentSize) and \(LogStoreLimits.maxSegmentSize)"
            )
        }
    }

    func run() throws {
        let started = ContinuousClock.now
        let opened = try store.openWritable(segmentSize: segmentSize)
        defer { try? opened.close() }
        let before = try opened.statistics()

        let sweep = try opened.collectGarbage()
        if !json {
            print("store: \(store.directory)")
            print(
                "mark-sweep: \(plural(sweep.liveAtSnapshot, "live object")), \(sweep.reachable) reachable, "
                    + "\(sweep.collected) collected" + (sweep.spared > 0 ? ", \(sweep.spared) spared" : "")
                    + " in \(formatSeconds(sweep.seconds))")
        }

        let display =
            json ? ProgressDisplay(fd: STDERR_FILENO, onlyOnTerminal: true) : ProgressDisplay(fd: STDOUT_FILENO)
        let report: (CompactionProgress) -> Void = { progress in
            display.update(done: progress.bytesDone, total: progress.bytesTotal)
        }
        let compaction = try rewriteAll ? opened.rewriteAllSegments(progress: report) : opened.compact(progress: report)
        display.finish()
        try opened.writeHints()
        let after = try opened.statistics()
        try opened.close()
        let elapsed = ContinuousClock.now - started
        let seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18

        let summary = CompactSummary(
            directory: store.directory, before: before, after: after, sweep: sweep, compaction: compaction,
            seconds: seconds)
        if json {
            let encoder = JSONEncoder()
            encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
            print(String(decoding: try encoder.encode(summary), as: UTF8.self))
        } else {
            printText(summary)
        }
    }

    private func printText(_ summary: CompactSummary) {
        if summary.segmentsCompacted == 0 {
            print(
                rewriteAll ? "compaction: no sealed segment to rewrite" : "compaction: no sealed segment holds garbage")
        }
        if summary.activeSegmentGarbageBytes > 0 {
            print(
                "note: the active segment holds \(formatBytes(summary.activeSegmentGarbageBytes)) of garbage, "
                    + "left because writing goes on in it")
        }
        print(
            "segments: \(summary.segmentsBefore) -> \(summary.segmentsAfter) "
                + "(\(summary.segmentsCompacted) rewritten)")
        let saved = summary.bytesBefore - min(summary.bytesBefore, summary.bytesAfter)
        let share = summary.bytesBefore == 0 ? 0 : Int((Double(saved) * 100 / Double(summary.bytesBefore)).rounded())
        print(
            "bytes: \(formatBytes(summary.bytesBefore)) -> \(formatBytes(summary.bytesAfter)) "
                + "(\(formatBytes(saved)) reclaimed, \(share)%)")
        print(
            "live objects: \(summary.liveObjectsBefore) -> \(summary.liveObjectsAfter) "
                + "(\(summary.objectsCollected) collected by mark-sweep)")
        print("records copied: \(summary.recordsCopied) (\(formatBytes(summary.bytesCopied)))")
        print("tombstones: \(summary.tombstonesKept) kept, \(summary.tombstonesDropped) dropped")
        print(
            "time: \(formatSeconds(summary.seconds)) (mark-sweep \(formatSeconds(summary.markSweep.seconds)), "
                + "compaction \(formatSeconds(summary.compactionSeconds)))")
    }
}

/// What `compact` did, and its JSON form.
private struct CompactSummary: Encodable {
    /// The mark-sweep pass's figures.
    struct MarkSweep: Encodable {
        var liveAtSnapshot: Int
        var reachable: Int
        var collected: Int
        var spared: Int
        var seconds: Double
    }

    var directory: String
    /// Segments and bytes before the mark-sweep pass and after compaction.
    var segmentsBefore: Int
    var segmentsAfter: Int
    var bytesBefore: UInt64
    var bytesAfter: UInt64
    var liveObjectsBefore: Int
    var liveObjectsAfter: Int
    /// Objects the mark-sweep pass freed.
    var objectsCollected: Int
    var segmentsCompacted: Int
    var recordsCopied: Int
    var bytesCopied: UInt64
    var tombstonesKept: Int
    var tombstonesDropped: Int
    /// Garbage left in the active segment, which is never compacted while it is written.
    var activeSegmentGarbageBytes: UInt64
    var compactionSeconds: Double
    var markSweep: MarkSweep
    /// The whole command, opening and closing the store included.
    var seconds: Double

    init(
        directory: String, before: StoreStatistics, after: StoreStatistics, sweep: GarbageCollectionReport,
        compaction: CompactionReport, seconds: Double
    ) {
        self.directory = directory
        segmentsBefore = before.segments.count
        segmentsAfter = after.segments.count
        bytesBefore = before.totalBytes
        bytesAfter = after.totalBytes
        liveObjectsBefore = before.liveObjects
        liveObjectsAfter = after.liveObjects
        objectsCollected = sweep.collected
        segmentsCompacted = compaction.segmentsCompacted
        recordsCopied = compaction.recordsCopied
        bytesCopied = compaction.bytesCopied
        tombstonesKept = compaction.tombstonesKept
        tombstonesDropped = compaction.tombstonesDropped
        activeSegmentGarbageBytes = after.segments.filter(\.isActive).reduce(0) { $0 + $1.garbageBytes }
        compactionSeconds = compaction.seconds
        markSweep = MarkSweep(
            liveAtSnapshot: sweep.liveAtSnapshot, reachable: sweep.reachable, collected: sweep.collected,
            spared: sweep.spared, seconds: sweep.seconds)
        self.seconds = seconds
    }
}

/// Shows how far a long operation is: on a terminal a bar redrawn in place, otherwise a line each time
/// another 10% is done.
final class ProgressDisplay {
    private let fd: Int32
    private let label: String
    private let isTerminal: Bool
    private let enabled: Bool
    private var lastShown = -1
    private var drawn = false
    private var lastDraw = ContinuousClock.now

    /// Shows progress on `fd`, named `label`; when `onlyOnTerminal`, shows nothing unless `fd` is a terminal.
    init(fd: Int32, label: String = "compacting", onlyOnTerminal: Bool = false) {
        self.fd = fd
        self.label = label
        isTerminal = isatty(fd) == 1
        enabled = isTerminal || !onlyOnTerminal
    }

    /// Shows that `done` of `total` bytes are processed.
    func update(done: UInt64, total: UInt64) {
        guard enabled, total > 0 else { return }
        fflush(nil)  // what `print` buffered goes first
        let percent = Int(min(done, total) * 100 / total)
        if isTerminal {
            let now = ContinuousClock.now
            guard percent != lastShown, percent == 100 || !drawn || now - lastDraw >= .milliseconds(50) else {
                return
            }
            lastDraw = now
            lastShown = percent
            drawn = true
            let width = 30
            let filled = percent * width / 100
            let bar = String(repeating: "#", count: filled) + String(repeating: "-", count: width - filled)
            let text = "\r\(label) [\(bar)] \(percent)% (\(formatBytes(done)) of \(formatBytes(total)))\u{1B}[K"
            try? Console.writeAll(Array(text.utf8), to: fd)
        } else {
            let step = percent / 10 * 10
            guard step > lastShown else { return }
            lastShown = step
            try? Console.writeAll(
                Array("\(label): \(percent)% (\(formatBytes(done)) of \(formatBytes(total)))\n".utf8), to: fd)
        }
    }

    /// Ends the bar's line, when one was drawn.
    func finish() {
        if isTerminal, drawn {
            try? Console.writeAll(Array("\n".utf8), to: fd)
            drawn = false
        }
    }
}

/// A duration for people: `0.042 s`, `12.3 s`.
func formatSeconds(_ seconds: Double) -> String {
    String(format: seconds < 10 ? "%.3f s" : "%.1f s", seconds)
}
