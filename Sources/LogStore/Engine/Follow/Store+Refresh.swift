@_spi(Engine) import LogStoreFormat
@_spi(Engine) import LogStoreSystem

/// Following a writer: a store open read-only moves on to what a writer beside it commits, on demand
/// (``refresh()``) or as its change feed is read (``changes(after:)``).
extension Store {
    /// Moves a store open read-only on to the newest batches a writer beside it has committed (in another
    /// process, or another `Store` of this one), and returns them, one ``CommittedBatch`` per batch, in
    /// commit order. Observers of ``changes(after:)`` receive them too.
    ///
    /// It returns every batch committed since the last call returned, also those a change feed of the store
    /// read meanwhile (a feed that waits has the store read the writer's log every 2 ms), as far as the store
    /// still keeps them (``StoreOptions/keptChanges``).
    ///
    /// A store open read-only sees the store as it was when it was opened until it is refreshed. A refresh
    /// reads only what the writer appended since the last one, while the writer only appended; each batch
    /// is applied whole, in one step, so readers (gets, snapshots) see one committed state before it and
    /// one after. A batch the writer is still writing is not there yet: the next refresh reads it.
    ///
    /// When a compaction pass replaced segments since the last refresh (or what it read cannot be
    /// trusted), it loads the whole store again as ``open(at:options:)`` does read-only, and the batches
    /// committed in between are not returned one by one: observers of the change feed receive a
    /// ``StoreChange/missed(after:through:)`` for them, and ``Snapshot/sequence`` of a new snapshot says
    /// which batch the store is at. A refresh also loads the store again when reading stopped at the same
    /// bytes (not a whole batch) for a second: only damage found twice by that load is reported.
    ///
    /// The writer's batches are read once they are in the file, which may be before the writer's
    /// `fdatasync` returns: after a power failure the writer may have lost batches a refresh returned
    /// (with ``FsyncPolicy/always``, only those whose write had not returned yet). The refresh that finds
    /// the store went back then returns nothing for it (the change feed says ``StoreChange/rewound(to:)``),
    /// and later refreshes return the batches committed since, whose sequence numbers may repeat those
    /// returned before.
    ///
    /// A writable store holds the store's lock, so no other writer exists: it is always current, and this
    /// returns an empty array.
    ///
    /// For example:
    /// ```swift
    /// let follower = try Store.open(at: path, options: StoreOptions(readOnly: true))
    /// for batch in try follower.refresh() where batch.touches(noteID) {
    ///     reloadNote()
    /// }
    /// ```
    /// - returns: the batches committed since the last call returned, oldest first, that were read one by
    ///   one (those read before a load of the whole store included).
    /// - throws: ``LogStoreError`` with code `closed`; `ioError` (naming the file) when the directory or a
    ///   segment cannot be read; and what a read-only open throws when the store has to be loaded again
    ///   (`corruptFrame` naming file and offset for damage that lasts, `missingSegment`, ...). The store
    ///   keeps the state it had then.
    @discardableResult
    public func refresh() throws(LogStoreError) -> [CommittedBatch] {
        try checkOpen()
        guard let follower else { return [] }
        return try follower.refresh(self)
    }

    /// How a read-only store's change feed waits for the writer's new batches: it has the store's polling
    /// thread run (``Follower/keepPolling(_:)``), which publishes them to the change log, and waits on the
    /// log. Nil for a writable store, whose own commits fill the log. The feed holds the store weakly: one
    /// that is released finishes its feeds.
    var changeFollower: (@Sendable (UInt64, UInt64) async -> Void)? {
        guard let follower else { return nil }
        let log = pipeline.changes
        return { [weak self] cursor, epoch in
            follower.keepPolling(self)
            await log.wait(after: cursor, epoch: epoch)
        }
    }

    /// How many times a refresh of this store (open read-only) loaded the whole store again, and why the
    /// last time. For tests.
    @_spi(Testing) public var followerReloads: (count: Int, lastReason: String?) {
        follower?.state.withLock { ($0.reloads, $0.lastReload) } ?? (0, nil)
    }
}
