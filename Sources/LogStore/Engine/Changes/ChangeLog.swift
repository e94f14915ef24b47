import Dispatch
@_spi(Engine) import LogStoreSystem

/// The newest committed batches, kept for the store's observers, and the observers waiting for more.
///
/// One log serves every observer: the leader of a group commit appends the group's batches (in commit
/// order, after the index shows them) and wakes the observers that wait; each observer reads the log at
/// its own position. The log keeps at most ``StoreOptions/keptChanges`` changes (and always the newest
/// batch), dropping the oldest batches first, so an observer that falls behind costs the writer nothing
/// and memory stays bounded: it learns which batches it missed (``StoreChange/missed(after:through:)``).
final class ChangeLog: Sendable {
    /// What one read of the log gives an observer at position `cursor`.
    enum Step {
        /// The next change, and the observer's position after it.
        case change(StoreChange, cursor: UInt64)
        /// Nothing newer yet.
        case wait
        /// The store was closed: nothing more will come.
        case finished
    }

    private struct State {
        /// Kept batches in commit order: `batches[head...]`.
        var batches: [CommittedBatch] = []
        var head = 0
        /// Changes in the kept batches.
        var keptChanges = 0
        /// Every batch up to this sequence is dropped, or was committed before the log began.
        var droppedThrough: UInt64
        /// The newest batch appended.
        var newest: UInt64
        /// Observers waiting for a batch newer than their position.
        var waiters: [UInt64: CheckedContinuation<Void, Never>] = [:]
        var nextWaiter: UInt64 = 0
        var finished = false
        /// When waiting observers were last woken, and whether a paced wake is scheduled.
        var lastWake: UInt64 = 0
        var wakeScheduled = false
    }

    private let state: RankedMutex<State>
    private let limit: Int

    /// A log that begins after batch `sequence` (the newest when the store opened) and keeps `limit`
    /// changes.
    init(after sequence: UInt64, limit: Int) {
        state = RankedMutex(State(droppedThrough: sequence, newest: sequence), rank: .changeLog)
        self.limit = limit
    }

    /// The newest batch appended (the store's newest visible batch).
    var newest: UInt64 { state.withLock { $0.newest } }

    /// Whether an observer waits for a batch (a follower's polling thread runs while one does).
    var hasWaiters: Bool { state.withLock { !$0.waiters.isEmpty } }

    /// The oldest position an observer can start from and still get every batch after it.
    var oldestPosition: UInt64 { state.withLock { $0.droppedThrough } }

    /// Observers to wake after a group was appended.
    struct Wake {
        fileprivate let waiters: [CheckedContinuation<Void, Never>]

        /// Wakes them: a few at once, more from a queue of their own, so that the leader that appended
        /// the group does not spend its time resuming many observers.
        func resume() {
            guard !waiters.isEmpty else { return }
            if waiters.count <= ChangeLog.inlineWakes {
                for waiter in waiters { waiter.resume() }
            } else {
                let waiters = self.waiters
                ChangeLog.wakeQueue.async { for waiter in waiters { waiter.resume() } }
            }
        }
    }

    /// How many waiting observers the leader wakes itself, at once, after every group.
    static let inlineWakes = 4
    /// More observers than ``inlineWakes`` are woken at most once per this many nanoseconds per observer
    /// (100 observers: every 10 ms), the groups committed meanwhile coalesced into one wake: each wake runs
    /// every observer's task, and waking 100 of them after each group of a busy writer would take the
    /// writer's cores.
    static let pacePerWaiter: UInt64 = 100_000
    /// Wakes larger numbers of observers, in order.
    static let wakeQueue = DispatchQueue(label: "LogStore.ChangeLog.wake")

    /// Appends the batches of a published group, in commit order, and returns the observers to wake
    /// (the leader wakes them once it has released the committers it served).
    func append(_ edits: [BatchEdit]) -> Wake {
        guard !edits.isEmpty else { return Wake(waiters: []) }
        let waiters = state.withLock { state -> [CheckedContinuation<Void, Never>] in
            for edit in edits { append(edit.committed, to: &state) }
            return takeDueWaiters(&state)
        }
        return Wake(waiters: waiters)
    }

    /// Appends batches read from the log by a follower (a store open read-only that moved on).
    func publish(_ batches: [CommittedBatch]) {
        guard !batches.isEmpty else { return }
        let waiters = state.withLock { state -> [CheckedContinuation<Void, Never>] in
            for batch in batches { append(batch, to: &state) }
            return takeDueWaiters(&state)
        }
        Wake(waiters: waiters).resume()
    }

    /// Notes that batches up to `sequence` happened without being kept (a follower that reloaded the
    /// store instead of reading its log): observers behind it learn that they missed them.
    func skip(through sequence: UInt64) {
        let waiters = state.withLock { state -> [CheckedContinuation<Void, Never>] in
            guard sequence > state.newest else { return [] }
            state.batches.removeAll()
            state.head = 0
            state.keptChanges = 0
            state.droppedThrough = sequence
            state.newest = sequence
            return takeWaiters(&state)
        }
        for waiter in waiters { waiter.resume() }
    }

    /// Ends the log (the store closes): every observer finishes once it has read what is kept.
    func finish() {
        let waiters = state.withLock { state -> [CheckedContinuation<Void, Never>] in
            state.finished = true
            return takeWaiters(&state)
        }
        for waiter in waiters { waiter.resume() }
    }

