import LogStore

/// How work that lost a race with another writer (a `conflict`) waits before it runs again: the ODB's
/// changes and transactions, and ``ObjectStore/update(attempts:_:)``.
///
/// First until the batches the refused write was checked against are visible to readers (their sync may
/// still be running, and a retry that read the state from before them would conflict again for nothing),
/// then a random time that doubles with each attempt (from 25–50 µs to at most 1–2 ms), so writers
/// that keep colliding spread out instead of colliding again in step.
enum ConflictBackoff {
    /// The longest pause, in microseconds (a random time between half of it and all of it).
    static let maximumMicroseconds = 2_000

    /// Waits before attempt `attempt + 1`, after `attempt` attempts (at least 1) conflicted.
    static func wait(after attempt: Int, store: Store) {
        _ = store.awaitAcceptedBatches()
        let ceiling = min(50 << min(max(attempt - 1, 0), 16), maximumMicroseconds)
        SystemClock.sleep(.microseconds(Int.random(in: ceiling / 2...ceiling)))
    }
}
