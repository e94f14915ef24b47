@_spi(Engine) import LogStoreFormat
@_spi(Engine) import LogStoreSystem

/// Encoding an accepted batch: it is applied to the index's logical view (through ``NewObjectsBatch``
/// or the ``ReferenceTracker``), encoded into the pending chunk of the tail segment, and its effects
/// queued for the leader to publish.
extension CommitPipeline {
    /// Applies a validated batch to the writer's logical view, encodes it (with the tombstones of what
    /// it made garbage) into the pending chunks, queues its edit for the leader, and returns what it does
    /// (its sequence number among it).
    func enqueue(
        _ operations: [WriteBatch.Operation], collecting garbage: [UInt64] = [], allocatedBelow allocated: UInt64,
        into queue: inout CommitQueue
    ) throws(LogStoreError) -> CommittedBatch {
        // Batches that only add (new objects, new roots) are checked first and applied after encoding,
        // without an undo log (``NewObjectsBatch``); every other batch goes through the reference tracker.
        let newObjects = garbage.isEmpty ? index.withLock { NewObjectsBatch.check(operations, $0) } : nil
        var tracker = ReferenceTracker(chunks: newObjects == nil ? queue.pending + queue.flushingChunks : [])
        if newObjects == nil {
            try index.withLock { state throws(LogStoreError) in
                readViews.release()
                try tracker.apply(operations, collecting: garbage, to: &state)
            }
        }
        let collected = tracker.collected

        guard queue.nextSequence <= LogFormat.maxSequence else {
            index.withLock { state in
                readViews.release()
                tracker.undoAccepted(&state)
            }
            throw LogStoreError(
                .exhausted, "the store has used every sequence number (the largest is \(LogFormat.maxSequence))",
                file: directory)
        }
        // `allocated` is at most `maxObjectID + 1` (``newID()`` stops there): no overflow, and no
        // reservation beyond "every id".
        let reserveThrough: UInt64? =
            allocated > queue.reservedIDs
            ? min(allocated + LogFormat.idReservationBlock, LogFormat.maxObjectID + 1) : nil
        let emptyFrameBound = CompactFrame.bound(referenceCount: 0, payloadRoom: 0)
        var bound = (reserveThrough == nil ? 0 : 1) * emptyFrameBound
        for operation in operations { bound += frameBound(operation) }
        bound += collected.count * emptyFrameBound
        guard bound <= LogStoreLimits.maxSegmentSize - LogFormat.segmentHeaderSize else {
            index.withLock { state in
                readViews.release()
                tracker.undoAccepted(&state)
            }
            throw LogStoreError(.invalidArgument, "a batch of about \(bound) bytes is over the 2 GiB batch limit")
        }
        if queue.dictionarySampler != nil { sampleForDictionary(operations, into: &queue) }
        var encoder = CompactFrameEncoder(
            compressionMinimumSize: compressionMinimumSize, sealed: options.encryption != nil)
        var precompressed: BatchPrecompression?
        if let dictionary = queue.dictionary, let work = dictionaryWork.stream {
            encoder.dictionary = (dictionary, work)
            precompressed = BatchPrecompression.make(
                operations, minimumPuts: options.tuning.parallelCompressionMinimumPuts,
                compressionMinimumSize: compressionMinimumSize, dictionary: dictionary, streams: dictionaryWork)
        }
        let chunk = queue.chunk(for: bound, segmentSize: newSegmentSize)

        let sequence = queue.nextSequence
        queue.nextSequence += 1
        let empty = UnsafeRawBufferPointer(start: nil, count: 0)
        // The batch's last frame is its commit frame: it carries the checksum of the whole batch.
        let batchStart = chunk.buffer.count
        let frameCount = (reserveThrough == nil ? 0 : 1) + operations.count + collected.count
        var encoded = 0
        var effects: [IndexEffect] = []
        effects.reserveCapacity(operations.count + collected.count)
        var retainedBytes: UInt64 = 0
        var committed = CommittedBatch.Parts()
        committed.written.reserveCapacity(operations.count)
        /// Appends one frame of the batch and returns its length.
        func append(
            _ kind: FrameKind, flags: FrameFlags = [], id: UInt64, typeTag: UInt32 = 0,
            references: [ObjectID] = [], payload: UnsafeRawBufferPointer, stored: CompactFrameEncoder.Payload? = nil
        ) -> Int {
            encoded += 1
            return encoder.append(
                kind: kind, flags: flags, sequence: sequence, baseSequence: chunk.baseSequence, id: id,
                typeTag: typeTag, references: .ids(references), payload: stored ?? .raw(payload),
                batchStart: encoded == frameCount ? batchStart : nil, to: chunk.buffer)
        }
        if let reserveThrough {
            let length = append(.reserveIDs, id: reserveThrough, payload: empty)
            queue.reservedIDs = reserveThrough
            retainedBytes += UInt64(length)
        }
        var puts: [(id: UInt64, entry: IndexEntry)] = []
        puts.reserveCapacity(operations.count)
        for (operationIndex, operation) in operations.enumerated() {
            let start = chunk.buffer.count
            let offset = chunk.startOffset + UInt64(start)
            switch operation {
            case .put(let record):
                let length = record.payload.withUnsafeBytes { payload in
                    append(
                        .put, flags: record.isPinned ? .pinned : [], id: record.id.rawValue, typeTag: record.typeTag,
                        references: record.references, payload: payload,
                        stored: precompressed?.payload(at: operationIndex, original: payload))
                }
                let flags = IndexEntry.pendingFlag | (record.isPinned ? IndexEntry.pinnedFlag : 0)
                let entry = IndexEntry(
                    segment: chunk.segment, offset: UInt32(offset), length: UInt32(length), typeTag: record.typeTag,
                    flags: flags)
                puts.append((record.id.rawValue, entry))
                effects.append(.put(id: record.id.rawValue, entry: entry))
                committed.written.append(ObjectChange(id: record.id, typeTag: record.typeTag))
            case .delete(let id):
                _ = append(.delete, id: id.rawValue, payload: empty)
                effects.append(.delete(id: id.rawValue))
            case .setRoot(let name, let id):
                var name = name
                let length = name.withUTF8 { append(.setRoot, id: id.rawValue, payload: UnsafeRawBufferPointer($0)) }
                retainedBytes += UInt64(length)
                effects.append(.setRoot(name, id, sequence: sequence))
                committed.rootsSet.append(RootChange(name: name, target: id))
            case .removeRoot(let name):
                var name = name
                let length = name.withUTF8 { append(.removeRoot, id: 0, payload: UnsafeRawBufferPointer($0)) }
                retainedBytes += UInt64(length)
                effects.append(.removeRoot(name, sequence: sequence))
                committed.rootsRemoved.append(name)
            }
        }
        committed.deleted = tracker.deletedObjects
        // `encoder.append` copied the precompressed bytes: they had to live until the last frame.
        withExtendedLifetime(precompressed) {}
        committed.freed.reserveCapacity(collected.count)
        for (id, typeTag) in zip(collected, tracker.collectedTypeTags) {
            _ = append(.delete, flags: .collected, id: id, payload: empty)
            effects.append(.delete(id: id))
            committed.freed.append(ObjectChange(id: ObjectID(id), typeTag: typeTag))
        }
        let batch = CommittedBatch(
            sequence: sequence, freedBy: garbage.isEmpty ? .referenceCounting : .markSweep, parts: committed)
        var control = collected.count
        for operation in operations {
            if case .put = operation { continue }
            control += 1
        }
        queue.pendingEdits.append(
            BatchEdit(
                sequence: sequence, effects: effects, segment: chunk.segment, endOffset: chunk.endOffset,
                retainedBytes: retainedBytes, controlFrames: control, committed: batch))
        queue.tailOffset = chunk.endOffset
        queue.collectedByCount += collected.count - garbage.count
        if let newObjects {
            // Checked above under the state lock; nothing can have made an object dead since, because
            // only `enqueue` (under the queue lock, held throughout) removes entries from the logical
            // index: publishing and compaction only change entries' flags and locations.
            index.withLock { state in
                readViews.release()
                newObjects.apply(operations, puts, to: &state)
            }
            if queue.observer != nil { queue.observer?.accepted(touching: newObjects.touched(operations)) }
            queue.hooks?.accepted(operations, batch)
            return batch
        }
        if queue.observer != nil { queue.observer?.accepted(touching: tracker.touched) }

        // The placeholders of the batch's puts get their real locations (the last put of an id wins).
        index.withLock { state in
            readViews.release()
            for (id, entry) in puts.reversed() {
                guard let current = state.index.entry(id), current.segment == 0 else { continue }
                var real = entry
                real.incoming = current.incoming
                real.flags = current.flags
                state.index.set(id, real)
            }
        }
        tracker.commit()
        queue.hooks?.accepted(operations, batch)
        return batch
    }

