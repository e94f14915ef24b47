@_spi(Engine) import LogStoreSystem

/// One element of a store's change feed (``Store/changes(after:)``).
public enum StoreChange: Sendable, Equatable {
    /// A committed batch: what it wrote, deleted, freed and which roots it changed.
    case batch(CommittedBatch)
    /// The batches after sequence `after` through `through` are not delivered one by one: the observer
    /// fell behind further than the store keeps (``StoreOptions/keptChanges``), or a follower reloaded the
    /// store instead of reading its log. Read again whatever you follow; batches after `through` follow.
    case missed(after: UInt64, through: UInt64)
    /// The store went back to batch `to`: batches after it that this feed delivered (or that the store
    /// had when the feed was made) are gone. Only a store open read-only that follows a writer delivers
    /// it, when a load of the whole store finds an older newest batch than it had: it delivers a batch
    /// once it is in the writer's file, which may be before the writer's sync returned, and a power cut
    /// then loses it; or the store was replaced by an older copy. (A store replaced by a copy as new as
    /// the one it had, or newer, is not told apart from one that moved on.) Read again whatever you
    /// follow; the batches committed after `to` follow, and their sequence numbers may repeat those of
    /// batches delivered before: a sequence kept from before is no longer a valid start for
    /// ``Store/changes(after:)`` (`invalidArgument` when it is newer than the store's newest).
    case rewound(to: UInt64)

    /// The sequence number of the newest batch this element covers.
    public var sequence: UInt64 {
        switch self {
        case .batch(let batch): return batch.sequence
        case .missed(_, let through): return through
        case .rewound(let to): return to
        }
    }
}

/// The committed batches of a store in commit order, as an `AsyncSequence` (from ``Store/changes(after:)``).
///
/// Each observer reads one shared, bounded log of the newest batches at its own pace: observing never
/// blocks the writer, and an observer that falls behind gets a
/// ``StoreChange/missed(after:through:)`` in place of the batches that were dropped. The sequence ends
/// when the store is closed or failed (a write or sync failed: it commits nothing more until it is opened
/// again), after the batches committed before, or when the observing task is
/// cancelled (after the changes its iterator already took, at most 255).
public struct StoreChanges: AsyncSequence, Sendable {
    /// A committed batch, or a run of batches the observer missed.
    public typealias Element = StoreChange
    /// Reading the feed never fails: it ends instead.
    public typealias Failure = Never

    let log: ChangeLog
    let start: UInt64
    /// The log's epoch when the feed was made (read before `start`).
    let epoch: UInt64
    /// Waits for batches after a position (in an epoch) instead of the log (a follower, which brings them
    /// in from the writer's log), or nil.
    let follow: (@Sendable (UInt64, UInt64) async -> Void)?

    /// Makes an iterator that starts after the sequence the feed was made for.
    public func makeAsyncIterator() -> Iterator {
        Iterator(log: log, cursor: start, epoch: epoch, follow: follow)
    }

    /// Reads the change feed.
    ///
    /// The iterator takes up to 256 changes from the log in one hold of its lock and hands them out one by
    /// one without touching the log (or the task), so following a busy writer costs an observer little
    /// per batch. Cancellation is seen when it next reads the log: a cancelled task gets the changes it
    /// already took, then nil.
    public struct Iterator: AsyncIteratorProtocol, Sendable {
        let log: ChangeLog
        /// The newest sequence taken from the log (or the start).
        var cursor: UInt64
        /// The log's epoch as of `cursor`.
        var epoch: UInt64
        let follow: (@Sendable (UInt64, UInt64) async -> Void)?
        /// Changes taken from the log and not delivered yet, the next one last: `popLast` hands it over
        /// without touching its reference count, which every observer of a batch shares.
        @usableFromInline var taken: [StoreChange] = []

        init(log: ChangeLog, cursor: UInt64, epoch: UInt64, follow: (@Sendable (UInt64, UInt64) async -> Void)?) {
            self.log = log
            self.cursor = cursor
            self.epoch = epoch
            self.follow = follow
        }

