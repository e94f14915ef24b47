@_spi(Engine) import LogStoreFormat
@_spi(Engine) @_spi(Testing) import LogStoreSystem
import Synchronization

/// An embedded, append-only object store: records in checksummed, LZ4-compressed frames in segment
/// files, an in-memory index rebuilt on open, atomic batches, named roots, and crash recovery.
///
/// Any number of threads may read while writers queue for the one writer slot; a `Store` is
/// `Sendable` and meant to be shared.
///
/// For example:
/// ```swift
/// let store = try Store.open(at: "/tmp/demo")
/// let id = try store.put(typeTag: 1, payload: Array("hello".utf8))
/// let record = try store.get(id)          // Record(typeTag: 1, payload: "hello")
/// try store.close()
/// ```
public final class Store: Sendable {
    /// The store's directory.
    public let directory: String
    /// The options it was opened with.
    public let options: StoreOptions
    /// What opening repaired (a torn tail cut after a crash), or nil when the log was clean.
    public let recovery: RecoveryReport?
    /// What opening noticed without it being damage, e.g. a hint file it could not use.
    public let openNotes: [String]
    /// Number of segments rebuilt from their hint files at open (the others were scanned).
    public let segmentsLoadedFromHints: Int

    let io: SystemIO
    /// The index state: what readers see and the writer changes (a pthread mutex: cheap uncontended,
    /// and visible to the thread sanitizer, unlike a futex-based `Mutex` on Linux).
    let state: ConditionLock<IndexState>
    /// The next id ``newID()`` hands out.
    let nextID: ConditionLock<UInt64>
    /// The views plain reads go through (``get(_:)`` and the other reads by id without a snapshot).
    let readViews = PlainReadViews()
    /// The write path: queue, group commit, interval sync, prefill, sealing and creating segments.
    let pipeline: CommitPipeline
    /// Compaction passes (run under ``compactionLock``).
    let compaction: Compactor
    private let lock: RankedMutex<DirectoryLock?>
    /// Held for the whole of a compaction pass, of a removal of unused dictionaries, and of every write of
    /// hint files (by a pass, the background compactor, ``writeHints()`` and ``close()``): one at a time, so
    /// no two threads ever write the same hint (they would share its temporary name) and no hint is written
    /// for a segment a pass is deleting. Its value is set once ``close()`` has begun: whatever takes the lock
    /// through ``withCompactionLock(_:)`` afterwards is refused with `closed`.
    ///
    /// Lock order (``LockRank``, checked in debug builds): compaction lock, then the commit pipeline's
    /// queue lock, then the manifest writer's lock, then the index lock (`state`), then `nextID`, then the
    /// prefill's lock, then the leaf locks; a thread holding one of them takes only locks later in this
    /// order. This lock is never taken while holding another. The queue lock comes before the manifest
    /// writer's because a commit that completes the dictionary sample installs the dictionary under the
    /// queue lock, and that rewrites the manifest; ``ManifestWriter/write(reservedIDs:cleanClose:adding:)``
    /// never takes the queue lock (callers read the id reservation before). A committer never waits for
    /// this lock.
    let compactionLock = RankedMutex(false, rank: .compaction)
    /// The background compaction thread, when ``CompactionOptions/background`` is on.
    let compactor = RankedMutex<BackgroundCompactor?>(nil, rank: .compactorHandle)
    /// How a store open read-only moves on to a writer's new batches (``refresh()``); nil when writable.
    let follower: Follower?

