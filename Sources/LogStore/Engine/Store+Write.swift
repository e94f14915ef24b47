import Dispatch
@_spi(Engine) import LogStoreFormat
@_spi(Engine) import LogStoreSystem

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Writing: ids, puts, deletes, roots and atomic batches, through one group-commit pipeline.
///
/// A committer validates its batch, encodes it into the shared pending buffer under the queue lock,
/// and then either waits or becomes the leader: the leader takes every pending batch, writes them
/// with one `pwrite` per segment, syncs once (per the fsync policy), publishes their effects to the
/// index, and wakes the others. Concurrent committers so share one `fdatasync`.
extension Store {
    /// Hands out a new object id: the next in sequence, never handed out before by this store.
    ///
    /// The id is reserved on disk with the next commit, so after a crash it is not handed out again
    /// once anything was committed after this call.
    ///
    /// Ids end at ``LogStoreLimits/maxObjectID`` (2^63 − 1). Once every id was handed out, this returns
    /// an id one past that limit, and every write that uses it throws ``LogStoreError/Code/exhausted``.
    /// It does not throw itself: every caller goes on to write the id, which reports the error, and the
    /// limit is out of reach of ids handed out one by one (``reserveIDs(through:)`` stops at
    /// ``LogStoreLimits/maxReservableID``, leaving 2^62 − 1 ids), so a throwing signature would burden
    /// every call for a case that practically never happens.
    public func newID() -> ObjectID {
        nextID.withLock { next in
            let id = next
            if next <= LogFormat.maxObjectID { next += 1 }
            return ObjectID(id)
        }
    }

    /// Moves the id allocator past `id`, so ids up to it may be used in puts (as `import` does with
    /// the ids it brings) and are never handed out by ``newID()``. An `id` below the next id to hand
    /// out changes nothing (those ids are reserved already).
    ///
    /// The allocator is moved at most to ``LogStoreLimits/maxReservableID`` (2^62) + 1, so that ids
    /// brought in from outside always leave at least 2^62 − 1 ids for ``newID()``: an `id` above 2^62 is
    /// accepted only when it is below the next id already (any id up to ``LogStoreLimits/maxObjectID`` can
    /// be stored with a put once it is reserved).
    /// - throws: ``LogStoreError`` with code `idOutOfRange` when `id` is larger than
    ///   ``LogStoreLimits/maxReservableID`` and not below the next id to hand out (nothing changes then).
    public func reserveIDs(through id: ObjectID) throws(LogStoreError) {
        let limit = LogStoreLimits.maxReservableID.rawValue
        try nextID.withLock { next throws(LogStoreError) in
            guard id.rawValue >= next else { return }
            guard id.rawValue <= limit else {
                throw LogStoreError(
                    .idOutOfRange,
                    "cannot reserve ids through \(id): ids above \(limit) (2^62) are refused unless they are "
                        + "reserved already (below the next id, \(next)), so that at least 2^62 − 1 ids stay for "
                        + "newID() to hand out",
                    objects: [id])
            }
            next = id.rawValue + 1
        }
    }

    /// Moves the id allocator past `id`, up to ``LogStoreLimits/maxObjectID``, without the limit of
    /// ``reserveIDs(through:)``: for tests of the end of the id space.
    @_spi(Testing)
    public func reserveIDsUnchecked(through id: ObjectID) {
        nextID.withLock { $0 = max($0, min(id.rawValue, LogFormat.maxObjectID) + 1) }
    }

    /// Stores a new object under a new id and returns the id.
    ///
    /// For example:
    /// ```swift
    /// let id = try store.put(typeTag: 7, references: [other], payload: bytes)
    /// ```
    /// - parameters:
    ///   - typeTag: the application's number for the object's type.
    ///   - references: ids of the objects this one refers to.
    ///   - payload: the object's bytes, at most ``LogStoreLimits/maxPayloadSize``.
    ///   - pinned: keep the object until it is deleted (the default); when false, it lives only while
    ///     a live object or a named root refers to it.
    /// - throws: ``LogStoreError`` with code `danglingReference` when a reference names an object that
    ///   is not live, `payloadTooLarge`, `tooManyReferences`, `closed`, `readOnly`, or `storeFailed`
    ///   after an earlier I/O failure.
    @discardableResult
    public func put(typeTag: UInt32, references: [ObjectID] = [], payload: [UInt8], pinned: Bool = true)
        throws(LogStoreError) -> ObjectID
    {
        let id = newID()
        try commit([
            .put(Record(id: id, typeTag: typeTag, references: references, payload: payload, isPinned: pinned))
        ])
        return id
    }

