@_spi(Engine) import LogStoreFormat
@_spi(Engine) import LogStoreSystem

/// Consistent copies of a live store: checkpoints (a new folder) and backups (a folder kept up to date).
/// See `Documentation/Reliability.md`, "Checkpoints and backups".
extension Store {
    /// A segment being written that holds at least this many bytes is sealed by a checkpoint, so that it is
    /// linked rather than copied: a sixteenth of the segment size, at least 1 MiB (4 MiB by default), so
    /// that checkpoints taken often do not cut the log into many small segments.
    var checkpointSealThreshold: UInt64 { max(1 << 20, UInt64(options.segmentSize) / 16) }

    /// Writes a copy of the store as of its newest commit into `destination`, a folder that must not exist
    /// yet (or be empty), while writers go on.
    ///
    /// Sealed segments never change, so on the same file system they are hard links to the store's files
    /// (no data copied). The segment being written is sealed first when it holds a sixteenth of the segment
    /// size or more, at least 1 MiB (as a commit would be written, and the next batch starts a new segment),
    /// so that it is linked too; a smaller one is copied up to the commit, as is the newest segment of a
    /// store open read-only. Writers wait no longer than behind a commit; the copy opens as a store (and
    /// passes `verify`) with exactly the commits up to ``CheckpointReport/sequence``.
    ///
    /// The copy is made in `DESTINATION.checkpoint-partial` and renamed to `destination` once every file
    /// and the folder are synced: after a crash, `destination` is either complete or missing (the next
    /// checkpoint to it removes the partial folder). One checkpoint or backup at a time runs to a given
    /// destination (`DESTINATION.lock`, created beside it, holds the lock). Works on a store open read-only
    /// beside a writer too (which never seals: its newest writer segment is copied whole).
    ///
    /// - parameter hardLinks: whether sealed segments may be hard links to the store's files (when false,
    ///   or on another file system, every byte is copied: a copy that shares no file with the store).
    /// - parameter progress: called on this thread as segment bytes are copied.
    /// - throws: ``LogStoreError`` with code `invalidArgument` when `destination` exists and is not an
    ///   empty folder, is the store's folder, inside it or holding it, a symbolic link or a mount point, or
    ///   when an interrupted backup waits there (`DESTINATION.backup-previous`); `locked` when another
    ///   checkpoint or backup to the same destination runs, or a process has the backup open for writing;
    ///   `closed`; `storeFailed` when the store's writer failed before, or sealing failed (the store then
    ///   fails as after any failed write); or `ioError` (naming the file).
    @discardableResult
    public func checkpoint(
        to destination: String, hardLinks: Bool = true, progress: ((CheckpointProgress) -> Void)? = nil
    ) throws(LogStoreError) -> CheckpointReport {
        let target = try CheckpointDestination(destination, store: directory, io: io)
        let lock = try target.lock()
        defer { withExtendedLifetime(lock) {} }
        guard !io.exists(target.previous) else {
            throw LogStoreError(
                .invalidArgument, "an interrupted backup waits here: run backup to this destination to finish it",
                file: target.previous)
        }
        guard try target.isFresh() else {
            throw LogStoreError(
                .invalidArgument, "the destination exists and is not an empty folder", file: target.destination)
        }
        try target.removeLeftover(target.checkpointStaging)
        try target.removeLeftover(target.backupStaging)
        let source = try checkpointSource()
        let report = try CheckpointWriter(
            io: io, storeDirectory: directory, staging: target.checkpointStaging, previous: nil,
            linksToStore: hardLinks, progress: progress
        ).write(source, destination: target.destination)
        try target.publish(target.checkpointStaging, what: "checkpoint")
        return report
    }

