import ArgumentParser
import Dispatch
import Foundation
import LogStore
import Synchronization

/// `stress DIR --seconds N --threads T`: a soak test. Random puts, gets, overwrites that re-link
/// references, deletes, root changes and batches from several threads, with background compaction,
/// every read checked against a model; then a reopen that checks everything again, and verify.
struct Stress: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Soak-test a store: random operations from several threads, every read checked.",
        discussion: """
            Creates the store in DIR (which must be missing or empty), then runs for the given time: each thread \
            works on objects and roots of its own (puts of new objects with references to its older ones, \
            overwrites that change the references, deletes of objects nothing refers to, root changes, \
            batches of ten, and gets checked byte for byte against what it wrote), while the background \
            compactor runs with the default options and thread 0 sometimes runs a mark-sweep collection. A \
            progress line is printed every 10 seconds. At the end the store is closed, reopened, every \
            object and root checked again, and verified. The summary gives operations, errors (any \
            difference from the model, any unexpected error) and latency percentiles per operation. Exit \
            code 0 when there were no errors (a failed background compaction pass counts as one), 1 \
            otherwise.

            Ctrl-C ends the run early: the threads stop within 64 operations each, the store is checked \
            as at the end of a full run, the summary of the partial run is printed, and the process ends by \
            SIGINT (exit status 130 in a shell; a second Ctrl-C ends it at once).
            """
    )

    @Argument(help: "A directory for a new store (created; it must be missing or empty).")
    var directory: String

    @Option(help: "How long to run, in seconds (at most 10000000, about 116 days).")
    var seconds: Double = 60

    /// The longest run `--seconds` accepts: far beyond any soak test, and far below where the deadline
    /// in nanoseconds would overflow.
    static let maxSeconds: Double = 1e7

    @Option(help: "Threads doing operations.")
    var threads: Int = 2

    @Option(help: "Seed of the random operations (printed; the same seed repeats a run's choices).")
    var seed: UInt64 = 1

    func validate() throws {
        guard seconds > 0, seconds <= Self.maxSeconds else {
            throw ValidationError("--seconds must be positive and at most \(Int(Self.maxSeconds)), got \(seconds)")
        }
        guard threads > 0, threads <= 256 else { throw ValidationError("--threads must be 1 … 256, got \(threads)") }
        try refuseNonDirectory(directory)
        // Any entry counts, hidden ones too: an old store (without a STORE file) or other files must not be
        // written into.
        let entries = (try? FileManager.default.contentsOfDirectory(atPath: directory)) ?? []
        if entries.contains("STORE") || entries.contains("LOCK") {
            throw ValidationError("\(directory) holds a store already; stress needs a missing or empty directory")
        }
        if let first = entries.min() {
            throw ValidationError(
                "\(directory) is not empty (it holds \(plural(entries.count, "item")), such as \(first)); "
                    + "stress needs a missing or empty directory")
        }
    }

    func run() throws {
        let store = try Store.open(at: directory)
        Interruption.install()
        Console.error("stress: \(directory), \(threads) threads, \(seconds) s, seed \(seed)")
        let deadline = Self.nanoseconds(after: DispatchTime.now().uptimeNanoseconds, seconds: seconds)
        let operations = Atomic<Int>(0)
        let failures = Atomic<Int>(0)
        let finished = Mutex<[StressWorker]>([])
        let started = DispatchTime.now().uptimeNanoseconds
        let progressDone = DispatchSemaphore(value: 0)
        let progress = Thread {
            defer { progressDone.signal() }
            var last = 0
            var lastTime = started
            while DispatchTime.now().uptimeNanoseconds < deadline, !Interruption.requested {
                let left = Double(deadline - min(deadline, DispatchTime.now().uptimeNanoseconds)) / 1e9
                // Up to 10 s, in short sleeps so that Ctrl-C ends the wait at once.
                let wake = Self.nanoseconds(after: DispatchTime.now().uptimeNanoseconds, seconds: min(10, left))
                while DispatchTime.now().uptimeNanoseconds < wake, !Interruption.requested {
                    Thread.sleep(forTimeInterval: 0.05)
                }
                if Interruption.requested { break }
                let done = operations.load(ordering: .relaxed)
                let now = DispatchTime.now().uptimeNanoseconds
                let elapsed = Double(now - started) / 1e9
                let interval = max(Double(now - lastTime) / 1e9, 0.001)
                lastTime = now
                let statistics = try? store.statistics()
                Console.error(
                    String(
                        format: "%6.0f s  %@ operations (%.0f/s)  errors %d  live %@  on disk %@",
                        elapsed, "\(done)", Double(done - last) / interval, failures.load(ordering: .relaxed),
                        "\(statistics?.liveObjects ?? 0)", formatBytes(statistics?.totalBytes ?? 0)))
                last = done
            }
        }
        progress.start()
        let seed = seed
        DispatchQueue.concurrentPerform(iterations: threads) { thread in
            var worker = StressWorker(thread: thread, store: store, seed: seed)
            var count = 0
            var reportedErrors = 0
            while true {
                worker.step()
                count += 1
                if count % 64 == 0 {
                    operations.add(64, ordering: .relaxed)
                    failures.add(worker.errorCount - reportedErrors, ordering: .relaxed)
                    reportedErrors = worker.errorCount
                    if DispatchTime.now().uptimeNanoseconds >= deadline || Interruption.requested { break }
                }
            }
            operations.add(count % 64, ordering: .relaxed)
            finished.withLock { $0.append(worker) }
        }
        let elapsed = Double(DispatchTime.now().uptimeNanoseconds - started) / 1e9
        let interrupted = Interruption.requested
        progressDone.wait()
        let statistics = try store.statistics()
        try store.close()

        var workers = finished.withLock { $0 }
        let reopened = try Store.open(at: directory)
        for index in workers.indices { workers[index].checkAll(in: reopened) }
        try reopened.close()
        let report = try Store.verify(at: directory)

        if interrupted {
            print(
                String(
                    format: "interrupted (Ctrl-C) after %.1f of %@ s: the summary of the partial run", elapsed,
                    "\(seconds)"))
        }
        summarize(workers, elapsed: elapsed, statistics: statistics, report: report)
        let errors =
            workers.reduce(0) { $0 + $1.errorCount } + report.problems.count
            + (statistics.backgroundCompactionError == nil ? 0 : 1)
        if interrupted { Interruption.endProcess() }
        if errors > 0 { throw ExitCode(1) }
    }

    /// `start` plus `seconds` in nanoseconds, saturating at `UInt64.max` (a deadline that far never comes).
    private static func nanoseconds(after start: UInt64, seconds: Double) -> UInt64 {
        let span = seconds * 1e9
        guard span < Double(UInt64.max) else { return .max }
        let (sum, overflow) = start.addingReportingOverflow(UInt64(max(0, span)))
        return overflow ? .max : sum
    }

    private func summarize(
        _ workers: [StressWorker], elapsed: Double, statistics: StoreStatistics, report: VerificationReport
    ) {
        var latencies: [StressWorker.Operation: LatencyHistogram] = [:]
        for worker in workers {
            for (operation, histogram) in worker.latencies {
                latencies[operation, default: LatencyHistogram()].merge(histogram)
            }
        }
        let total = latencies.values.reduce(0) { $0 + $1.total }
        let errors = workers.reduce(0) { $0 + $1.errorCount }
        print(
            String(
                format: "operations: %@ in %.0f s (%.0f/s), %d threads, seed %@", "\(total)", elapsed,
                Double(total) / elapsed, threads, "\(seed)"))
        print("errors: \(errors)")
        for worker in workers { for error in worker.errors { print("  \(error)") } }
        func column(_ text: String, _ width: Int) -> String {
            String(repeating: " ", count: max(0, width - text.count)) + text
        }
        print(
            "operation".padding(toLength: 12, withPad: " ", startingAt: 0) + column("count", 12) + column("p50 µs", 10)
                + column("p99 µs", 10) + column("p99.9 µs", 10) + column("max µs", 10))
        for operation in StressWorker.Operation.allCases {
            guard let histogram = latencies[operation], histogram.total > 0 else { continue }
            func micro(_ nanoseconds: UInt64) -> String {
                column(String(format: "%.1f", Double(nanoseconds) / 1_000), 10)
            }
            print(
                operation.rawValue.padding(toLength: 12, withPad: " ", startingAt: 0) + column("\(histogram.total)", 12)
                    + micro(histogram.percentile(0.5)) + micro(histogram.percentile(0.99))
                    + micro(histogram.percentile(0.999)) + micro(histogram.maximum))
        }
        let objects = workers.reduce(0) { $0 + $1.objects.count }
        print(
            "at the end: \(objects) live objects, \(formatBytes(statistics.totalBytes)) in segments, "
                + "background compaction error: \(statistics.backgroundCompactionError.map { "\($0)" } ?? "none")")
        print(
            "after reopening: every object and root checked; verify: \(report.isSound ? "sound" : "\(report.problems.count) problems")"
        )
        for problem in report.problems.prefix(20) { print("  \(problem)") }
    }
}
