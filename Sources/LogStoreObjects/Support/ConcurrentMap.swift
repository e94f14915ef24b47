import Foundation
import Synchronization

/// `body` of each of `0..<count`, run on as many threads as Dispatch gives (on this thread alone when
/// `parallel` is false), in order.
func concurrentMap<T: Sendable>(_ count: Int, parallel: Bool = true, _ body: @Sendable (Int) -> T) -> [T] {
    guard parallel, count > 1 else { return (0..<count).map(body) }
    let results = Mutex([T?](repeating: nil, count: count))
    DispatchQueue.concurrentPerform(iterations: count) { index in
        let result = body(index)
        results.withLock { $0[index] = result }
    }
    // `concurrentPerform` returns after every iteration ran, so each slot is set; one that were not would
    // be computed here rather than dropped (which would shift every later result).
    let computed = results.withLock { $0 }
    return computed.indices.map { computed[$0] ?? body($0) }
}
