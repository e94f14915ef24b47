@_spi(Engine) import LogStoreFormat
@_spi(Engine) import LogStoreSystem

/// Retained moments: the store as of one commit, kept under a name in `history/NAME` inside the store's
/// directory (see `Documentation/Reliability.md`, "History").
extension Store {
    /// Keeps the store as of its newest commit under `name`, until ``release(_:)``: it can be opened
    /// read-only (``open(at:retained:)``), compared with another state (``changes(from:to:)``), and it
    /// survives compaction, mark-sweep, crashes and reopens.
    ///
    /// A moment is a checkpoint (``checkpoint(to:hardLinks:progress:)``) in `history/NAME`: its sealed
    /// segments are hard links to the store's, so retaining copies no data (at most the tail of the segment
    /// being written, a sixteenth of the segment size), and what it costs on disk is the segments the store
    /// compacts away while the moment keeps them (``historyUsage()``).
    ///
    /// ```swift
    /// try store.retain(as: "before-import")
    /// ```
    /// - throws: ``LogStoreError`` with code `invalidArgument` for a name that is not 1–128 letters, digits,
    ///   `-`, `_` or `.` (not starting with `.`), or that is retained already; `readOnly`; `locked` while
    ///   another retain or release runs; `closed`; `storeFailed`; or `ioError`.
    @discardableResult
    public func retain(as name: String) throws(LogStoreError) -> RetainedMoment {
        try HistoryFolder.checkName(name)
        guard !options.readOnly else { throw LogStoreError(.readOnly, "the store is open read-only", file: directory) }
        try checkOpen()
        let history = HistoryFolder(store: directory, io: io)
        try history.create()
        let lock = try history.lock()
        defer { withExtendedLifetime(lock) {} }
        history.removeLeftovers()
        let destination = history.folder(name)
        guard !io.exists(destination) else {
            throw LogStoreError(.invalidArgument, "a moment named \"\(name)\" is retained already", file: destination)
        }
        let staging = destination + HistoryFolder.partialSuffix
        // Every sealed segment gets its hint first, so that the moment opens from hints, as the store does;
        // and every hint the store's open used unchecked is compared with its segment first, so that a moment
        // never keeps a hint the store would find wrong later.
        try writeMissingHints()
        try withCompactionLock { () throws(LogStoreError) in try hints.checkEveryReplayedHint() }
        // A retain that fails leaves no staging folder (it would hold links to the store's segments).
        var finished = false
        defer { if !finished { try? history.removeMomentFolder(staging) } }
        let report = try CheckpointWriter(
            io: io, storeDirectory: directory, staging: staging, previous: nil, linksToStore: true, progress: nil
        ).write(try checkpointSource(), destination: destination)
        let created = SystemClock.milliseconds()
        do {
            try io.writeNewFile(
                staging + "/" + HistoryFolder.momentFileName,
                HistoryFolder.momentFile(name: name, sequence: report.sequence, created: created))
            try io.syncDirectory(staging)
            try io.rename(staging, to: destination)
            try io.syncDirectory(history.path)
            // The history folder's own entry is durable too (a process that created it may have died first).
            try io.syncDirectory(directory)
            finished = true
        } catch {
            throw LogStoreError(
                .ioError, "cannot put the retained moment in place", file: destination, underlying: error)
        }
        let listed = try? history.usage(garbage: segmentGarbage()).moments.first { $0.name == name }
        return listed
            ?? RetainedMoment(
                name: name, sequence: report.sequence, createdMilliseconds: created, segments: report.segments,
                bytes: report.bytesLinked + report.bytesCopied, bytesNotInStore: report.bytesCopied)
    }

    /// Releases the retained moment `name`: its folder is removed, and what only it kept (segments the store
    /// compacted away since) is freed.
    /// - throws: ``LogStoreError`` with code `notFound` when no moment has that name, `invalidArgument` when
    ///   its folder holds files that are not a store's (left as it is), `readOnly`, `locked`, `closed`, or
    ///   `ioError`.
    public func release(_ name: String) throws(LogStoreError) {
        try HistoryFolder.checkName(name)
        guard !options.readOnly else { throw LogStoreError(.readOnly, "the store is open read-only", file: directory) }
        try checkOpen()
        let history = HistoryFolder(store: directory, io: io)
        guard io.isDirectory(history.folder(name)) else {
            throw LogStoreError(.notFound, "no retained moment is named \"\(name)\"", file: history.folder(name))
        }
        let lock = try history.lock()
        defer { withExtendedLifetime(lock) {} }
        history.removeLeftovers()
        // What the folder holds is checked before it is renamed: one with other files stays as it is.
        try history.checkMomentFolder(history.folder(name))
        let releasing = history.folder(name) + HistoryFolder.releasingSuffix
        do {
            try io.rename(history.folder(name), to: releasing)
            try io.syncDirectory(history.path)
        } catch {
            throw LogStoreError(.ioError, "cannot release the moment", file: history.folder(name), underlying: error)
        }
        try history.removeMomentFolder(releasing)
    }

