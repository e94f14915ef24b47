import Dispatch
import LogStoreFormat
import LogStoreSystem

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
    /// limit is out of reach of ids handed out one by one (only an import or ``reserveIDs(through:)`` of
    /// ids near it gets there), so a throwing signature would burden every call for a case that
    /// practically never happens.
    public func newID() -> ObjectID {
        nextID.withLock { next in
            let id = next
            if next <= LogFormat.maxObjectID { next += 1 }
            return ObjectID(id)
        }
    }

    /// Moves the id allocator past `id`, so ids up to it may be used in puts (as `import` does with
    /// the ids it brings) and are never handed out by ``newID()``.
    /// - throws: ``LogStoreError`` with code `idOutOfRange` when `id` is larger than
    ///   ``LogStoreLimits/maxObjectID`` (nothing changes then).
    public func reserveIDs(through id: ObjectID) throws(LogStoreError) {
        guard id.rawValue <= LogFormat.maxObjectID else {
            throw LogStoreError(
                .idOutOfRange, "cannot reserve ids through \(id): the largest object id is \(LogFormat.maxObjectID)",
                objects: [id])
        }
        nextID.withLock { $0 = max($0, id.rawValue + 1) }
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
    /// - throws: ``LogStoreError`` with code `notFound` when it is not live, `stillReferenced` (naming a
    ///   referrer) when a live object or a named root still refers to it, and what puts throw.
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
    /// - returns: the batch's sequence number, the version its records have from now on (0 for an empty
    ///   batch, which writes nothing).
    /// - throws: ``LogStoreError`` `conflict` naming the objects whose expectation failed, what the single
    ///   operations throw, and `invalidArgument` for a batch over 2 GiB.
    @discardableResult
    public func write(_ batch: WriteBatch) throws(LogStoreError) -> UInt64 {
        try commit(batch.operations, expecting: batch.expectations)
    }

    /// Builds a batch with `body` and writes it.
    /// - returns: what ``write(_:)`` returns.
    /// - throws: what ``write(_:)`` throws, or what `body` throws (nothing is written then).
    @discardableResult
    public func write(_ body: (inout WriteBatch) throws -> Void) throws -> UInt64 {
        var batch = WriteBatch()
        try body(&batch)
        return try write(batch)
    }

    // MARK: - The pipeline

    @discardableResult
    func commit(_ operations: [WriteBatch.Operation], expecting expectations: [WriteBatch.Expectation] = [])
        throws(LogStoreError) -> UInt64
    {
        guard !options.readOnly else { throw LogStoreError(.readOnly, "the store is open read-only", file: directory) }
        try checkOpen()
        guard !operations.isEmpty else {
            // Nothing to write, but what the caller read must still hold: checked as a commit would.
            if !expectations.isEmpty {
                try queue.withLock { _ throws(LogStoreError) in try checkExpectations(expectations) }
            }
            return 0
        }
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
        let (ticket, wakeLeader) = try queue.withLock { queue throws(LogStoreError) -> (UInt64, Bool) in
            queue.arriving -= 1
            arrived = true
            guard !queue.closed else { throw LogStoreError(.closed, "the store is closed", file: directory) }
            if let failure = queue.failure {
                throw LogStoreError(
                    .storeFailed, "an earlier write failed; reopen the store", file: directory, underlying: failure)
            }
            if !expectations.isEmpty { try checkExpectations(expectations) }
            let ticket = try enqueue(operations, allocatedBelow: allocated, into: &queue)
            queue.pendingCommitters += 1
            return (ticket, queue.gathered)
        }
        if wakeLeader { wakeGatheringLeader() }
        try awaitDurable(ticket)
        return ticket
    }

    /// Checks a batch's expectations against the writer's view, which includes every batch accepted
    /// before it (called under the queue lock, so no other batch is accepted meanwhile).
    /// - throws: ``LogStoreError`` `conflict` naming every object whose expectation does not hold.
    private func checkExpectations(_ expectations: [WriteBatch.Expectation]) throws(LogStoreError) {
        let failed = state.withLock { state -> [ObjectID] in
            expectations.compactMap { expectation in
                let entry = state.index.entry(expectation.id.rawValue)
                guard let expected = expectation.version else { return entry == nil ? nil : expectation.id }
                // A batch that is not yet durable changed it: no reader can have seen that version.
                guard let entry, !entry.isPending, state.sequence(of: entry) == expected else {
                    return expectation.id
                }
                return nil
            }
        }
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

    /// Applies a validated batch to the writer's logical view, encodes it (with the tombstones of what
    /// it made garbage) into the pending chunks, and returns its sequence number.
    func enqueue(
        _ operations: [WriteBatch.Operation], collecting garbage: [UInt64] = [], allocatedBelow allocated: UInt64,
        into queue: inout CommitQueue
    ) throws(LogStoreError) -> UInt64 {
        // Batches that only add (new objects, new roots) are checked first and applied after encoding,
        // without an undo log (``NewObjectsBatch``); every other batch goes through the reference tracker.
        let newObjects = garbage.isEmpty ? state.withLock { NewObjectsBatch.check(operations, $0) } : nil
        var tracker = ReferenceTracker(chunks: newObjects == nil ? queue.pending + queue.flushingChunks : [])
        if newObjects == nil {
            try state.withLock { state throws(LogStoreError) in
                try tracker.apply(operations, collecting: garbage, to: &state)
            }
        }
        let collected = tracker.collected

        guard queue.nextSequence <= LogFormat.maxSequence else {
            state.withLock { tracker.undoAccepted(&$0) }
            throw LogStoreError(
                .exhausted, "the store has used every sequence number (the largest is \(LogFormat.maxSequence))",
                file: directory)
        }
        // `allocated` is at most `maxObjectID + 1` (``newID()`` stops there): no overflow, and no
        // reservation beyond "every id".
        let reserveThrough: UInt64? =
            allocated > queue.reservedIDs
            ? min(allocated + LogFormat.idReservationBlock, LogFormat.maxObjectID + 1) : nil
        var bound = (reserveThrough == nil ? 0 : 1) * LogFormat.minimumFrameSize
        for operation in operations { bound += frameBound(operation) }
        bound += collected.count * LogFormat.minimumFrameSize
        guard bound <= LogStoreLimits.maxSegmentSize - LogFormat.segmentHeaderSize else {
            state.withLock { tracker.undoAccepted(&$0) }
            throw LogStoreError(.invalidArgument, "a batch of about \(bound) bytes is over the 2 GiB batch limit")
        }
        let chunk = chunkFor(bound: bound, in: &queue)

        let sequence = queue.nextSequence
        queue.nextSequence += 1
        let empty = UnsafeRawBufferPointer(start: nil, count: 0)
        var lastFrame = (start: chunk.buffer.count, length: 0)
        func frame(_ length: Int, startingAt start: Int) { lastFrame = (start, length) }
        if let reserveThrough {
            let start = chunk.buffer.count
            frame(
                encoder.append(
                    kind: .reserveIDs, flags: [], sequence: sequence, id: reserveThrough, typeTag: 0, references: [],
                    payload: empty, to: chunk.buffer), startingAt: start)
            queue.reservedIDs = reserveThrough
            queue.pendingRetained[chunk.segment, default: 0] += UInt64(lastFrame.length)
        }
        var puts: [(id: UInt64, entry: IndexEntry)] = []
        puts.reserveCapacity(operations.count)
        for operation in operations {
            let start = chunk.buffer.count
            let offset = chunk.startOffset + UInt64(start)
            switch operation {
            case .put(let record):
                let length = record.payload.withUnsafeBytes { payload in
                    encoder.append(
                        kind: .put, flags: record.isPinned ? .pinned : [], sequence: sequence, id: record.id.rawValue,
                        typeTag: record.typeTag, references: record.references, payload: payload, to: chunk.buffer)
                }
                frame(length, startingAt: start)
                let flags = IndexEntry.pendingFlag | (record.isPinned ? IndexEntry.pinnedFlag : 0)
                let entry = IndexEntry(
                    segment: chunk.segment, offset: UInt32(offset), length: UInt32(length), typeTag: record.typeTag,
                    flags: flags)
                puts.append((record.id.rawValue, entry))
                queue.pendingEffects.append(.put(id: record.id.rawValue, entry: entry))
            case .delete(let id):
                frame(
                    encoder.append(
                        kind: .delete, flags: [], sequence: sequence, id: id.rawValue, typeTag: 0, references: [],
                        payload: empty, to: chunk.buffer), startingAt: start)
                queue.pendingEffects.append(.delete(id: id.rawValue))
            case .setRoot(let name, let id):
                frame(
                    appendRootFrame(.setRoot, name: name, id: id.rawValue, sequence: sequence, chunk.buffer),
                    startingAt: start)
                queue.pendingRetained[chunk.segment, default: 0] += UInt64(lastFrame.length)
                queue.pendingEffects.append(.setRoot(name, id, sequence: sequence))
            case .removeRoot(let name):
                frame(
                    appendRootFrame(.removeRoot, name: name, id: 0, sequence: sequence, chunk.buffer), startingAt: start
                )
                queue.pendingRetained[chunk.segment, default: 0] += UInt64(lastFrame.length)
                queue.pendingEffects.append(.removeRoot(name, sequence: sequence))
            }
        }
        for id in collected {
            let start = chunk.buffer.count
            frame(
                encoder.append(
                    kind: .delete, flags: .collected, sequence: sequence, id: id, typeTag: 0, references: [],
                    payload: empty, to: chunk.buffer), startingAt: start)
            queue.pendingEffects.append(.delete(id: id))
        }
        var control = collected.count
        for operation in operations {
            if case .put = operation { continue }
            control += 1
        }
        if control > 0 { queue.pendingControlFrames[chunk.segment, default: 0] += control }
        FrameEncoder.markCommit(in: chunk.buffer, frameStart: lastFrame.start, length: lastFrame.length)
        queue.tailOffset = chunk.endOffset
        queue.collectedByCount += collected.count - garbage.count
        if let newObjects {
            // Checked above under the state lock; nothing can have made an object dead since, because
            // only `enqueue` (under the queue lock, held throughout) removes entries from the logical
            // index: publishing and compaction only change entries' flags and locations.
            state.withLock { newObjects.apply(operations, puts, to: &$0) }
            if queue.markSweepTouched != nil { queue.markSweepTouched?.formUnion(newObjects.touched(operations)) }
            return sequence
        }
        if queue.markSweepTouched != nil { queue.markSweepTouched?.formUnion(tracker.touched) }

        // The placeholders of the batch's puts get their real locations (the last put of an id wins).
        state.withLock { state in
            for (id, entry) in puts.reversed() {
                guard let current = state.index.entry(id), current.segment == 0 else { continue }
                var real = entry
                real.incoming = current.incoming
                real.flags = current.flags
                state.index.set(id, real)
            }
        }
        tracker.commit()
        return sequence
    }

    /// The pending chunk a batch of at most `bound` bytes goes into, starting a new segment when the
    /// current one has no room (a batch never spans segments).
    private func chunkFor(bound: Int, in queue: inout CommitQueue) -> PendingChunk {
        let header = UInt64(LogFormat.segmentHeaderSize)
        // A batch that does not fit starts a new segment (of a larger capacity when it is larger than a
        // segment); an empty segment left behind is harmless.
        // Room for the seal frame that ends every full segment is kept free.
        let room = UInt64(bound + LogFormat.minimumFrameSize)
        if queue.tailCapacity == 0 || queue.tailOffset + room > UInt64(queue.tailCapacity) {
            queue.tailSegment = queue.nextSegmentNumber
            queue.nextSegmentNumber += 1
            let capacity = max(options.segmentSize, LogFormat.segmentHeaderSize + Int(room))
            queue.pending.append(
                PendingChunk(
                    segment: queue.tailSegment, startOffset: header, createsSegment: true, capacity: capacity,
                    buffer: queue.buffer(), firstSequence: queue.nextSequence))
            queue.tailOffset = header
            queue.tailCapacity = capacity
        } else if queue.pending.last?.segment != queue.tailSegment {
            queue.pending.append(
                PendingChunk(
                    segment: queue.tailSegment, startOffset: queue.tailOffset, createsSegment: false,
                    capacity: queue.tailCapacity, buffer: queue.buffer(), firstSequence: queue.nextSequence))
        }
        // Both branches leave a chunk for the tail segment last.
        return queue.pending[queue.pending.count - 1]
    }

    /// The references stored in a record: pending ones from the writer's buffers, others from the mapping.
    static func references(of entry: IndexEntry, segments: [UInt32: SegmentFile], chunks: [PendingChunk])
        -> [ObjectID]
    {
        let offset = UInt64(entry.offset)
        if entry.isPending,
            let chunk = chunks.first(where: {
                $0.segment == entry.segment && $0.startOffset <= offset && offset < $0.endOffset
            })
        {
            let bytes = chunk.buffer.bytes
            let start = Int(offset - chunk.startOffset)
            guard case .success(let frame) = FrameDecoder.decode(bytes, at: start) else { return [] }
            return FrameDecoder.references(of: frame, in: bytes)
        }
        guard let file = segments[entry.segment] else { return [] }
        let bytes = file.bytes(count: Int(entry.offset) + Int(entry.length))
        guard case .success(let frame) = FrameDecoder.decode(bytes, at: Int(entry.offset)) else { return [] }
        return FrameDecoder.references(of: frame, in: bytes)
    }

    private func appendRootFrame(
        _ kind: FrameKind, name: String, id: UInt64, sequence: UInt64, _ buffer: WriteBuffer
    ) -> Int {
        var name = name
        return name.withUTF8 { bytes in
            encoder.append(
                kind: kind, flags: [], sequence: sequence, id: id, typeTag: 0, references: [],
                payload: UnsafeRawBufferPointer(bytes), to: buffer)
        }
    }

    /// An upper bound of the encoded size of one operation.
    private func frameBound(_ operation: WriteBatch.Operation) -> Int {
        let fixed = LogFormat.minimumFrameSize
        switch operation {
        case .put(let record):
            let payload = record.payload.count
            let room = encoder.compressionMinimumSize > 0 ? max(payload, Compression.bound(payload)) : payload
            return fixed + record.references.count * LogFormat.referenceSize + room
        case .delete: return fixed
        case .setRoot(let name, _), .removeRoot(let name):
            return fixed + max(name.utf8.count, Compression.bound(name.utf8.count))
        }
    }

    /// Ends a full segment with its seal frame and syncs it: it is never written again.
    func seal(_ file: SegmentFile, at size: UInt64, sequence: UInt64) throws(LogStoreError) {
        let buffer = WriteBuffer(capacity: 64)
        let frame = FrameEncoder(compressionMinimumSize: 0)
        frame.append(
            kind: .seal, flags: .commit, sequence: sequence, id: size, typeTag: 0, references: [],
            payload: UnsafeRawBufferPointer(start: nil, count: 0), to: buffer)
        // A segment extended ahead of its writes is cut back to its frames before the sync makes it final.
        let extended = endWriteAhead(of: file)
        try ioStep(file.path, size) { () throws(SystemError) in
            try io.writeAll(file.fd, buffer.bytes, at: size, path: file.path)
            if extended { try io.truncate(file.fd, to: size + UInt64(buffer.count), path: file.path) }
            try io.syncData(file.fd, path: file.path)
        }
        state.withLock {
            $0.segmentSizes[file.number] = size + UInt64(buffer.count)
            $0.retainedBytes[file.number, default: UInt64(LogFormat.segmentHeaderSize)] += UInt64(buffer.count)
        }
    }

    func ioStep(_ path: String, _ offset: UInt64, _ body: () throws(SystemError) -> Void) throws(LogStoreError) {
        do {
            try body()
        } catch {
            throw LogStoreError(.ioError, "write failed", file: path, offset: offset, underlying: error)
        }
    }

    /// Creates segment `number` with its header, durably (file and directory synced), and maps it.
    func createSegment(_ number: UInt32, capacity: Int) throws(LogStoreError) -> SegmentFile {
        let path = directory + "/" + LogFormat.segmentFileName(number)
        let header = SegmentHeader(segmentNumber: number, createdAtMilliseconds: SystemClock.milliseconds()).encoded()
        do {
            try io.writeNewFile(path, header)
            try io.syncDirectory(directory)
            return try SegmentFile.open(number: number, path: path, writable: true, capacity: capacity, io: io)
        } catch {
            throw LogStoreError(.ioError, "cannot create segment", file: path, underlying: error)
        }
    }
}
