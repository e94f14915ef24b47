/// Writing and syncing from Swift concurrency without blocking its cooperative pool.
///
/// A commit waits for the group-commit leader and, under ``FsyncPolicy/always``, for its sync; ``sync()``
/// waits for the disk. Called from a task, the synchronous forms block one of the pool's threads (one per
/// core) meanwhile. These forms run the synchronous ones on a thread of their own and suspend the task.
extension Store {
    /// ``write(_:)`` for Swift concurrency: the commit, and the wait for its sync, run on a thread outside
    /// the cooperative pool while the calling task is suspended.
    ///
    /// A batch handed over is committed whatever happens to the task: cancelling it does not take the
    /// batch back, and the call returns once the commit is done. Check `Task.isCancelled` before the call
    /// to give up on a batch.
    ///
    /// For example:
    /// ```swift
    /// var batch = WriteBatch()
    /// batch.put(Record(id: store.newID(), typeTag: 1, payload: Array("hello".utf8)))
    /// let committed = try await store.write(batch)   // committed.sequence, .written, …
    /// ```
    /// - parameter batch: the changes to apply atomically.
    /// - returns: what ``write(_:)`` returns.
    /// - throws: what ``write(_:)`` throws.
    @discardableResult
    public func write(_ batch: WriteBatch) async throws(LogStoreError) -> CommittedBatch {
        try await BlockingExecutor.run { () throws(LogStoreError) in try self.write(batch) }
    }

    /// ``sync()`` for Swift concurrency: the sync runs on a thread outside the cooperative pool while the
    /// calling task is suspended (and runs to the end even when the task is cancelled).
    ///
    /// For example:
    /// ```swift
    /// try await store.sync()
    /// ```
    /// - throws: what ``sync()`` throws.
    public func sync() async throws(LogStoreError) {
        try await BlockingExecutor.run { () throws(LogStoreError) in try self.sync() }
    }
}
