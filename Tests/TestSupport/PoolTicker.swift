import Foundation
import Synchronization

/// A task that ticks every millisecond on Swift concurrency's cooperative pool, for tests that show the
/// pool is not blocked: while every thread of the pool is blocked, it stops ticking.
///
/// A test blocks a thread outside the pool (a sync a fault injector holds up) until the ticker ticks
/// again: that succeeds only if the pool still runs tasks meanwhile.
///
/// For example:
/// ```swift
/// let ticker = PoolTicker()
/// faults.perform(before: .sync, pathSuffix: ".seg", times: 1_000) { _ in
///     _ = ticker.waitForTicks(3, timeout: .seconds(10))
/// }
/// // … many concurrent async writes …
/// await ticker.stop()
/// ```
package final class PoolTicker: Sendable {
    private let ticks = Atomic(0)
    private let stopped = Atomic(false)
    private let task = Mutex<Task<Void, Never>?>(nil)

    /// Starts ticking (until ``stop()``, or until the ticker is released).
    package init() {
        // A task of its own on the pool (not a child of the test's task), sleeping between ticks so that it
        // needs a pool thread only to tick.
        let ticking = Task.detached { [weak self] in
            while true {
                do {
                    guard let ticker = self, !ticker.stopped.load(ordering: .acquiring) else { return }
                    ticker.ticks.add(1, ordering: .releasing)
                }
                try? await Task.sleep(for: .milliseconds(1))
            }
        }
        task.withLock { $0 = ticking }
    }

    /// Blocks the calling thread, which must not be a thread of the pool, until the ticker has ticked
    /// `count` more times, or until `timeout` has passed.
    /// - returns: whether it ticked `count` times in time.
    package func waitForTicks(_ count: Int, timeout: Duration) -> Bool {
        let target = ticks.load(ordering: .acquiring) + count
        let deadline = ContinuousClock.now + timeout
        while ticks.load(ordering: .acquiring) < target {
            guard ContinuousClock.now < deadline else { return false }
            usleep(500)
        }
        return true
    }

    /// Stops ticking and waits for the task to end.
    package func stop() async {
        stopped.store(true, ordering: .releasing)
        await task.withLock { $0 }?.value
    }
}