    /// Brings the backup in `destination` up to the store's newest commit, or makes one there when it is
    /// missing or empty.
    ///
    /// An existing backup must be one of this store (the same identity file). The new backup is made
    /// beside it (`DESTINATION.backup-partial`): each sealed segment the old backup has is linked from it
    /// when it is the store's segment (the same file, or the same size, header and last 4 KiB), the others
    /// linked from the store (same file system) or copied, and the segment being written copied. Then the
    /// old backup is renamed to `DESTINATION.backup-previous`, the new one to `destination`, and the old one
    /// removed. A crash leaves `destination` complete (old or new), or, between the two renames, missing while
    /// both complete folders are there: the next backup to it finishes the swap first. Segments the store no
    /// longer has (compacted away) leave the backup with the old one.
    ///
    /// - parameter hardLinks: as for ``checkpoint(to:hardLinks:progress:)``; when false, no file of the
    ///   backup is the store's (a segment the old backup shares with the store is copied).
    /// - throws: as ``checkpoint(to:hardLinks:progress:)``, and `invalidArgument` when `destination` holds
    ///   something that is not a backup of this store (or files beside one).
    @discardableResult
    public func backup(
        to destination: String, hardLinks: Bool = true, progress: ((CheckpointProgress) -> Void)? = nil
    ) throws(LogStoreError) -> CheckpointReport {
        let target = try CheckpointDestination(destination, store: directory, io: io)
        let lock = try target.lock()
        defer { withExtendedLifetime(lock) {} }
        try finishInterruptedBackup(target)
        if try target.isFresh() {
            try target.removeLeftover(target.backupStaging)
            try target.removeLeftover(target.checkpointStaging)
            let report = try CheckpointWriter(
                io: io, storeDirectory: directory, staging: target.backupStaging, previous: nil,
                linksToStore: hardLinks, progress: progress
            ).write(try checkpointSource(), destination: target.destination)
            try target.publish(target.backupStaging, what: "backup")
            return report
        }
        let destinationLock = try target.lockDestinationStore()
        let previousAppend = try requireBackupOfThisStore(target)
        try target.removeLeftover(target.backupStaging)
        try target.removeLeftover(target.checkpointStaging)
        var report = try CheckpointWriter(
            io: io, storeDirectory: directory, staging: target.backupStaging,
            previous: (target.destination, previousAppend), linksToStore: hardLinks, progress: progress
        ).write(try checkpointSource(), destination: target.destination)
        do {
            try io.rename(target.destination, to: target.previous)
            try io.rename(target.backupStaging, to: target.destination)
            try io.syncDirectory(target.parent)
        } catch {
            throw LogStoreError(
                .ioError, "cannot put the new backup in place of the old one", file: target.destination,
                underlying: error)
        }
        withExtendedLifetime(destinationLock) {}
        let left = target.removePrevious()
        if !left.isEmpty {
            report.notes.append(
                "the previous backup was replaced, but \(target.previous) was left: it holds "
                    + left.prefix(5).joined(separator: ", ") + (left.count > 5 ? ", …" : ""))
        }
        return report
    }

    /// The state to copy: in a store open for writing, taken holding the writer slot (after sealing a large
    /// tail), so that the segments' sizes are those of the published commits.
    func checkpointSource() throws(LogStoreError) -> CheckpointSource {
        try checkOpen()
        let (captured, growing): (CheckpointSource, UInt32?)
        if options.readOnly {
            captured = try captureCheckpointState()
            // Its writer is another process, which may be appending to the newest writer segment.
            growing = captured.segments.last { $0.isAppend }?.file.number
        } else {
            let threshold = checkpointSealThreshold
            (captured, growing) = try pipeline.holdingWriterSlot(sealingAt: threshold) {
                growing throws(LogStoreError) in (try captureCheckpointState(), growing)
            }
        }
        var source = captured
        for index in source.segments.indices where source.segments[index].file.number == growing {
            source.segments[index].mayGrow = true
        }
        // Ids below the store's reservation may be in use by writers that are not in the copy yet; the
        // copy reserves them too, so that it never hands one out again.
        // The manifest's reservation (0 when it cannot be read: the segments' own reservation frames still
        // hold it).
        let recorded = CheckpointDestination.manifest(in: directory, io: io)?.reservedIDs ?? 0
        source.reservedIDs = max(nextID.withLock { $0 }, recorded)
        return source
    }

    private func captureCheckpointState() throws(LogStoreError) -> CheckpointSource {
        try readState { state in
            let infos = state.segments.all.sorted { $0.file.number < $1.file.number }
            let append = infos.last { !SegmentStatistics.isOutput($0.file) }?.file.number
            return CheckpointSource(
                segments: infos.map {
                    .init(
                        file: $0.file, size: $0.size, isAppend: $0.file.number == append, mayGrow: false,
                        hintUsable: $0.hasHint && !$0.hintDisagrees)
                },
                dictionaries: state.dictionaries.all, sequence: state.publishedSequence, reservedIDs: 0,
                encryption: options.encryption)
        }
    }

