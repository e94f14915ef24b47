@_spi(Engine) import LogStoreFormat
@_spi(Engine) import LogStoreSystem

/// Accepting a batch: a committer validates it, checks its expectations and queues it under the
/// pipeline's lock, then waits for the group commit (``awaitDurable(_:)``).
extension CommitPipeline {
    /// Checks a batch's expectations as a commit would, without writing anything (an empty batch).
    func check(_ expectations: [WriteBatch.Expectation]) throws(LogStoreError) {
        try queue.withLock { _ throws(LogStoreError) in try checkExpectations(expectations) }
    }

    /// Validates `operations` (a batch that is not empty), checks `expectations`, applies the batch to
    /// the index's logical view, queues it and waits until it is durable (leading the group commit when
    /// no one is). Returns what the batch did.
    func commit(_ operations: [WriteBatch.Operation], expecting expectations: [WriteBatch.Expectation])
        throws(LogStoreError) -> CommittedBatch
    {
        queue.withLock { $0.arriving += 1 }
        var arrived = false
        defer {
            if !arrived,
                queue.withLock({ queue in
                    queue.arriving -= 1
                    return queue.gathered
                })
            {
                wakeGatheringLeader()
            }
        }
        let allocated = nextID.withLock { $0 }
        try validate(operations, allocatedBelow: allocated)
        let (committed, wakeLeader) = try queue.withLock { queue throws(LogStoreError) -> (CommittedBatch, Bool) in
            queue.arriving -= 1
            arrived = true
            guard !queue.closed else { throw LogStoreError(.closed, "the store is closed", file: directory) }
            if let failure = queue.failure {
                throw LogStoreError(
                    .storeFailed, "an earlier write failed; reopen the store", file: directory, underlying: failure)
            }
            if !expectations.isEmpty { try checkExpectations(expectations) }
            if let hooks = queue.hooks {
                do {
                    try hooks.validate(operations)
                } catch {
                    throw LogStoreError(.rejected, "\(error)", file: directory, underlying: error)
                }
            }
            let committed = try enqueue(operations, allocatedBelow: allocated, into: &queue)
            queue.pendingCommitters += 1
            return (committed, queue.gathered)
        }
        if wakeLeader { wakeGatheringLeader() }
        try awaitDurable(committed.sequence)
        return committed
    }

    /// Checks a batch's expectations against the writer's view, which includes every batch accepted
    /// before it (called under the queue lock, so no other batch is accepted meanwhile).
    /// - throws: ``LogStoreError`` `conflict` naming every object whose expectation does not hold.
    private func checkExpectations(_ expectations: [WriteBatch.Expectation]) throws(LogStoreError) {
        let failed = index.withLock { $0.failedExpectations(expectations) }
        guard failed.isEmpty else {
            let names = failed.prefix(8).map { "\($0)" }.joined(separator: ", ") + (failed.count > 8 ? ", …" : "")
            throw LogStoreError(
                .conflict, "\(failed.count) object(s) changed since they were read: \(names)", file: directory,
                objects: failed)
        }
    }

    /// Tells the leader gathering a group that it is complete, whether it spins or sleeps.
    private func wakeGatheringLeader() {
        signals.groupsCompleted.add(1, ordering: .releasing)
        queue.signalTimed()
    }

    /// Checks the limits of every operation of a batch before anything is changed.
    private func validate(_ operations: [WriteBatch.Operation], allocatedBelow allocated: UInt64)
        throws(LogStoreError)
    {
        func checkAllocated(_ id: ObjectID) throws(LogStoreError) {
            guard id.rawValue <= LogFormat.maxObjectID else {
                if id.rawValue == LogFormat.maxObjectID + 1, allocated > LogFormat.maxObjectID {
                    throw LogStoreError(
                        .exhausted,
                        "the store has handed out every object id (the largest is \(LogFormat.maxObjectID))",
                        objects: [id])
                }
                throw LogStoreError(
                    .idOutOfRange, "object id \(id) is larger than the largest object id \(LogFormat.maxObjectID)",
                    objects: [id])
            }
            guard id.rawValue > 0, id.rawValue < allocated else {
                throw LogStoreError(.unallocatedID, "object id \(id) was never handed out by this store")
            }
        }
        func checkName(_ name: String) throws(LogStoreError) {
            guard !name.isEmpty, name.utf8.count <= LogStoreLimits.maxRootNameLength else {
                throw LogStoreError(.invalidRootName, "root names have 1 to 1,024 UTF-8 bytes, got \(name.utf8.count)")
            }
        }
        for operation in operations {
            switch operation {
            case .put(let record):
                try checkAllocated(record.id)
                guard record.payload.count <= LogStoreLimits.maxPayloadSize else {
                    throw LogStoreError(
                        .payloadTooLarge,
                        "payload of \(record.payload.count) bytes for object \(record.id) is over 16 MiB")
                }
                guard record.references.count <= LogStoreLimits.maxReferenceCount else {
                    throw LogStoreError(
                        .tooManyReferences,
                        "\(record.references.count) references for object \(record.id), at most 65,536")
                }
            case .delete:
                break
            case .setRoot(let name, let id):
                try checkName(name)
                try checkAllocated(id)
            case .removeRoot(let name):
                try checkName(name)
            }
        }
    }
}
