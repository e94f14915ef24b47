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
    public func newID() -> ObjectID {
        nextID.withLock { next in
            defer { next += 1 }
            return ObjectID(next)
        }
    }

    /// Moves the id allocator past `id`, so ids up to it may be used in puts (as `import` does with
    /// the ids it brings) and are never handed out by ``newID()``.
    public func reserveIDs(through id: ObjectID) {
        nextID.withLock { $0 = max($0, id.rawValue &+ 1) }
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
    /// - throws: ``LogStoreError`` with code `payloadTooLarge`, `tooManyReferences`, `closed`,
    ///   `readOnly`, or `storeFailed` after an earlier I/O failure.
    @discardableResult
    public func put(typeTag: UInt32, references: [ObjectID] = [], payload: [UInt8]) throws(LogStoreError) -> ObjectID {
        let id = newID()
        try commit([.put(Record(id: id, typeTag: typeTag, references: references, payload: payload))])
        return id
    }

    /// Stores (or replaces) the object `id`, an id from ``newID()``.
    /// - throws: what ``put(typeTag:references:payload:)`` throws, and `unallocatedID`.
    public func put(_ id: ObjectID, typeTag: UInt32, references: [ObjectID] = [], payload: [UInt8])
        throws(LogStoreError)
    {
        try commit([.put(Record(id: id, typeTag: typeTag, references: references, payload: payload))])
    }

    /// Stores (or replaces) `record` under its id, an id from ``newID()``.
    /// - throws: what ``put(_:typeTag:references:payload:)`` throws.
    public func put(_ record: Record) throws(LogStoreError) {
        try commit([.put(record)])
    }

    /// Deletes the object `id` (writes a tombstone).
    /// - throws: ``LogStoreError`` with code `notFound` when it is not live, and what puts throw.
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
    /// - throws: what the single operations throw, and `invalidArgument` for a batch over 2 GiB.
    public func write(_ batch: WriteBatch) throws(LogStoreError) {
        try commit(batch.operations)
    }

    /// Builds a batch with `body` and writes it.
    /// - throws: what ``write(_:)`` throws, or what `body` throws (nothing is written then).
    public func write(_ body: (inout WriteBatch) throws -> Void) throws {
        var batch = WriteBatch()
        try body(&batch)
        try write(batch)
    }

    // MARK: - The pipeline

    func commit(_ operations: [WriteBatch.Operation]) throws(LogStoreError) {
        guard !options.readOnly else { throw LogStoreError(.readOnly, "the store is open read-only", file: directory) }
        try checkOpen()
        guard !operations.isEmpty else { return }
        let allocated = nextID.withLock { $0 }
        try validate(operations, allocatedBelow: allocated)
        let ticket = try queue.withLock { queue throws(LogStoreError) -> UInt64 in
            guard !queue.closed else { throw LogStoreError(.closed, "the store is closed", file: directory) }
            if let failure = queue.failure {
                throw LogStoreError(
                    .storeFailed, "an earlier write failed; reopen the store", file: directory, underlying: failure)
            }
            return try enqueue(operations, allocatedBelow: allocated, into: &queue)
        }
        try awaitDurable(ticket)
    }

    /// Checks every operation of a batch before any is encoded, so a bad batch changes nothing.
    private func validate(_ operations: [WriteBatch.Operation], allocatedBelow allocated: UInt64)
        throws(LogStoreError)
    {
        func checkAllocated(_ id: ObjectID) throws(LogStoreError) {
            guard id.rawValue > 0, id.rawValue < allocated else {
                throw LogStoreError(.unallocatedID, "object id \(id) was never handed out by this store")
            }
        }
        func checkName(_ name: String) throws(LogStoreError) {
            guard !name.isEmpty, name.utf8.count <= LogStoreLimits.maxRootNameLength else {
                throw LogStoreError(.invalidRootName, "root names have 1 to 1,024 UTF-8 bytes, got \(name.utf8.count)")
            }
        }
        var deleted: [ObjectID] = []
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
            case .delete(let id):
                deleted.append(id)
            case .setRoot(let name, let id):
                try checkName(name)
                try checkAllocated(id)
            case .removeRoot(let name):
                try checkName(name)
            }
        }
        guard !deleted.isEmpty else { return }
        let liveBefore = state.withLock { state in Set(deleted.filter { state.index.entry($0.rawValue) != nil }) }
        var live: [ObjectID: Bool] = [:]
        for operation in operations {
            switch operation {
            case .put(let record): live[record.id] = true
            case .delete(let id):
                guard live[id] ?? liveBefore.contains(id) else {
                    throw LogStoreError(.notFound, "object \(id) is not live and cannot be deleted")
                }
                live[id] = false
            default: break
            }
        }
    }

    /// Encodes a validated batch into the pending chunks and returns its sequence number.
    private func enqueue(
        _ operations: [WriteBatch.Operation], allocatedBelow allocated: UInt64, into queue: inout CommitQueue
    ) throws(LogStoreError) -> UInt64 {
        let reserveThrough: UInt64? = allocated > queue.reservedIDs ? allocated + LogFormat.idReservationBlock : nil
        var bound = reserveThrough == nil ? 0 : LogFormat.minimumFrameSize
        for operation in operations { bound += frameBound(operation) }
        guard bound <= LogStoreLimits.maxSegmentSize - LogFormat.segmentHeaderSize else {
            throw LogStoreError(.invalidArgument, "a batch of about \(bound) bytes is over the 2 GiB batch limit")
        }

        let header = UInt64(LogFormat.segmentHeaderSize)
        // A batch that does not fit starts a new segment (of a larger capacity when it is larger than a
        // segment); an empty segment left behind is harmless.
        if queue.tailCapacity == 0 || queue.tailOffset + UInt64(bound) > UInt64(queue.tailCapacity) {
            queue.tailSegment = queue.nextSegmentNumber
            queue.nextSegmentNumber += 1
            let capacity = max(options.segmentSize, LogFormat.segmentHeaderSize + bound)
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
        guard let chunk = queue.pending.last else { return queue.nextSequence }

        let sequence = queue.nextSequence
        queue.nextSequence += 1
        let empty = UnsafeRawBufferPointer(start: nil, count: 0)
        if let reserveThrough {
            encoder.append(
                kind: .reserveIDs, flags: [], sequence: sequence, id: reserveThrough, typeTag: 0, references: [],
                payload: empty, to: chunk.buffer)
            queue.reservedIDs = reserveThrough
        }
        let segment = chunk.segment
        for (position, operation) in operations.enumerated() {
            let flags: FrameFlags = position == operations.count - 1 ? .commit : []
            let offset = chunk.startOffset + UInt64(chunk.buffer.count)
            switch operation {
            case .put(let record):
                let length = record.payload.withUnsafeBytes { payload in
                    encoder.append(
                        kind: .put, flags: flags, sequence: sequence, id: record.id.rawValue, typeTag: record.typeTag,
                        references: record.references, payload: payload, to: chunk.buffer)
                }
                let entry = IndexEntry(
                    segment: segment, offset: UInt32(offset), length: UInt32(length), typeTag: record.typeTag)
                queue.pendingEffects.append(.put(id: record.id.rawValue, entry: entry))
            case .delete(let id):
                encoder.append(
                    kind: .delete, flags: flags, sequence: sequence, id: id.rawValue, typeTag: 0, references: [],
                    payload: empty, to: chunk.buffer)
                queue.pendingEffects.append(.delete(id: id.rawValue))
            case .setRoot(let name, let id):
                appendRootFrame(.setRoot, name: name, id: id.rawValue, flags: flags, sequence: sequence, chunk.buffer)
                queue.pendingEffects.append(.setRoot(name, id, sequence: sequence))
            case .removeRoot(let name):
                appendRootFrame(.removeRoot, name: name, id: 0, flags: flags, sequence: sequence, chunk.buffer)
                queue.pendingEffects.append(.removeRoot(name, sequence: sequence))
            }
        }
        queue.tailOffset = chunk.endOffset
        return sequence
    }

    private func appendRootFrame(
        _ kind: FrameKind, name: String, id: UInt64, flags: FrameFlags, sequence: UInt64, _ buffer: WriteBuffer
    ) {
        var name = name
        name.withUTF8 { bytes in
            _ = encoder.append(
                kind: kind, flags: flags, sequence: sequence, id: id, typeTag: 0, references: [],
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

    /// Waits until batch `ticket` is written and visible, leading the group commit when no one is.
    private func awaitDurable(_ ticket: UInt64) throws(LogStoreError) {
        enum Step {
            case done
            case failed(LogStoreError)
            case lead(CommitQueue.Work, SegmentFile?, UInt64)
        }
        while true {
            let step = queue.waitUntil { queue -> Step? in
                if queue.durableSequence >= ticket { return .done }
                if let failure = queue.failure { return .failed(failure) }
                guard !queue.flushing else { return nil }
                queue.flushing = true
                return .lead(queue.takeWork(), queue.active, queue.activeSize)
            }
            switch step {
            case .done: return
            case .failed(let failure):
                throw LogStoreError(
                    .storeFailed, "the write failed and was not acknowledged; reopen the store", file: directory,
                    underlying: failure)
            case .lead(let work, let active, let size):
                flush(work, active: active, size: size)
            }
        }
    }

    /// The leader's part: write, sync, publish. Records a failure in the queue instead of throwing.
    private func flush(_ work: CommitQueue.Work, active startActive: SegmentFile?, size startSize: UInt64) {
        var active = startActive
        var size = startSize
        var failure: LogStoreError?
        do throws(LogStoreError) {
            for chunk in work.chunks {
                if chunk.createsSegment {
                    if let sealed = active {
                        try ioStep(sealed.path, 0) { () throws(SystemError) in
                            try io.syncData(sealed.fd, path: sealed.path)
                        }
                    }
                    let created = try createSegment(chunk.segment, capacity: chunk.capacity)
                    active = created
                    size = UInt64(LogFormat.segmentHeaderSize)
                    state.withLock {
                        $0.segments[created.number] = created
                        $0.segmentSizes[created.number] = size
                        $0.segmentMinSequence[created.number] = chunk.firstSequence
                    }
                    queue.withLock {
                        $0.active = created
                        $0.activeSize = size
                    }
                }
                guard let file = active, file.number == chunk.segment, chunk.startOffset == size else {
                    throw LogStoreError(
                        .ioError, "internal: pending bytes for segment \(chunk.segment) do not follow the file end")
                }
                try ioStep(file.path, chunk.startOffset) { () throws(SystemError) in
                    try io.writeAll(file.fd, chunk.buffer.bytes, at: chunk.startOffset, path: file.path)
                }
                size = chunk.endOffset
            }
            if options.fsyncPolicy == .always, let file = active {
                try ioStep(file.path, size) { () throws(SystemError) in try io.syncData(file.fd, path: file.path) }
            }
        } catch {
            failure = error
        }
        if failure == nil {
            state.withLock { state in
                for effect in work.effects { state.apply(effect) }
                for chunk in work.chunks { state.segmentSizes[chunk.segment] = chunk.endOffset }
            }
        }
        queue.withLock { queue in
            queue.flushing = false
            queue.flushingSegments = []
            queue.activeSize = size
            if let failure {
                queue.failure = queue.failure ?? failure
            } else {
                queue.durableSequence = max(queue.durableSequence, work.lastSequence)
                if options.fsyncPolicy != .always { queue.dirty = true }
            }
            for chunk in work.chunks where queue.spareBuffers.count < 4 {
                chunk.buffer.removeAll()
                queue.spareBuffers.append(chunk.buffer)
            }
        }
        queue.broadcast()
    }

    private func ioStep(_ path: String, _ offset: UInt64, _ body: () throws(SystemError) -> Void) throws(LogStoreError)
    {
        do {
            try body()
        } catch {
            throw LogStoreError(.ioError, "write failed", file: path, offset: offset, underlying: error)
        }
    }

    /// Creates segment `number` with its header, durably (file and directory synced), and maps it.
    private func createSegment(_ number: UInt32, capacity: Int) throws(LogStoreError) -> SegmentFile {
        let path = directory + "/" + LogFormat.segmentFileName(number)
        let header = SegmentHeader(segmentNumber: number, createdAtMilliseconds: Clock.milliseconds()).encoded()
        do {
            try io.writeNewFile(path, header)
            try io.syncDirectory(directory)
            return try SegmentFile.open(number: number, path: path, writable: true, capacity: capacity, io: io)
        } catch {
            throw LogStoreError(.ioError, "cannot create segment", file: path, underlying: error)
        }
    }
}
