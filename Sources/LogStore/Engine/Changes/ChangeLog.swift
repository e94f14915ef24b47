import Dispatch
@_spi(Engine) import LogStoreSystem
import Synchronization

/// The newest committed batches, kept for the store's observers, and the observers waiting for more.
///
/// One log serves every observer: the leader of a group commit appends the group's batches (in commit
/// order, after the index shows them) and wakes the observers that wait; each observer reads the log at
/// its own position. The log keeps at most ``StoreOptions/keptChanges`` changes (and always the newest
/// batch), dropping the oldest batches first, so an observer that falls behind costs the writer nothing
/// and memory stays bounded: it learns which batches it missed (``StoreChange/missed(after:through:)``).
final class ChangeLog: Sendable {
    struct State {
        /// Kept batches in commit order: `batches[head...]`.
        var batches: [CommittedBatch] = []
        var head = 0
        /// Changes in the kept batches.
        var keptChanges = 0
        /// Every batch up to this sequence is dropped, or was committed before the log began.
        var droppedThrough: UInt64
        /// The newest batch appended.
        var newest: UInt64
        /// Observers waiting for a batch newer than their position, the longest waiting first.
        var waiters: [Waiter] = []
        var nextWaiter: UInt64 = 0
        var finished = false
        /// Bumped when the store went back to an older batch (``ChangeLog/reloaded(at:)``).
        var epoch: UInt64 = 0
        /// The batch each rewind went back to, with the epoch it began (at most 16).
        var rewinds: [(epoch: UInt64, to: UInt64)] = []
        /// Whether observers wait for batches the log has, left for the rolling wake (more wait than
        /// ``ChangeLog/wakesAtOnce``).
        var rolling = false
        /// Whether the rolling wake's timer is scheduled.
        var timerScheduled = false
        /// When the rolling wake may next wake observers (monotonic nanoseconds).
        var nextWake: UInt64 = 0
    }

    private let state: RankedMutex<State>
    private let limit: Int
    /// When a commit leader last started a sync (monotonic nanoseconds): while syncs come often, they do
    /// the rolling wake, and its timer waits a turn longer.
    private let lastSyncStart = Atomic<UInt64>(0)

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

    /// An observer waiting for a batch newer than `cursor`.
    struct Waiter {
        let id: UInt64
        let cursor: UInt64
        /// The log's epoch the observer read in: a rewind since makes it due.
        let epoch: UInt64
        let continuation: CheckedContinuation<Void, Never>

        /// Whether the log has something for it: a newer batch, a rewind, or its end.
        func isDue(in state: State) -> Bool {
            cursor < state.newest || epoch != state.epoch || state.finished
        }
    }

    /// Observers to wake after a group was appended.
    struct Wake {
        fileprivate let waiters: [CheckedContinuation<Void, Never>]

        /// Wakes them (after a group, at most ``ChangeLog/wakesAtOnce``: the leader that appended it does not
        /// spend its time resuming many observers).
        func resume() {
            for waiter in waiters { waiter.resume() }
        }
    }

    /// How many waiting observers are woken at once: the leader wakes them itself after a group when no
    /// more wait; of more, a rolling wake takes this many at a time.
    static let wakesAtOnce = 4
    /// When more than ``wakesAtOnce`` observers wait, they are woken a few at a time, the longest waiting
    /// first, this many nanoseconds apart per observer woken (so at most about 1,000 wakes a second: with
    /// 100 observers, each every 100 ms or so; with 10, every 10 ms), and each then takes every batch
    /// committed since it last read. What an observer costs is mostly its wake (its task resumed on a pool
    /// thread that often slept, its read of the log, its wait again), not its batches: waking 100 observers
    /// after every group of a busy writer would take the writer's cores, and waking them all at once,
    /// every so often, would take every core at once for the length of their work, and committers that
    /// yield their core while they wait for the sync would get it back late. Measured with 8 durable
    /// writers on 2 cores: 0.1 ms per observer kept 0.89 of their throughput with 100 observers, 1 ms 0.95.
    static let pacePerWaiter: UInt64 = 1_000_000
    /// Runs the rolling wakes.
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

