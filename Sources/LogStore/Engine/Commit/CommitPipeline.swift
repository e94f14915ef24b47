import Dispatch
@_spi(Engine) import LogStoreFormat
@_spi(Engine) import LogStoreSystem

/// The write path of a store: the queue of encoded batches, the group commit that writes and syncs
/// them and publishes their effects to the index, the interval sync, the page-cache prefill, and the
/// segments it seals and creates.
///
/// Its state (``CommitQueue``, the signals, the prefill) is touched only by the files of
/// `Engine/Commit`; everyone else goes through the methods here: the store commits batches and syncs,
/// compaction takes the tail segment over to seal it and asks which segments are busy, mark-sweep
/// observes accepted batches and submits its sweep.
final class CommitPipeline: Sendable {
    let directory: String
    let options: StoreOptions
    let io: SystemIO
    /// The index the pipeline validates against and publishes to (the store's readers share it).
    let index: ConditionLock<IndexState>
    /// The views of plain reads: told in every hold of the index lock that changes the index.
    let readViews: PlainReadViews
    /// The next id ``Store/newID()`` hands out.
    let nextID: ConditionLock<UInt64>
    let manifest: ManifestWriter
    let queue: ConditionLock<CommitQueue>
    /// Lets committers spin while they wait for a group commit.
    let signals: CommitSignals
    /// Compress raw payloads at least this long (0: compression off).
    let compressionMinimumSize: Int
    /// The working stream of dictionary compression, used by ``enqueue(_:collecting:allocatedBelow:into:)``.
    let dictionaryWork: DictionaryWorkStream
    let prefill: SegmentPrefill
    /// The committed batches kept for observers; the leader appends each group it publishes.
    let changes: ChangeLog
    private let flushTimer: FlushTimer?

    init(
        directory: String, options: StoreOptions, io: SystemIO, index: ConditionLock<IndexState>,
        readViews: PlainReadViews, nextID: ConditionLock<UInt64>, manifest: ManifestWriter,
        loaded: StoreLoader.Loaded
    ) {
        self.directory = directory
        self.options = options
        self.io = io
        self.index = index
        self.readViews = readViews
        self.nextID = nextID
        self.manifest = manifest
        self.compressionMinimumSize = options.effectiveCompressionMinimum
        self.dictionaryWork = DictionaryWorkStream()
        self.changes = ChangeLog(after: loaded.maxSequence, limit: options.keptChanges)
        let newest = loaded.newest
        // Continue in the newest segment while it has room (and it was not removed as torn) and is of the
        // format this code writes; otherwise the first write creates the next one (a version-1 segment is
        // sealed at open).
        var continues = !loaded.newestIsSealed && (newest.map { Int($0.size) < options.segmentSize } ?? false)
        var tailBase: UInt64 = 0
        if continues, let file = newest?.file {
            if case .v2(let base, _) = file.format { tailBase = base } else { continues = false }
        }
        let queue = ConditionLock(
            CommitQueue(
                nextSequence: loaded.maxSequence + 1,
                durableSequence: loaded.maxSequence,
                nextSegmentNumber: loaded.highestSegmentNumber + 1,
                tailSegment: continues ? (newest?.file.number ?? 0) : 0,
                tailOffset: continues ? (newest?.size ?? 0) : UInt64(LogFormat.segmentHeaderSize),
                tailCapacity: continues ? options.segmentSize : 0,
                tailBaseSequence: tailBase,
                active: continues ? newest?.file : nil,
                activeSize: continues ? (newest?.size ?? 0) : 0,
                reservedIDs: nextID.withLock { $0 }
            ), rank: .queue)
        let dictionaries = index.withLock { $0.dictionaries }
        let buildsDictionary = options.compression && options.sharedDictionary && !options.readOnly
        queue.withLock { queue in
            queue.dictionary = buildsDictionary ? dictionaries.newest : nil
            queue.dictionarySampler = buildsDictionary && dictionaries.isEmpty ? DictionarySampler() : nil
        }
        self.queue = queue
        self.signals = CommitSignals(limit: options.tuning.commitSpinLimit)
        self.prefill = SegmentPrefill(
            io: io, zeroFill: options.tuning.writesZerosAhead && options.fsyncPolicy == .always)
        if case .interval(let interval) = options.fsyncPolicy, !options.readOnly {
            self.flushTimer = FlushTimer(
                every: max(1, interval.wholeMilliseconds), queue: queue, io: io, changes: changes)
        } else {
            self.flushTimer = nil
        }
    }