    /// Opens the store in `directory`, creating it when missing (unless `createIfMissing` is off).
    ///
    /// Only a store is opened: a directory that holds other files and none of a store's is refused
    /// before anything is written there. An empty directory (or a missing one) opened for writing
    /// becomes a store when `createIfMissing` is on: under its lock, its identity file (`STORE`) is
    /// written before anything else. Of several opens creating the same store at once, one creates it
    /// and the others find it `locked` (or open it once the first has closed it). A store made before
    /// identity files existed opens too, and an open for writing adds the file.
    ///
    /// Opening rebuilds the index by scanning the segments. After a crash, a torn tail of the newest
    /// segment (left mid-write) is cut back to the last complete commit, the cut bytes kept in a side
    /// file, and reported in ``recovery``. After a clean ``close()`` nothing can be torn: any damage or
    /// change of size there is corruption.
    ///
    /// A read-only open (``StoreOptions/readOnly``) takes no lock and may run beside a writer: when the
    /// writer's compaction replaces segments while the store is read, it reads it again (a bounded number
    /// of times), and it reports damage only when it finds it again.
    ///
    /// - throws: ``LogStoreError`` with code `notAStore` when the directory is not a store (or is
    ///   empty and the open is read-only), `storeMissing` when it is missing or empty and
    ///   `createIfMissing` is off, `locked` when another process or `Store` has it open for writing,
    ///   `corruptFrame` / `corruptSegmentHeader` / `unsupportedVersion` (naming file and offset) when a
    ///   segment is damaged outside a torn tail, `corruptManifest` / `missingSegment` when the segment
    ///   manifest is damaged or a segment it lists is missing, `corruptStoreIdentity`, `invalidArgument`
    ///   (also for an open for writing of a retained moment), or `ioError` (on a full disk, saying how much
    ///   space it needs; for a file that cannot be read, such as a symbolic link named like a segment whose
    ///   target does not exist; for a read-only open, also when a writer kept changing the segments for
    ///   every attempt).
    public static func open(at directory: String, options: StoreOptions = StoreOptions()) throws(LogStoreError)
        -> Store
    {
        var options = try options.validated()
        let io = SystemIO(faults: options.faultInjector)
        if !io.isDirectory(directory) {
            guard options.createIfMissing, !options.readOnly else {
                throw LogStoreError(.storeMissing, "no store directory", file: directory)
            }
            do {
                try io.makeDirectory(directory)
                try io.syncDirectory(parentDirectory(of: directory))
            } catch {
                throw LogStoreError(.ioError, "cannot create the store directory", file: directory, underlying: error)
            }
        }
        if !options.readOnly, io.exists(directory + "/" + HistoryFolder.momentFileName) {
            // A retained moment is the store as of one commit: written to, it would no longer be.
            throw LogStoreError(
                .invalidArgument, "this is a retained moment of a store: it opens read-only",
                file: directory + "/" + HistoryFolder.momentFileName)
        }
        let (kind, lock) = try StoreRecognition.claim(directory, options: options, io: io)
        options.encryption = try StoreRecognition.encryption(
            of: directory, kind: kind, cipher: options.cipher, io: io)
        let mode: StoreLoader.Mode = options.readOnly ? .readOnly : .writable(segmentSize: options.segmentSize)
        var loaded = try StoreLoader(
            directory: directory, mode: mode, io: io, requiresManifest: kind != .legacy, encryption: options.encryption
        ).load()
        if kind == .legacy, options.readOnly {
            loaded.notes.append(
                "\(directory): no identity file (\(StoreIdentity.fileName)): the store was made by an older "
                    + "version; the next open for writing adds it")
        }
        if !options.readOnly, let newest = loaded.newest {
            // A previous process may have died with writes only in the page cache: make them durable
            // before anything newer is written, so this segment can never become a torn *older* one.
            do {
                try io.syncData(newest.file.fd, path: newest.file.path)
            } catch {
                throw LogStoreError(
                    .ioError, "cannot sync the newest segment", file: newest.file.path, underlying: error)
            }
        }
        let store = Store(
            directory: directory, options: options, io: io, lock: lock, loaded: loaded,
            requiresManifest: kind != .legacy)
        if !options.readOnly {
            try store.refreshManifestAtOpen(onDisk: loaded.manifest)
            // After the manifest: a store with an identity file and segments must have one.
            if kind == .legacy { try StoreRecognition.createIdentity(in: directory, io: io) }
        }
        // A full newest segment that writing does not continue in is sealed before a newer one exists.
        if !options.readOnly, let newest = loaded.newest, !loaded.newestIsSealed,
            !store.pipeline.hasActiveSegment
        {
            try store.pipeline.seal(newest.file, at: newest.size, sequence: loaded.maxSequence)
        }
        if options.compaction.background, !options.readOnly {
            let compactor = BackgroundCompactor(store: store, options: options.compaction)
            store.compactor.withLock { $0 = compactor }
        }
        return store
    }