        /// How many changes one read of the log takes at most.
        static let takenAtOnce = 256

        /// The next change, waiting for one to be committed; nil once the store is closed or the task is
        /// cancelled.
        @inlinable
        public mutating func next() async -> StoreChange? {
            if let change = taken.popLast() { return change }
            return await nextFromLog()
        }

        /// The next change, waiting for one to be committed; nil once the store is closed or the task is
        /// cancelled. Runs in the caller's isolation.
        @inlinable
        public mutating func next(isolation actor: isolated (any Actor)?) async -> StoreChange? {
            if let change = taken.popLast() { return change }
            return await nextFromLog(isolation: actor)
        }

        /// Takes the next changes from the log, waiting for some, and returns the first.
        @usableFromInline
        mutating func nextFromLog(isolation actor: isolated (any Actor)? = #isolation) async -> StoreChange? {
            while !Task.isCancelled {
                var read = log.changesNewestFirst(after: cursor, epoch: epoch, limit: Self.takenAtOnce)
                epoch = read.epoch
                if let first = read.changes.popLast() {
                    taken = read.changes
                    cursor = read.cursor
                    return first
                }
                if read.finished { return nil }
                if let follow { await follow(cursor, epoch) } else { await log.wait(after: cursor, epoch: epoch) }
            }
            return nil
        }
    }
}

extension Store {
    /// The committed batches of this store, in commit order: one ``StoreChange/batch(_:)`` per batch,
    /// starting after batch `sequence` (nil: with the next batch committed after this call).
    ///
    /// Batches refused or failed are never delivered by a writable store. A store open read-only delivers
    /// what the writer's log holds once a whole batch is in its file, which may be before the writer's sync
    /// returned: should that sync fail, or power fail before it, the writer never acknowledged a batch its
    /// followers delivered. Each is delivered after readers of this store can
    /// see it, so a read made on hearing of it sees it (or something newer). On a store opened read-only,
    /// the feed follows the writer's log (another process's) while it is being read: see
    /// ``refresh()``. A refresh of the feed that fails (damage that lasts) does not end it: it is tried
    /// again every 250 ms, and ``refresh()`` throws its error.
    ///
    /// For example:
    /// ```swift
    /// for await change in try store.changes() {
    ///     if case .batch(let batch) = change, batch.touches(noteID) { reloadNote() }
    /// }
    /// ```
    /// - parameter sequence: the last sequence the caller has seen, e.g. a ``CommittedBatch/sequence`` it
    ///   kept; nil to start now.
    /// - throws: ``LogStoreError`` with code `closed`; `historyUnavailable` when the store no longer keeps
    ///   every batch after `sequence` (it keeps the newest ``StoreOptions/keptChanges`` changes committed
    ///   since it was opened); `invalidArgument` when `sequence` is newer than the store's newest batch.
    public func changes(after sequence: UInt64? = nil) throws(LogStoreError) -> StoreChanges {
        try checkOpen()
        let log = pipeline.changes
        // A batch readers see may not be in the log yet (the leader appends it just after): a sequence a
        // snapshot gave is never "newer than the newest". Under the index lock, which a follower's load of
        // the whole store holds while it tells the log.
        let (epoch, newest) = state.withLock { state in (log.epoch, max(log.newest, state.publishedSequence)) }
        guard let sequence else { return StoreChanges(log: log, start: newest, epoch: epoch, follow: changeFollower) }
        guard sequence <= newest else {
            throw LogStoreError(
                .invalidArgument, "sequence \(sequence) is newer than the store's newest batch, \(newest)",
                file: directory)
        }
        let oldest = log.oldestPosition
        guard sequence >= oldest else {
            throw LogStoreError(
                .historyUnavailable,
                "the batches after sequence \(sequence) are no longer kept: the store keeps those after \(oldest) "
                    + "(the newest \(options.keptChanges) changes since it was opened)", file: directory)
        }
        return StoreChanges(log: log, start: sequence, epoch: epoch, follow: changeFollower)
    }
}
