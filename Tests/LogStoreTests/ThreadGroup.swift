import Foundation
import Synchronization

/// Dedicated threads (not a shared pool, which a busy test run can starve) that can be joined.
final class ThreadGroup: Sendable {
    private let running = Atomic<Int>(0)

    /// Starts `count` threads running `body(index)`.
    func start(_ count: Int, _ body: @escaping @Sendable (Int) -> Void) {
        for index in 0..<count {
            running.add(1, ordering: .relaxed)
            let thread = Thread { [self] in
                body(index)
                running.subtract(1, ordering: .releasing)
            }
            thread.start()
        }
    }

    /// Waits until every started thread has returned.
    func join() {
        while running.load(ordering: .acquiring) > 0 { Thread.sleep(forTimeInterval: 0.005) }
    }

    /// Lets the threads run at least 2 s and until `done` says they made enough progress (at most 30 s
    /// on a busy machine), then raises `stop` and joins them.
    func run(until done: () -> Bool, thenStop stop: borrowing Atomic<Bool>) {
        let start = ContinuousClock.now
        while ContinuousClock.now - start < .seconds(30), ContinuousClock.now - start < .seconds(2) || !done() {
            Thread.sleep(forTimeInterval: 0.05)
        }
        stop.store(true, ordering: .relaxed)
        join()
    }
}

/// A value shared by test threads behind a lock.
///
/// An `NSLock` (a pthread mutex), not a `Mutex`: the thread sanitizer does not see the ordering that
/// `Mutex`'s futex gives on Linux, and reported accesses inside `withLock` as races.
///
/// `@unchecked Sendable`: `value` is only read or written inside `withLock`, which holds `lock` for the
/// whole access.
final class Shared<Value: Sendable>: @unchecked Sendable {
    private let lock = NSLock()
    private var value: Value

    init(_ value: Value) { self.value = value }

    func withLock<Result>(_ body: (inout Value) throws -> Result) rethrows -> Result {
        lock.lock()
        defer { lock.unlock() }
        return try body(&value)
    }
}