    /// Offers the batch's put payloads to the dictionary sampler and, once it has enough, builds the
    /// store's dictionary and writes it durably, before any frame names it (once per store, under the
    /// queue lock: a few milliseconds). When it cannot be written, sampling starts over.
    private func sampleForDictionary(_ operations: [WriteBatch.Operation], into queue: inout CommitQueue) {
        for operation in operations {
            if case .put(let record) = operation { queue.dictionarySampler?.offer(record.payload) }
        }
        guard let sampler = queue.dictionarySampler, sampler.isReady else { return }
        let content = sampler.content()
        guard !content.isEmpty, (try? installDictionary(content, into: &queue)) != nil else {
            // Not again before the next open: a disk that refused it once would stall every committer
            // for a failed write each 256 KiB.
            queue.dictionarySampler = nil
            return
        }
    }

    /// Writes a new dictionary of `content` durably and records it in the segment manifest, publishes it
    /// to readers and makes it the one new puts are compressed against. Returns it and the sequence number
    /// of the last batch encoded before: every later batch is compressed against it.
    /// - throws: ``LogStoreError`` with code `closed` once ``close()`` has begun (nothing is written beside
    ///   a close or after it), `exhausted`, or what writing the dictionary or the manifest throws.
    @discardableResult
    func installDictionary(_ content: [UInt8], into queue: inout CommitQueue) throws(LogStoreError) -> (
        dictionary: CompressionDictionary, fence: UInt64
    ) {
        guard !queue.closed else { throw LogStoreError(.closed, "the store is closed", file: directory) }
        // Above every id this store may have used: one in the index, one a manifest may record (a rewrite
        // that failed may still have replaced it) and one a file holds (a write interrupted before its
        // manifest). An id recorded once never gets other content, which the next open would refuse.
        let newest = max(
            index.withLock { $0.dictionaries.newest?.id ?? 0 }, manifest.highestDictionaryID,
            try StoreDictionaries.highestFileID(in: directory, io: io))
        guard newest < UInt32.max else {
            throw LogStoreError(.exhausted, "the store has used every dictionary id", file: directory)
        }
        let dictionary = try StoreDictionaries.write(
            id: newest + 1, content: content, in: directory, io: io, encryption: options.encryption)
        // The manifest records its content before any frame names it (a file that is not this one is
        // refused on open: another store's dictionary, or this one altered), and the index gets it only
        // once that manifest is durable: nothing, a compaction pass included, can use it before.
        try manifest.write(reservedIDs: queue.reservedIDs, adding: dictionary)
        queue.dictionary = dictionary
        queue.dictionaryFence = queue.nextSequence - 1
        queue.dictionarySampler = nil
        return (dictionary, queue.dictionaryFence)
    }

