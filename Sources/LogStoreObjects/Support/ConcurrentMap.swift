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
    return results.withLock { $0 }.compactMap { $0 }
}
