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
}
