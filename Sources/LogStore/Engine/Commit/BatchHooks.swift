@_spi(Engine) import LogStoreSystem

/// A check and an observer that a layer above the engine (the object layer's indexes) runs on every batch
/// a writer commits, in commit order, under the commit pipeline's lock.
///
/// `validate` sees a batch's operations after its expectations held and before anything of it is applied:
/// throwing refuses the batch (``LogStoreError/Code/rejected``, with the error as `underlying`). `accepted`
/// sees each accepted batch (committers' and the collector's) with its sequence number, in sequence order,
/// before it is durable or visible to snapshots. A batch accepted and then lost because the store failed
/// is never visible: the store commits nothing more until it is opened again.
///
/// Both run while every committer waits: they must be quick, must not block, and must not call the store.
package struct BatchHooks: Sendable {
    /// Refuses a batch by throwing.
    package var validate: @Sendable ([WriteBatch.Operation]) throws -> Void
    /// Sees each accepted batch.
    package var accepted: @Sendable ([WriteBatch.Operation], CommittedBatch) -> Void

    /// Hooks running `validate` and `accepted`.
    package init(
        validate: @escaping @Sendable ([WriteBatch.Operation]) throws -> Void,
        accepted: @escaping @Sendable ([WriteBatch.Operation], CommittedBatch) -> Void
    ) {
        self.validate = validate
        self.accepted = accepted
    }
}

extension Store {
    /// Installs `hooks` (replacing any installed before) and returns the sequence number of the last batch
    /// accepted before them: the hooks see every batch after it.
    package func installBatchHooks(_ hooks: BatchHooks) -> UInt64 {
        pipeline.queue.withLock { queue in
            queue.hooks = hooks
            return queue.nextSequence - 1
        }
    }
}