    /// Notes that a follower loaded the whole store again (instead of reading the writer's log) and found
    /// batch `sequence` the newest. Newer than the log's newest: the batches between happened without
    /// being kept, and observers behind learn that they missed them. Older: the store went back (the
    /// writer lost batches a follower had delivered, which it may do before its sync returns, or the
    /// store was replaced), and observers that were given a batch after `sequence` learn it
    /// (``StoreChange/rewound(to:)``); the batches committed from then on follow.
    func reloaded(at sequence: UInt64) -> Wake {
        let waiters = state.withLock { state -> [CheckedContinuation<Void, Never>] in
            guard sequence != state.newest else { return [] }
            if sequence < state.newest {
                state.epoch += 1
                state.rewinds.append((state.epoch, sequence))
                // Bounded: the two oldest become one, at the lower point and the later epoch; an observer
                // between them may then hear of a lower point than it needs, and read again from there.
                if state.rewinds.count > 16 {
                    let first = state.rewinds.removeFirst()
                    state.rewinds[0].to = min(first.to, state.rewinds[0].to)
                }
            }
            state.batches.removeAll()
            state.head = 0
            state.keptChanges = 0
            state.droppedThrough = sequence
            state.newest = sequence
            return takeWaiters(&state)
        }
        return Wake(waiters: waiters)
    }

    /// The epoch: an observer starts in the epoch it read before the newest sequence.
    var epoch: UInt64 { state.withLock { $0.epoch } }

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

    /// The waiters to wake now that something was appended: all of a few, at once (unless a rolling wake
    /// is under way); of more, none now: the rolling wake takes them.
    private func takeDueWaiters(_ state: inout State) -> [CheckedContinuation<Void, Never>] {
        guard !state.waiters.isEmpty else { return [] }
        if !state.rolling, state.waiters.count <= Self.wakesAtOnce { return takeWaiters(&state) }
        let now = SystemClock.monotonicNanoseconds()
        // The first few at once when their turn came (the store was quiet): the rolling wake takes the rest.
        var due: [CheckedContinuation<Void, Never>] = []
        if !state.rolling {
            due = wakeSome(&state, now: now)
            if due.isEmpty { state.rolling = true }
        }
        if state.rolling { scheduleTimer(&state, now: now) }
        return due
    }

    /// Called by a commit leader as it starts a sync: the rolling wake wakes its next few observers now,
    /// if their turn came, so that they run while the committers wait for the disk rather than when the
    /// committers want their cores back.
    func syncStarting() {
        lastSyncStart.store(SystemClock.monotonicNanoseconds(), ordering: .relaxed)
        let due = state.withLock { state -> [CheckedContinuation<Void, Never>] in
            guard state.rolling else { return [] }
            return wakeSome(&state, now: SystemClock.monotonicNanoseconds())
        }
        for waiter in due { waiter.resume() }
    }

    /// The rolling wake: up to ``wakesAtOnce`` observers that wait for a batch the log has, the longest
    /// waiting first, when their turn came (``pacePerWaiter`` per observer woken before); `rolling` stays on
    /// while more such observers wait.
    private func wakeSome(_ state: inout State, now: UInt64) -> [CheckedContinuation<Void, Never>] {
        guard now >= state.nextWake else { return [] }
        var due: [CheckedContinuation<Void, Never>] = []
        var position = 0
        while position < state.waiters.count, due.count < Self.wakesAtOnce {
            if state.waiters[position].isDue(in: state) {
                due.append(state.waiters.remove(at: position).continuation)
            } else {
                position += 1
            }
        }
        let current = state
        state.rolling = state.waiters[position...].contains { $0.isDue(in: current) }
        state.nextWake = now + UInt64(due.count) * Self.pacePerWaiter
        return due
    }