    /// The retained moments, oldest first, and what they cost on disk beside the store.
    /// - throws: ``LogStoreError`` `ioError` when the history folder cannot be listed.
    public func historyUsage() throws(LogStoreError) -> HistoryUsage {
        try HistoryFolder(store: directory, io: io).usage(garbage: segmentGarbage())
    }

    /// The garbage bytes of each segment, by number.
    private func segmentGarbage() -> [UInt32: UInt64] {
        state.withLock { state in
            Dictionary(uniqueKeysWithValues: state.segments.all.map { ($0.file.number, $0.garbageBytes) })
        }
    }

    /// Releases the moments `policy` does not keep at `nowMilliseconds` (since 1970; the wall clock by
    /// default) and returns them (see ``RetentionPolicy/momentsToRelease(_:nowMilliseconds:)``).
    /// - throws: what ``release(_:)`` throws (the moments released before the failure stay released).
    @discardableResult
    public func applyRetention(_ policy: RetentionPolicy, nowMilliseconds: UInt64? = nil) throws(LogStoreError)
        -> [RetainedMoment]
    {
        let now = nowMilliseconds ?? SystemClock.milliseconds()
        let released = policy.momentsToRelease(try historyUsage().moments, nowMilliseconds: now)
        for moment in released { try release(moment.name) }
        return released
    }

    /// Opens the moment `name` retained in the store at `directory`, read-only: the store exactly as of the
    /// moment's commit. Works while a writer has the store open (in this process or another).
    /// - throws: ``LogStoreError`` with code `notFound` when no moment has that name, `invalidArgument` for
    ///   a name that cannot be one, and what ``open(at:options:)`` throws.
    public static func open(at directory: String, retained name: String, options: StoreOptions = StoreOptions())
        throws(LogStoreError) -> Store
    {
        try HistoryFolder.checkName(name)
        let io = SystemIO(faults: nil)
        let history = HistoryFolder(store: directory, io: io)
        let folder = history.folder(name)
        guard history.moment(named: name) != nil else {
            throw LogStoreError(.notFound, "no retained moment is named \"\(name)\"", file: folder)
        }
        var options = options
        options.readOnly = true
        options.createIfMissing = false
        return try Store.open(at: folder, options: options)
    }

    /// What changed from `old` to `new`, two snapshots of one store (of a store and of one of its retained
    /// moments, or of two moments): the objects added, changed (another version) and removed, and the roots.
    /// Reads the version of each object in both (the sequence number in its frame's header), no payload.
    /// An object whose version cannot be read in either is counted as changed. Snapshots of two different
    /// stores give no meaningful answer.
    public static func changes(from old: Snapshot, to new: Snapshot) -> StoreDifference {
        var changes = StoreDifference()
        let before = old.ids()
        let after = new.ids()
        var (i, j) = (0, 0)
        while i < before.count || j < after.count {
            if j == after.count || (i < before.count && before[i] < after[j]) {
                changes.removed.append(before[i])
                i += 1
            } else if i == before.count || after[j] < before[i] {
                changes.added.append(after[j])
                j += 1
            } else {
                let (was, now) = (old.version(of: before[i]), new.version(of: after[j]))
                if was == nil || was != now { changes.changed.append(after[j]) }
                i += 1
                j += 1
            }
        }
        let (oldRoots, newRoots) = (old.roots(), new.roots())
        for (name, target) in newRoots where oldRoots[name] != target { changes.rootsSet[name] = target }
        changes.rootsRemoved = oldRoots.keys.filter { newRoots[$0] == nil }.sorted()
        return changes
    }

    /// What changed in this store since the moment `name` it retained: ``changes(from:to:)`` from the
    /// moment to the store's newest commit.
    /// - throws: what ``open(at:retained:options:)`` and ``snapshot()`` throw.
    public func changes(since name: String) throws(LogStoreError) -> StoreDifference {
        let moment = try Store.open(at: directory, retained: name)
        defer { try? moment.close() }
        return Store.changes(from: try moment.snapshot(), to: try snapshot())
    }
}
