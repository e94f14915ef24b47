import Dispatch
import Foundation
@_spi(Engine) import LogStoreFormat
@_spi(Engine) import LogStoreSystem
import Synchronization

/// The background compaction thread: every ``CompactionOptions/minimumInterval`` it looks at
/// the store's garbage share and, while it is at least ``CompactionOptions/startGarbageRatio``, compacts
/// the segment with the largest garbage share, one per pass, when that share reaches
/// ``CompactionOptions/segmentGarbageRatio``; every ``CompactionOptions/markSweepInterval`` it runs a
/// mark-sweep pass first.
///
/// It holds the store weakly, so a store that is dropped without `close()` still goes away.
final class BackgroundCompactor: Sendable {
    private let stopping = Atomic<Bool>(false)
    private let wakeUp = DispatchSemaphore(value: 0)
    private let stopped = DispatchSemaphore(value: 0)
    /// The error of the last background pass, mark-sweep or hint writing that failed; cleared by a pass
    /// that compacts something (``StoreStatistics/backgroundCompactionError``).
    let lastError = RankedMutex<LogStoreError?>(nil, rank: .compactorError)
    /// Number of background passes that compacted something.
    let passes = Atomic<Int>(0)

    init(store: Store, options: CompactionOptions) {
        let interval = max(10, options.minimumInterval.wholeMilliseconds)
        let thread = Thread { [weak store, self] in
            defer { stopped.signal() }
            var lastSweep = ContinuousClock.now
            // After a failed pass, none before this time: the segment that failed would be chosen again. The
            // wait doubles with each failure in a row (10 s up to 10 min).
            var nextPass = ContinuousClock.now
            var backOff = Self.backOffAfterFailure
            var idleBackOff = Self.firstIdleBackOff
            while true {
                _ = wakeUp.wait(timeout: .now() + .milliseconds(interval))
                if stopping.load(ordering: .acquiring) { return }
                guard let store else { return }
                let sweepEvery = options.markSweepInterval
                if sweepEvery > .zero, ContinuousClock.now - lastSweep >= sweepEvery {
                    lastSweep = ContinuousClock.now
                    do throws(LogStoreError) {
                        try store.collectGarbage()
                    } catch {
                        if error.code == .closed { return }
                        lastError.withLock { $0 = error }
                    }
                }
                if ContinuousClock.now >= nextPass {
                    switch runPass(store, options) {
                    case .done:
                        backOff = Self.backOffAfterFailure
                        idleBackOff = Self.firstIdleBackOff
                    case .nothingEligible:
                        // Garbage the store cannot reclaim now (in segments retained moments hold): look again
                        // later rather than every interval.
                        nextPass = ContinuousClock.now + idleBackOff
                        idleBackOff = min(idleBackOff * 2, Self.longestIdleBackOff)
                    case .failed:
                        nextPass = ContinuousClock.now + backOff
                        backOff = min(backOff * 2, Self.longestBackOff)
                    }
                }
                do throws(LogStoreError) {
                    try store.writeMissingHints()
                } catch {
                    if error.code == .closed { return }
                    lastError.withLock { $0 = error }
                }
            }
        }
        thread.name = "logstore.compactor"
        thread.start()
    }

    /// While the store's garbage share is at least the start ratio, compacts one segment at a time, the one
    /// with the largest garbage share of those that qualify: each pass deletes its input at its end, so the
    /// disk never holds more than one segment's live copies on top of the store (at most
    /// ``maximumPassesPerWakeUp`` passes, then it sleeps again).
    /// - returns: `.failed` when a pass failed, `.nothingEligible` when the garbage share called for a pass
    ///   but no segment could be compacted while retained moments hold some, `.done` otherwise.
    private func runPass(_ store: Store, _ options: CompactionOptions) -> PassOutcome {
        for pass in 0..<Self.maximumPassesPerWakeUp {
            guard !stopping.load(ordering: .acquiring), let statistics = try? store.statistics(),
                statistics.totalBytes > 0,
                Double(statistics.garbageBytes) >= options.startGarbageRatio * Double(statistics.totalBytes)
            else { return .done }
            do throws(LogStoreError) {
                let report = try store.compactSegments(
                    garbageRatio: options.segmentGarbageRatio, limit: 1, progress: nil)
                guard report.segmentsCompacted > 0 else {
                    return pass == 0 && report.segmentsHeld > 0 ? .nothingEligible : .done
                }
                passes.add(1, ordering: .relaxed)
                lastError.withLock { $0 = nil }
            } catch {
                if error.code != .closed { lastError.withLock { $0 = error } }
                return .failed
            }
        }
        return .done
    }

    /// What one wake-up's passes did.
    private enum PassOutcome { case done, nothingEligible, failed }

    /// How long the compactor waits before it looks again when the garbage share called for a pass but no
    /// segment qualified while retained moments hold some (doubled each time in a row, up to
    /// ``longestIdleBackOff``): the garbage they hold cannot be reclaimed until they are released.
    static let firstIdleBackOff: Duration = .seconds(1)
    static let longestIdleBackOff: Duration = .seconds(60)

    /// How long the compactor waits after a failed pass before it tries another (doubled for each further
    /// failure in a row, up to ``longestBackOff``).
    static let backOffAfterFailure: Duration = .seconds(10)
    static let longestBackOff: Duration = .seconds(600)

    /// Passes of one segment run back to back at most this many times per wake-up.
    static let maximumPassesPerWakeUp = 64

    /// Asks the thread to stop and, when `wait` is set, waits until it has (a pass in progress
    /// finishes first). The store's `deinit` does not wait: it may run on this very thread.
    func stop(wait: Bool = true) {
        guard !stopping.exchange(true, ordering: .acquiringAndReleasing) else { return }
        wakeUp.signal()
        if wait { stopped.wait() }
    }
}
