import LogStore
import Synchronization

/// How work that lost a race with another writer (a `conflict`) waits before it runs again: the ODB's
/// changes and transactions, ``ObjectStore/update(attempts:_:)`` and ``ObjectStore/write(attempts:_:)``.
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
        SystemClock.sleep(.microseconds(pauseMicroseconds(after: attempt)))
    }

    /// The same wait for a task: the wait for visibility (it lasts at most the sync of the batches in
    /// flight) blocks a thread outside the cooperative pool, the pause suspends the task.
    /// - throws: `CancellationError` when the task is cancelled during the pause.
    static func pause(after attempt: Int, store: Store) async throws {
        _ = await BlockingExecutor.run { store.awaitAcceptedBatches() }
        try await Task.sleep(for: .microseconds(pauseMicroseconds(after: attempt)))
    }

    /// A random pause, doubling with each attempt.
    private static func pauseMicroseconds(after attempt: Int) -> Int {
        let ceiling = min(50 << min(max(attempt - 1, 0), 16), maximumMicroseconds)
        return Int.random(in: ceiling / 2...ceiling)
    }
}

/// Keeps runs of retried work from starving: while a run that conflicted ``starvingAfter`` times or more
/// retries, the attempts of the other runs (of one ``ObjectStore`` or ``ODB``) wait for it, up to
/// ``maximumWaitNanoseconds``.
///
/// Backing off alone is unfair: a run that just succeeded starts its next piece of work at once, while
/// the runs it beat are still pausing, so the same runs keep winning and one can lose every round until
/// it gives up. Holding the others back while a run is in trouble gives it the next turn.
final class ContentionGate: Sendable {
    /// Conflicts after which a run is let through first.
    static let starvingAfter = 4
    /// How long an attempt waits at most for the starving runs: 50 ms.
    static let maximumWaitNanoseconds: UInt64 = 50_000_000

    /// The runs now retrying after ``starvingAfter`` conflicts or more.
    private let starving = Atomic(0)

    /// Before an attempt of a run that is not starving: waits while a starving run retries.
    func admit() {
        guard starving.load(ordering: .acquiring) > 0 else { return }
        let deadline = SystemClock.monotonicNanoseconds() + Self.maximumWaitNanoseconds
        while starving.load(ordering: .acquiring) > 0 && SystemClock.monotonicNanoseconds() < deadline {
            SystemClock.sleep(.microseconds(50))
        }
    }

    /// ``admit()`` for a task: suspends instead of blocking while a starving run retries.
    /// - throws: `CancellationError` when the task is cancelled meanwhile.
    func admit() async throws {
        guard starving.load(ordering: .acquiring) > 0 else { return }
        let deadline = SystemClock.monotonicNanoseconds() + Self.maximumWaitNanoseconds
        while starving.load(ordering: .acquiring) > 0 && SystemClock.monotonicNanoseconds() < deadline {
            try await Task.sleep(for: .microseconds(50))
        }
    }

    /// A run starts retrying as a starving one (call ``leave()`` when it ends, however it ends).
    func enter() { starving.add(1, ordering: .releasing) }

    /// A starving run ended.
    func leave() { starving.subtract(1, ordering: .releasing) }
}

/// One run of retried work at a ``ContentionGate``: whether it retries as a starving run.
struct ContendedRun {
    let gate: ContentionGate
    private(set) var starving = false

    init(_ gate: ContentionGate) { self.gate = gate }

    /// Before an attempt: a run that is not starving waits for the starving ones.
    func admit() {
        if !starving { gate.admit() }
    }

    /// ``admit()`` for a task.
    /// - throws: `CancellationError` when the task is cancelled meanwhile.
    func admit() async throws {
        if !starving { try await gate.admit() }
    }

    /// After `conflicts` conflicts: from ``ContentionGate/starvingAfter`` on, the run goes first.
    mutating func conflicted(_ conflicts: Int) {
        guard conflicts >= ContentionGate.starvingAfter && !starving else { return }
        starving = true
        gate.enter()
    }

    /// When the run ends, however it ends.
    func end() {
        if starving { gate.leave() }
    }
}