    private func append(_ batch: CommittedBatch, to state: inout State) {
        state.batches.append(batch)
        state.keptChanges += Self.size(of: batch)
        state.newest = max(state.newest, batch.sequence)
        // Drop the oldest while over the limit, keeping the newest batch.
        while state.keptChanges > limit, state.batches.count - state.head > 1 {
            let dropped = state.batches[state.head]
            state.keptChanges -= Self.size(of: dropped)
            state.droppedThrough = dropped.sequence
            state.head += 1
        }
        if state.head > 64, state.head * 2 > state.batches.count {
            state.batches.removeFirst(state.head)
            state.head = 0
        }
    }

    /// The waiters to wake now that something was appended: all of a few; of more, all when the last wake
    /// is ``pacePerWaiter`` per waiter ago, else none, and a wake is scheduled for then (which takes every
    /// observer waiting by that time).
    private func takeDueWaiters(_ state: inout State) -> [CheckedContinuation<Void, Never>] {
        guard !state.waiters.isEmpty else { return [] }
        let now = SystemClock.monotonicNanoseconds()
        let due = state.lastWake + UInt64(state.waiters.count) * Self.pacePerWaiter
        if state.waiters.count <= Self.inlineWakes || (now >= due && !state.wakeScheduled) {
            state.lastWake = now
            return takeWaiters(&state)
        }
        if !state.wakeScheduled {
            state.wakeScheduled = true
            let delay = Int(clamping: due > now ? due - now : 0)
            Self.wakeQueue.asyncAfter(deadline: .now() + .nanoseconds(delay)) { [weak self] in self?.pacedWake() }
        }
        return []
    }

    /// The scheduled wake of ``takeDueWaiters(_:)``.
    private func pacedWake() {
        let waiters = state.withLock { state -> [CheckedContinuation<Void, Never>] in
            state.wakeScheduled = false
            state.lastWake = SystemClock.monotonicNanoseconds()
            return takeWaiters(&state)
        }
        for waiter in waiters { waiter.resume() }
    }

    private func takeWaiters(_ state: inout State) -> [CheckedContinuation<Void, Never>] {
        guard !state.waiters.isEmpty else { return [] }
        defer { state.waiters.removeAll(keepingCapacity: true) }
        return Array(state.waiters.values)
    }

    /// What a batch costs the log: its changes, and at least one.
    private static func size(of batch: CommittedBatch) -> Int {
        max(
            1,
            batch.written.count + batch.deleted.count + batch.freed.count + batch.rootsSet.count
                + batch.rootsRemoved.count)
    }

    /// The change after position `cursor`.
    func step(after cursor: UInt64) -> Step {
        state.withLock { state in
            if cursor < state.droppedThrough {
                return .change(
                    .missed(after: cursor, through: state.droppedThrough), cursor: state.droppedThrough)
            }
            let low = firstKept(after: cursor, in: state)
            if low < state.batches.count {
                let batch = state.batches[low]
                return .change(.batch(batch), cursor: batch.sequence)
            }
            return state.finished ? .finished : .wait
        }
    }

    /// Up to `limit` changes after position `cursor`, taken in one hold of the lock (an observer then
    /// delivers them one by one without taking it), and the position after them; empty when there is
    /// nothing newer yet (`finished`: nor will there be).
    func changes(after cursor: UInt64, limit: Int) -> (changes: [StoreChange], cursor: UInt64, finished: Bool) {
        state.withLock { state in
            if cursor < state.droppedThrough {
                return ([.missed(after: cursor, through: state.droppedThrough)], state.droppedThrough, false)
            }
            let first = firstKept(after: cursor, in: state)
            guard first < state.batches.count else { return ([], cursor, state.finished) }
            let end = min(state.batches.count, first + limit)
            let taken = state.batches[first..<end].map { StoreChange.batch($0) }
            return (taken, state.batches[end - 1].sequence, false)
        }
    }

    /// The kept batches after `sequence`, in commit order.
    func batches(after sequence: UInt64) -> [CommittedBatch] {
        state.withLock { state in
            Array(state.batches[firstKept(after: sequence, in: state)...])
        }
    }

    /// The position in `state.batches` of the first kept batch after `sequence` (batches are in sequence
    /// order).
    private func firstKept(after sequence: UInt64, in state: State) -> Int {
        var low = state.head
        var high = state.batches.count
        while low < high {
            let middle = (low + high) / 2
            if state.batches[middle].sequence <= sequence { low = middle + 1 } else { high = middle }
        }
        return low
    }

    /// Suspends until a batch newer than `cursor` is appended, the log ends, or the task is cancelled.
    func wait(after cursor: UInt64) async {
        let waiter = state.withLock { state -> UInt64 in
            defer { state.nextWaiter += 1 }
            return state.nextWaiter
        }
        await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                let resumeNow = state.withLock { state -> Bool in
                    if state.finished || state.newest > cursor || Task.isCancelled { return true }
                    state.waiters[waiter] = continuation
                    return false
                }
                if resumeNow { continuation.resume() }
            }
        } onCancel: {
            state.withLock { $0.waiters.removeValue(forKey: waiter) }?.resume()
        }
    }
}
