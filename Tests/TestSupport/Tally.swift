import Synchronization

/// A count that closures on any thread add to, with the largest value it has had: how many times a body
/// ran, how many writes were in flight at once.
///
/// For example:
/// ```swift
/// let runs = Tally()
/// try await objects.write { context in
///     runs.add(1)
///     …
/// }
/// #expect(runs.value == 1)
/// ```
package final class Tally: Sendable {
    private let counts = Mutex((value: 0, peak: 0))

    /// A tally at 0.
    package init() {}

    /// The count now.
    package var value: Int { counts.withLock { $0.value } }

    /// The largest value the count has had.
    package var peak: Int { counts.withLock { $0.peak } }

    /// Adds `amount` (which may be negative) and returns the new count.
    @discardableResult
    package func add(_ amount: Int) -> Int {
        counts.withLock { counts in
            counts.value += amount
            counts.peak = max(counts.peak, counts.value)
            return counts.value
        }
    }
}