    // MARK: - State the store asks about

    /// The first write or sync failure, after which the pipeline refuses writes.
    var failure: LogStoreError? { queue.withLock { $0.failure } }

    /// Whether a segment is being written (open: a full newest segment is sealed when none is).
    var hasActiveSegment: Bool { queue.withLock { $0.active != nil } }

    /// Ids below this are reserved on disk.
    var reservedIDs: UInt64 { queue.withLock { $0.reservedIDs } }

    /// The manifest, rewritten from the index's segments and the pipeline's id reservation.
    func writeManifest(cleanClose: SegmentManifest.CleanClose? = nil) throws(LogStoreError) {
        try manifest.write(reservedIDs: queue.withLock { $0.reservedIDs }, cleanClose: cleanClose)
    }

    /// The active segment's number and the counters of ``StoreStatistics``.
    var statistics: (active: UInt32?, collectedByCount: Int, groupCommits: StoreStatistics.GroupCommits) {
        queue.withLock { ($0.active?.number, $0.collectedByCount, $0.groupCommits) }
    }

    // MARK: - Sync and close

    /// Makes everything written so far durable (waits for a leader writing now).
    func syncActiveSegment() throws(LogStoreError) {
        let target = queue.waitUntil { queue -> SegmentFile?? in
            guard !queue.flushing else { return nil }
            queue.dirty = false
            return .some(queue.active)
        }
        try throwIfFailed()
        guard let file = target else { return }
        do {
            try io.syncData(file.fd, path: file.path)
        } catch {
            let failure = LogStoreError(.ioError, "sync failed", file: file.path, underlying: error)
            queue.withLock { $0.failure = $0.failure ?? failure }
            changes.finish()
            throw failure
        }
        // A write or sync that failed before (or meanwhile) may have lost pages this sync can no longer
        // write: after a failed writeback the kernel may drop them, and a later sync succeeds without them.
        try throwIfFailed()
    }

    /// Throws `storeFailed` when a write or sync has failed.
    private func throwIfFailed() throws(LogStoreError) {
        guard let failure = self.failure else { return }
        throw LogStoreError(
            .storeFailed, "an earlier write or sync failed; nothing since is known to be durable; reopen the store",
            file: directory, underlying: failure)
    }

    /// Refuses new batches once the writes in flight are done (after a failure, pending batches are never
    /// written), wakes every waiter and stops the interval sync. Returns false when it was closed already.
    func close() -> Bool {
        let wasOpen = queue.waitUntil { queue -> Bool? in
            guard !queue.closed else { return false }
            guard !queue.flushing, queue.pending.isEmpty || queue.failure != nil else { return nil }
            queue.closed = true
            return true
        }
        guard wasOpen else { return false }
        queue.broadcast()
        flushTimer?.cancel()
        return true
    }

    /// Lets go of the active segment (the last step of a close).
    func releaseActiveSegment() {
        queue.withLock { $0.active = nil }
    }

    /// A store open read-only: the writer segment it follows now (nil: none, or sealed) and the end of what
    /// it read of it, in place of the one the open found (which it then no longer keeps open).
    func follow(_ file: SegmentFile?, size: UInt64) {
        queue.withLock { queue in
            // After a close has let the segment go, nothing takes it again.
            guard !queue.closed else { return }
            queue.active = file
            queue.activeSize = file == nil ? 0 : size
        }
    }

    /// When the store goes away without a close: stops the interval sync and the prefill (cutting the
    /// segment back when nothing failed; were that to fail, the next open trims the zeros), and syncs.
    func shutDown() {
        flushTimer?.cancel()
        if failure == nil { try? trimPrefill() } else { stopPrefill() }
        try? syncActiveSegment()
    }

    /// Stops the prefill without cutting anything back (a failed store: the open trims the tail).
    func stopPrefill() { prefill.stop() }

    /// On close: cuts the segment being written back to its frames (the sync that follows makes it durable,
    /// and runs even when this fails).
    func trimPrefill() throws(LogStoreError) {
        let target = queue.withLock { queue in queue.active.map { ($0, queue.activeSize) } }
        guard let (file, size) = target, prefill.end(of: file) else {
            prefill.stop()
            return
        }
        do {
            try io.truncate(file.fd, to: size, path: file.path)
        } catch {
            throw LogStoreError(
                .ioError, "cannot cut the segment back to its frames", file: file.path, underlying: error)
        }
    }
}
