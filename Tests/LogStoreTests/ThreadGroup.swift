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
/// A `Mutex` held in a local and captured by the threads' closures is reported by the thread sanitizer as
/// a race on the capture (the borrow of a noncopyable capture is instrumented as a modifying access,
/// although the lock orders the accesses); held by a class, it is not.
final class Shared<Value: Sendable>: Sendable {
    private let mutex: Mutex<Value>

    init(_ value: Value) { mutex = Mutex(value) }

    func withLock<Result>(_ body: (inout Value) throws -> Result) rethrows -> Result {
        try mutex.withLock { try body(&$0) }
    }
}