    /// Checks that the destination is a folder with this store's identity file (or both have none) and only
    /// a store's files.
    /// - throws: ``LogStoreError`` `invalidArgument` naming the `kind` of copy expected (`what it is not a
    ///   KIND of`) and what to `verb` into instead.
    func requireCopyOfThisStore(_ target: CheckpointDestination, kind: String, verb: String) throws(LogStoreError) {
        guard io.isDirectory(target.destination), try isCopyOfThisStore(target.destination) else {
            throw LogStoreError(
                .invalidArgument,
                "the destination is not a \(kind) of this store (its \(StoreIdentity.fileName) file differs)",
                file: target.destination)
        }
        let foreign = try target.foreignNames()
        guard foreign.isEmpty else {
            throw LogStoreError(
                .invalidArgument,
                "the destination holds files that are not a store's (" + foreign.prefix(5).joined(separator: ", ")
                    + "): \(verb) into a folder of its own", file: target.destination)
        }
    }

    /// Checks that the destination holds a complete backup of this store: its identity file is this
    /// store's (or both have none), and its manifest reads. Returns the segment that backup copied while
    /// it was being written.
    private func requireBackupOfThisStore(_ target: CheckpointDestination) throws(LogStoreError) -> UInt32 {
        try requireCopyOfThisStore(target, kind: "backup", verb: "back up")
        let manifestPath = target.destination + "/" + SegmentManifest.fileName
        let manifest = CheckpointDestination.manifest(in: target.destination, io: io)
        guard let manifest, let clean = manifest.cleanClose, target.isComplete(target.destination) else {
            throw LogStoreError(
                .invalidArgument, "the destination is not a complete backup; back up into a new folder",
                file: manifestPath)
        }
        return clean.appendSegment
    }

    /// Whether `directory` has this store's identity file (byte for byte), or neither has one (a store made
    /// before identity files). An identity file that exists but cannot be read is an error.
    func isCopyOfThisStore(_ directory: String) throws(LogStoreError) -> Bool {
        func identity(_ folder: String) throws(LogStoreError) -> [UInt8]? {
            let path = folder + "/" + StoreIdentity.fileName
            guard io.exists(path) else { return nil }
            do {
                return try io.readWholeFile(path)
            } catch {
                throw LogStoreError(.ioError, "cannot read the identity file", file: path, underlying: error)
            }
        }
        return try identity(directory) == identity(self.directory)
    }

    /// What an interrupted backup left: between its two renames, the destination is missing and the old
    /// backup is in `.backup-previous`; the new one is put in place when it is complete, the old one back
    /// otherwise. Leftovers of a finished swap go.
    private func finishInterruptedBackup(_ target: CheckpointDestination) throws(LogStoreError) {
        guard io.exists(target.previous) else { return }
        let isEmpty = (try? io.listDirectory(target.previous).isEmpty) ?? false
        var isOurs = isEmpty
        if !isOurs { isOurs = try isCopyOfThisStore(target.previous) }
        guard io.isDirectory(target.previous), isOurs else {
            throw LogStoreError(
                .invalidArgument, "something that is not a backup of this store is in the way", file: target.previous)
        }
        do {
            if !io.exists(target.destination) {
                if io.isDirectory(target.backupStaging), target.isComplete(target.backupStaging) {
                    try io.rename(target.backupStaging, to: target.destination)
                } else {
                    try io.rename(target.previous, to: target.destination)
                }
                try io.syncDirectory(target.parent)
            }
        } catch {
            throw LogStoreError(
                .ioError, "cannot finish the interrupted backup", file: target.destination, underlying: error)
        }
        guard io.exists(target.previous) else { return }
        guard target.isComplete(target.destination) else {
            throw LogStoreError(
                .invalidArgument,
                "an interrupted backup left \(target.previous), and the destination is not a complete backup: "
                    + "check them by hand", file: target.destination)
        }
        let left = target.removePrevious()
        guard left.isEmpty else {
            throw LogStoreError(
                .invalidArgument,
                "\(target.previous) holds files that are not a store's (" + left.prefix(5).joined(separator: ", ")
                    + "); move them away and run the backup again", file: target.previous)
        }
    }
}