    /// Stores (or replaces) the object `id`, an id from ``newID()``. Replacing a pinned object with an
    /// unpinned one hands it to the collector: it goes when nothing refers to it.
    /// - throws: what ``put(typeTag:references:payload:pinned:)`` throws, and `unallocatedID`.
    public func put(
        _ id: ObjectID, typeTag: UInt32, references: [ObjectID] = [], payload: [UInt8], pinned: Bool = true
    ) throws(LogStoreError) {
        try commit([
            .put(Record(id: id, typeTag: typeTag, references: references, payload: payload, isPinned: pinned))
        ])
    }

    /// Stores (or replaces) `record` under its id, an id from ``newID()``.
    /// - throws: what ``put(_:typeTag:references:payload:pinned:)`` throws.
    public func put(_ record: Record) throws(LogStoreError) {
        try commit([.put(record)])
    }

    /// Deletes the object `id` (writes a tombstone). Objects that only it kept alive are collected in
    /// the same batch.
    /// - throws: ``LogStoreError`` with code `notFound` when it is not live, `stillReferenced` when a live
    ///   object or a named root still refers to it (naming the root, or a referring object when one is
    ///   among the first 20,000 live objects in id order: the search runs under the index lock), and what
    ///   puts throw.
    public func delete(_ id: ObjectID) throws(LogStoreError) {
        try commit([.delete(id)])
    }

    /// Points the root `name` at `id`.
    /// - throws: ``LogStoreError`` with code `invalidRootName` (empty or over 1,024 UTF-8 bytes),
    ///   `unallocatedID`, and what puts throw.
    public func setRoot(_ name: String, to id: ObjectID) throws(LogStoreError) {
        try commit([.setRoot(name, id)])
    }

    /// Removes the root `name` (nothing happens when there is none).
    /// - throws: what ``setRoot(_:to:)`` throws.
    public func removeRoot(_ name: String) throws(LogStoreError) {
        try commit([.removeRoot(name)])
    }

    /// Applies every change of `batch` atomically: when this returns they are all visible (and durable
    /// under ``FsyncPolicy/always``); after a crash either all of them are there or none is. A batch that
    /// fails validation changes nothing.
    ///
    /// The batch's expectations (``WriteBatch/expect(_:version:)``) are checked first, atomically with the
    /// commit: when one does not hold, nothing is written.
    /// - returns: what the batch did (``CommittedBatch``): its sequence number, the version its records
    ///   have from now on (0 for an empty batch, which writes nothing), the objects it wrote and deleted,
    ///   those the engine freed with it, and the roots it changed.
    /// - throws: ``LogStoreError`` `conflict` naming the objects whose expectation failed, what the single
    ///   operations throw, and `invalidArgument` for a batch over 2 GiB.
    @discardableResult
    public func write(_ batch: WriteBatch) throws(LogStoreError) -> CommittedBatch {
        try commit(batch.operations, expecting: batch.expectations)
    }

    /// Builds a batch with `body` and writes it.
    /// - returns: what ``write(_:)`` returns.
    /// - throws: what ``write(_:)`` throws, or what `body` throws (nothing is written then).
    @discardableResult
    public func write(_ body: (inout WriteBatch) throws -> Void) throws -> CommittedBatch {
        var batch = WriteBatch()
        try body(&batch)
        return try write(batch)
    }

    /// The one way in for every write: checks that the store is writable and open, then hands the batch
    /// to the commit pipeline.
    @discardableResult
    func commit(_ operations: [WriteBatch.Operation], expecting expectations: [WriteBatch.Expectation] = [])
        throws(LogStoreError) -> CommittedBatch
    {
        guard !options.readOnly else { throw LogStoreError(.readOnly, "the store is open read-only", file: directory) }
        try checkOpen()
        guard !operations.isEmpty else {
            // Nothing to write, but what the caller read must still hold: checked as a commit would.
            if !expectations.isEmpty { try pipeline.check(expectations) }
            return CommittedBatch(sequence: 0)
        }
        return try pipeline.commit(operations, expecting: expectations)
    }
}