    /// ``installDictionary(_:into:)`` under the queue lock.
    func installDictionary(_ content: [UInt8]) throws(LogStoreError) -> (
        dictionary: CompressionDictionary, fence: UInt64
    ) {
        try queue.withLock { queue throws(LogStoreError) in try installDictionary(content, into: &queue) }
    }

    /// The dictionary new puts are compressed against and the last batch encoded before it was installed.
    var newestDictionary: (id: UInt32, fence: UInt64)? {
        queue.withLock { queue in queue.dictionary.map { ($0.id, queue.dictionaryFence) } }
    }

    /// The segment being written and how many bytes of it are written.
    var activeSegment: (number: UInt32, size: UInt64)? {
        queue.withLock { queue in queue.active.map { ($0.number, queue.activeSize) } }
    }

    /// The capacity of the next new segment: ``StoreOptions/segmentSize``, or less while the store is small,
    /// a sixteenth of its live bytes and at least 4 MiB. A compaction pass holds its input and the copies
    /// of its live records until it ends, so the disk's extra during a pass is at most one segment: small
    /// next to the store only when segments are.
    func newSegmentSize() -> Int {
        let live = index.withLock { state in state.segments.all.reduce(UInt64(0)) { $0 + $1.liveBytes } }
        let proportional = Int(min(live / 16, UInt64(Int.max)))
        return min(options.segmentSize, max(proportional, Self.smallestAdaptiveSegment))
    }

    /// The smallest capacity ``newSegmentSize()`` gives a new segment.
    static let smallestAdaptiveSegment = 4 << 20

    /// An upper bound of the encoded size of one operation.
    private func frameBound(_ operation: WriteBatch.Operation) -> Int {
        switch operation {
        case .put(let record):
            let payload = record.payload.count
            let room = compressionMinimumSize > 0 ? max(payload, Compression.bound(payload)) : payload
            return CompactFrame.bound(referenceCount: record.references.count, payloadRoom: room)
        case .delete: return CompactFrame.bound(referenceCount: 0, payloadRoom: 0)
        case .setRoot(let name, _), .removeRoot(let name):
            return CompactFrame.bound(
                referenceCount: 0, payloadRoom: max(name.utf8.count, Compression.bound(name.utf8.count)))
        }
    }
}
