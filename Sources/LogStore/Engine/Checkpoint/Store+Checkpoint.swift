@_spi(Engine) import LogStoreFormat
@_spi(Engine) import LogStoreSystem

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Consistent copies of a live store: checkpoints (a new directory) and backups (a directory kept up to
/// date). See `Documentation/Reliability.md`, "Checkpoints and backups".
extension Store {
    /// A segment being written that holds at least this many bytes is sealed by a checkpoint, so that it is
    /// linked rather than copied.
    static let checkpointSealThreshold: UInt64 = 1 << 20

    /// Writes a copy of the store as of its newest commit into `destination`, a directory that must not
    /// exist yet (or be empty), while writers go on.
    ///
    /// Sealed segments never change, so on the same file system they are hard links to the store's files
    /// (no data copied). The segment being written is sealed first when it holds 1 MiB or more (as a
    /// commit would be written, and the next batch starts a new segment), so that it is linked too;
    /// a smaller one is copied up to the commit, as is the newest segment of a store open read-only. Writers
    /// are held up no longer than by a commit; the copy opens as a store (and passes `verify`) with
    /// exactly the commits up to ``CheckpointReport/sequence``.
    ///
    /// The copy is made in `DESTINATION.checkpoint-partial` and renamed to `destination` once every file
    /// and the directory are synced: after a crash, `destination` is either complete or missing (a
    /// leftover partial directory is removed by the next checkpoint or backup to the same destination).
    /// Works on a store open read-only beside a writer too.
    ///
    /// - parameter hardLinks: whether sealed segments may be hard links to the store's files (when false,
    ///   or on another file system, every byte is copied: a copy that shares no file with the store).
    /// - parameter progress: called on this thread as segment bytes are copied.
    /// - throws: ``LogStoreError`` with code `invalidArgument` when `destination` exists and is not an
    ///   empty directory, `closed`, or `ioError` (naming the file).
    @discardableResult
    public func checkpoint(
        to destination: String, hardLinks: Bool = true, progress: ((CheckpointProgress) -> Void)? = nil
    ) throws(LogStoreError) -> CheckpointReport {
        let paths = BackupPaths(destination)
        try requireNewDestination(paths)
        try removeLeftover(paths.staging)
        let source = try checkpointSource()
        let report = try CheckpointWriter(
            io: io, storeDirectory: directory, staging: paths.staging, previous: nil, linksToStore: hardLinks,
            progress: progress
        ).write(source, destination: destination)
        try publish(paths.staging, as: destination, parent: paths.parent)
        return report
    }

    /// Brings the backup in `destination` up to the store's newest commit, or makes one there when it is
    /// missing or empty.
    ///
    /// An existing backup must be one of this store (the same identity file). The new backup is made
    /// beside it (`DESTINATION.backup-partial`): the sealed segments the old backup already has are linked
    /// from it, the others linked from the store (same file system) or copied, and the segment being
    /// written copied. Then the old backup is renamed to `DESTINATION.backup-previous`, the new one to
    /// `destination`, and the old one removed. A crash leaves `destination` complete (old or new), or, between the
    /// two renames, missing while both complete directories are there: the next backup to it finishes the
    /// swap first. Segments the store no longer has (compacted away) leave the backup with the old one.
    ///
    /// - parameter hardLinks: as for ``checkpoint(to:hardLinks:progress:)``: whether segments the backup
    ///   lacks may be hard links to the store's files (segments it keeps are always linked from itself).
    /// - throws: ``LogStoreError`` with code `invalidArgument` when `destination` holds something that is
    ///   not a backup of this store, `closed`, or `ioError` (naming the file).
    @discardableResult
    public func backup(
        to destination: String, hardLinks: Bool = true, progress: ((CheckpointProgress) -> Void)? = nil
    ) throws(LogStoreError) -> CheckpointReport {
        let paths = BackupPaths(destination)
        try finishInterruptedBackup(paths)
        guard try !isFreshDestination(destination) else {
            return try checkpoint(to: destination, hardLinks: hardLinks, progress: progress)
        }
        let previousAppend = try requireBackupOfThisStore(destination)
        try removeLeftover(paths.staging)
        let source = try checkpointSource()
        let report = try CheckpointWriter(
            io: io, storeDirectory: directory, staging: paths.staging,
            previous: (destination, previousAppend), linksToStore: hardLinks, progress: progress
        ).write(source, destination: destination)
        do {
            try io.rename(destination, to: paths.previous)
            try io.rename(paths.staging, to: destination)
            try io.syncDirectory(paths.parent)
            try io.removeDirectory(paths.previous)
        } catch {
            throw LogStoreError(
                .ioError, "cannot put the new backup in place of the old one", file: destination, underlying: error)
        }
        return report
    }

    /// The state to copy, in one hold of the index lock.
    private func checkpointSource() throws(LogStoreError) -> CheckpointSource {
        if !options.readOnly {
            // A segment being written must be copied; a sealed one is linked. So a tail worth copying is
            // sealed first (as a commit would, holding writers up as long), and the next batch starts a
            // new segment.
            try checkWritable()
            try compaction.sealActiveSegment { number in
                state.withLock { $0.segments.size(of: number) } >= Self.checkpointSealThreshold
            }
        }
        var source = try readState { state in
            let infos = state.segments.all.sorted { $0.file.number < $1.file.number }
            let append = infos.last { !SegmentStatistics.isOutput($0.file) }?.file.number
            return CheckpointSource(
                segments: infos.map {
                    .init(file: $0.file, size: $0.size, isAppend: $0.file.number == append, mayGrow: false)
                },
                dictionaries: state.dictionaries.all, sequence: state.publishedSequence, reservedIDs: 0)
        }
        // The newest writer segment may still grow when this store's writer is writing it (asked after the
        // state was taken: a writer moves to a new segment only after sealing the old one), and always in a
        // store open read-only (its writer is another process).
        let active = options.readOnly ? nil : pipeline.activeSegment?.number
        for index in source.segments.indices where source.segments[index].isAppend {
            let segment = source.segments[index]
            if options.readOnly || active == segment.file.number {
                source.segments[index] = .init(file: segment.file, size: segment.size, isAppend: true, mayGrow: true)
            }
        }
        // Ids below the store's reservation may be in use by writers that are not in the copy yet; the
        // copy reserves them too, so that it never hands one out again.
        source.reservedIDs = max(nextID.withLock { $0 }, recordedReservation())
        return source
    }

    /// The id reservation of the store's manifest (0 when it cannot be read: the segments' own reservation
    /// frames still hold it).
    private func recordedReservation() -> UInt64 {
        let path = directory + "/" + SegmentManifest.fileName
        guard let fd = try? io.open(path, flags: O_RDONLY | O_CLOEXEC) else { return 0 }
        defer { io.close(fd) }
        guard let size = try? io.size(fd, path: path), let bytes = try? io.read(fd, count: Int(size), at: 0, path: path)
        else { return 0 }
        return bytes.withUnsafeBytes { raw in
            if case .success(let manifest) = SegmentManifest.decode(raw) { return manifest.reservedIDs }
            return 0
        }
    }

    /// Whether `destination` is missing or an empty directory.
    private func isFreshDestination(_ destination: String) throws(LogStoreError) -> Bool {
        guard io.exists(destination) else { return true }
        guard io.isDirectory(destination) else { return false }
        do {
            return try io.listDirectory(destination).isEmpty
        } catch {
            throw LogStoreError(.ioError, "cannot list the destination", file: destination, underlying: error)
        }
    }

    private func requireNewDestination(_ paths: BackupPaths) throws(LogStoreError) {
        guard try isFreshDestination(paths.destination) else {
            throw LogStoreError(
                .invalidArgument, "the destination exists and is not an empty directory", file: paths.destination)
        }
        guard io.isDirectory(paths.parent) else {
            throw LogStoreError(
                .invalidArgument, "the destination's parent directory does not exist", file: paths.parent)
        }
    }

    /// Checks that `destination` holds a backup of this store: its identity file is this store's, and its
    /// manifest reads. Returns the segment the backup copied while it was being written.
    private func requireBackupOfThisStore(_ destination: String) throws(LogStoreError) -> UInt32 {
        let ours = readSmallFile(directory + "/" + StoreIdentity.fileName)
        let theirs = readSmallFile(destination + "/" + StoreIdentity.fileName)
        guard let ours, let theirs, ours == theirs else {
            throw LogStoreError(
                .invalidArgument,
                "the destination is not a backup of this store (its \(StoreIdentity.fileName) file differs or is missing)",
                file: destination)
        }
        let manifestPath = destination + "/" + SegmentManifest.fileName
        let manifest = readSmallFile(manifestPath).flatMap { bytes in
            bytes.withUnsafeBytes { raw -> SegmentManifest? in
                if case .success(let manifest) = SegmentManifest.decode(raw) { return manifest }
                return nil
            }
        }
        guard let manifest, let clean = manifest.cleanClose else {
            throw LogStoreError(
                .invalidArgument, "the backup's segment manifest is missing or damaged; back up into a new directory",
                file: manifestPath)
        }
        return clean.appendSegment
    }

    private func readSmallFile(_ path: String) -> [UInt8]? {
        guard let fd = try? io.open(path, flags: O_RDONLY | O_CLOEXEC) else { return nil }
        defer { io.close(fd) }
        guard let size = try? io.size(fd, path: path), size <= 1 << 24 else { return nil }
        return try? io.read(fd, count: Int(size), at: 0, path: path)
    }

    /// After a crash between the two renames of ``backup(to:hardLinks:progress:)``: the new backup is complete (it is
    /// renamed only once synced), so it takes the destination's place. Otherwise leftovers go.
    private func finishInterruptedBackup(_ paths: BackupPaths) throws(LogStoreError) {
        do {
            if !io.exists(paths.destination), io.isDirectory(paths.staging), io.isDirectory(paths.previous) {
                try io.rename(paths.staging, to: paths.destination)
                try io.syncDirectory(paths.parent)
            }
        } catch {
            throw LogStoreError(
                .ioError, "cannot finish the interrupted backup", file: paths.destination, underlying: error)
        }
        if io.exists(paths.destination) { try removeLeftover(paths.previous) }
    }

    /// Removes a staging directory left by an interrupted checkpoint or backup, after checking that it
    /// holds nothing but a store's files (a folder that is not ours is refused, never emptied).
    private func removeLeftover(_ path: String) throws(LogStoreError) {
        guard io.exists(path) else { return }
        do {
            guard io.isDirectory(path), try io.listDirectory(path).allSatisfy(BackupPaths.isStoreFileName) else {
                throw LogStoreError(
                    .invalidArgument, "a file or folder that is not a leftover checkpoint is in the way", file: path)
            }
            try io.removeDirectory(path)
        } catch let error as LogStoreError {
            throw error
        } catch {
            throw LogStoreError(
                .ioError, "cannot remove a leftover checkpoint directory", file: path, underlying: error)
        }
    }

    /// Renames the complete staging directory to `destination` and syncs the parent directory.
    private func publish(_ staging: String, as destination: String, parent: String) throws(LogStoreError) {
        do {
            try io.rename(staging, to: destination)
            try io.syncDirectory(parent)
        } catch {
            throw LogStoreError(.ioError, "cannot put the checkpoint in place", file: destination, underlying: error)
        }
    }
}

/// The paths a checkpoint or backup to one destination uses.
struct BackupPaths {
    let destination: String
    /// Where the copy is made before it takes the destination's name.
    let staging: String
    /// Where an incremental backup moves the backup it replaces, until it is removed.
    let previous: String
    let parent: String

    init(_ destination: String) {
        var trimmed = destination
        while trimmed.count > 1 && trimmed.hasSuffix("/") { trimmed.removeLast() }
        self.destination = trimmed
        staging = trimmed + ".checkpoint-partial"
        previous = trimmed + ".backup-previous"
        if let slash = trimmed.lastIndex(of: "/") {
            parent = slash == trimmed.startIndex ? "/" : String(trimmed[..<slash])
        } else {
            parent = "."
        }
    }

    /// Whether `name` is one a store (or a checkpoint being made) holds.
    static func isStoreFileName(_ name: String) -> Bool {
        if name == StoreIdentity.fileName || name == SegmentManifest.fileName { return true }
        if name.hasSuffix(LogFormat.writingSuffix) { return true }
        return LogFormat.segmentNumber(fromFileName: name) != nil || DictionaryFile.id(fromFileName: name) != nil
            || name.hasSuffix("." + HintFile.fileExtension)
    }
}