    /// Schedules the rolling wake's timer, unless it is: it fires when the next wake is due, or a turn
    /// later while syncs come often, so that a store that syncs often wakes its observers as it starts a
    /// sync, and one that does not, from the timer.
    private func scheduleTimer(_ state: inout State, now: UInt64) {
        guard !state.timerScheduled else { return }
        state.timerScheduled = true
        let turn = UInt64(Self.wakesAtOnce) * Self.pacePerWaiter
        let syncsLately = now &- lastSyncStart.load(ordering: .relaxed) < turn
        let due = max(now, state.nextWake) + (syncsLately ? turn : 0)
        Self.wakeQueue.asyncAfter(deadline: .now() + .nanoseconds(Int(clamping: due - now))) { [weak self] in
            self?.timerFired()
        }
    }

    private func timerFired() {
        let due = state.withLock { state -> [CheckedContinuation<Void, Never>] in
            state.timerScheduled = false
            guard state.rolling else { return [] }
            let now = SystemClock.monotonicNanoseconds()
            let due = wakeSome(&state, now: now)
            if state.rolling { scheduleTimer(&state, now: now) }
            return due
        }
        for waiter in due { waiter.resume() }
    }

    private func takeWaiters(_ state: inout State) -> [CheckedContinuation<Void, Never>] {
        guard !state.waiters.isEmpty else { return [] }
        defer { state.waiters.removeAll(keepingCapacity: true) }
        return state.waiters.map(\.continuation)
    }

    /// What a batch costs the log: its changes, and at least one.
    private static func size(of batch: CommittedBatch) -> Int {
        max(
            1,
            batch.written.count + batch.deleted.count + batch.freed.count + batch.rootsSet.count
                + batch.rootsRemoved.count)
    }

    /// Up to `limit` changes after position `cursor` (of an observer in epoch `epoch`), taken in one hold
    /// of the lock, the newest first (an observer then delivers them one by one from the end, without
    /// taking the lock), and the position and epoch after them; empty when there is nothing newer yet
    /// (`finished`: nor will there be).
    func changesNewestFirst(after cursor: UInt64, epoch: UInt64, limit: Int)
        -> (changes: [StoreChange], cursor: UInt64, epoch: UInt64, finished: Bool)
    {
        state.withLock { state in
            if epoch != state.epoch {
                // The store went back since this observer last read: if it was given a batch after where
                // it went back to, it learns so, and goes on from there.
                let lowest = state.rewinds.lazy.filter { $0.epoch > epoch }.map(\.to).min()
                if let lowest, cursor > lowest { return ([.rewound(to: lowest)], lowest, state.epoch, false) }
            }
            let epoch = state.epoch
            if cursor < state.droppedThrough {
                return ([.missed(after: cursor, through: state.droppedThrough)], state.droppedThrough, epoch, false)
            }
            let first = firstKept(after: cursor, in: state)
            guard first < state.batches.count else { return ([], cursor, epoch, state.finished) }
            let end = min(state.batches.count, first + limit)
            var taken: [StoreChange] = []
            taken.reserveCapacity(end - first)
            for position in stride(from: end - 1, through: first, by: -1) {
                taken.append(.batch(state.batches[position]))
            }
            return (taken, state.batches[end - 1].sequence, epoch, false)
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

    /// Suspends until a batch newer than `cursor` is appended, the store goes back to an older batch
    /// (the log's epoch is no longer `epoch`), the log ends, or the task is cancelled.
    func wait(after cursor: UInt64, epoch: UInt64) async {
        let waiter = state.withLock { state -> UInt64 in
            defer { state.nextWaiter += 1 }
            return state.nextWaiter
        }
        await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                let resumeNow = state.withLock { state -> Bool in
                    if state.finished || state.newest > cursor || state.epoch != epoch || Task.isCancelled {
                        return true
                    }
                    state.waiters.append(Waiter(id: waiter, cursor: cursor, epoch: epoch, continuation: continuation))
                    return false
                }
                if resumeNow { continuation.resume() }
            }
        } onCancel: {
            state.withLock { state -> CheckedContinuation<Void, Never>? in
                guard let position = state.waiters.firstIndex(where: { $0.id == waiter }) else { return nil }
                return state.waiters.remove(at: position).continuation
            }?.resume()
        }
    }
}