    private init(
        directory: String, options: StoreOptions, io: SystemIO, lock: DirectoryLock?, loaded: StoreLoader.Loaded,
        requiresManifest: Bool
    ) {
        self.directory = directory
        self.options = options
        self.io = io
        self.recovery = loaded.recovery
        self.openNotes = loaded.notes
        self.segmentsLoadedFromHints = loaded.hintedSegments
        self.lock = RankedMutex(lock, rank: .directoryLock)
        let firstFreeID = max(loaded.reservedIDs, loaded.highestID + 1, 1)
        let nextID = ConditionLock(firstFreeID, rank: .nextID)
        self.nextID = nextID
        self.follower =
            options.readOnly
            ? Follower(
                directory: directory, io: io, requiresManifest: requiresManifest, loaded: loaded,
                encryption: options.encryption) : nil
        var state = loaded.state
        state.publish(through: loaded.maxSequence)
        let index = ConditionLock(state, rank: .index)
        self.state = index
        self.pipeline = CommitPipeline(
            directory: directory, options: options, io: io, index: index, readViews: readViews, nextID: nextID,
            manifest: ManifestWriter(
                directory: directory, io: io, index: index, nextID: nextID,
                recordedDictionaryID: loaded.manifest?.dictionaries?.map(\.id).max() ?? 0),
            loaded: loaded)
        self.compaction = Compactor(
            state: index, pipeline: pipeline,
            hints: HintFiles(state: index, io: io, directory: directory, encryption: options.encryption), io: io,
            options: options, directory: directory)
    }

    deinit {
        pipeline.changes.finish()
        compactor.withLock { $0 }?.stop(wait: false)
        // Stops the page-cache filler before the segment's descriptor can close, and cuts the segment back.
        pipeline.shutDown()
    }

    /// Makes everything written so far durable, waits for writes in flight, and releases the store.
    ///
    /// When nothing failed, it writes the hint files the sealed segments still lack (so the next open
    /// need not scan them) and records the clean close (with the newest segment's exact size) in the
    /// segment manifest, so the next open treats any damage at the end of the log as corruption rather
    /// than as a torn tail of a crash.
    ///
    /// Every later call on this `Store` throws ``LogStoreError/Code/closed``; open the directory again
    /// to go on. Closing twice is harmless.
    /// - throws: ``LogStoreError`` when the final sync fails.
    public func close() throws(LogStoreError) {
        guard pipeline.close() else { return }
        compactor.withLock { $0 }?.stop()
        // A pass (or hint write) in another thread finishes first; any that would start from now on is
        // refused with `closed`, so nothing is written beside the rest of the close or after it.
        compactionLock.withLock { closing in closing = true }
        defer {
            pipeline.changes.finish()
            state.withLock { state in
                readViews.advance()
                state.close()
            }
            readViews.release()
            pipeline.releaseActiveSegment()
            lock.withLock { $0 = nil }
        }
        if pipeline.failure == nil {
            // The sync runs even when cutting the extension back fails (the next open trims it then).
            var trimFailure: LogStoreError?
            do { try pipeline.trimPrefill() } catch { trimFailure = error }
            try pipeline.syncActiveSegment()
            if let trimFailure { throw trimFailure }
            // Sealed segments the compactor has not hinted yet get their hints now (after the data is
            // durable; under the compaction lock, which nobody else takes any more), and the next open
            // reads hints instead of scanning them. A hint that cannot be written costs only that scan:
            // the close goes on.
            if !options.readOnly { compactionLock.withLock { _ in try? writeMissingHintsHoldingCompactionLock() } }
            if !options.readOnly, pipeline.failure == nil { try recordCleanClose() }
        } else {
            pipeline.stopPrefill()
        }
    }

    /// Makes every write so far durable now, whatever the fsync policy.
    /// - throws: ``LogStoreError`` with code `ioError` (and the store then refuses writes) when the sync
    ///   fails, and `storeFailed` once any write or sync has failed before (a later sync that succeeds does
    ///   not bring back pages the kernel dropped after the failed one: reopen the store).
    public func sync() throws(LogStoreError) {
        try checkOpen()
        try pipeline.syncActiveSegment()
    }

    func checkOpen() throws(LogStoreError) {
        guard state.withLock({ $0.isOpen }) else {
            throw LogStoreError(.closed, "the store is closed", file: directory)
        }
    }

    /// Throws unless the store is open and no write has failed: what writes (compaction, collection) does
    /// not start on a store whose index may name records that never reached the disk.
    func checkWritable() throws(LogStoreError) {
        try checkOpen()
        if let failure = pipeline.failure {
            throw LogStoreError(
                .storeFailed, "an earlier write failed; reopen the store", file: directory, underlying: failure)
        }
    }

    /// The folder that holds `path` (`.` for a bare name, `/` for a name at the root).
    static func parentDirectory(of path: String) -> String {
        guard let slash = path.lastIndex(of: "/") else { return "." }
        return slash == path.startIndex ? "/" : String(path[..<slash])
    }
}
