@_spi(Engine) import LogStoreFormat
@_spi(Engine) import LogStoreSystem

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

extension Store {
    /// Copies every intact record of a damaged store into a new store at `destination`, and reports
    /// exactly what could not be copied (``SalvageReport``). The damaged store is only read.
    ///
    /// The store is read as `verify` reads it (going on after damage, every frame's checksum checked); each
    /// live object whose record reads back whole is copied with its id, type tag, references, payload and
    /// pinning, and every root. What the damaged bytes held is told from the segment's hint file, or from
    /// the intact frames among them:
    /// - objects lost (no version survives), copied in an older version (the newest is lost), copied though
    ///   a lost deletion had removed them, or whose whole record cannot be read (a damaged dictionary);
    /// - root changes lost;
    /// - references to objects the copy does not have: each such id gets a placeholder record (type tag
    ///   ``SalvageReport/placeholderTypeTag``, unpinned, its payload a UTF-8 sentence saying what was lost),
    ///   so that the copy is a sound store in which every reference names a live object.
    ///
    /// While it reads, salvage holds the store's `LOCK` shared (without creating it), so no writer opens the
    /// store meanwhile; a store open for writing is refused.
    ///
    /// For example:
    /// ```swift
    /// let report = try Store.salvage(from: "/var/db/app", to: "/var/db/app-salvaged")
    /// for lost in report.lostObjects { print(lost) }
    /// ```
    /// The copy is written in `DESTINATION.salvage-partial` and renamed to `destination` once it is closed
    /// (synced): after a crash, `destination` is complete or missing, and the next salvage to it removes
    /// the partial folder. A torn tail that a crash left in the damaged store (never committed) is not
    /// copied and is not a loss (see ``SalvageReport/notes``). Frames of a segment whose header is damaged
    /// are not copied: without the header their sequence numbers cannot be trusted; its hint file names
    /// them as lost.
    ///
    /// - parameter options: the new store's options (segment size, compression); it is written with
    ///   ``FsyncPolicy/never`` and synced when it is closed.
    /// - throws: ``LogStoreError`` with code `storeMissing` or `notAStore` for `source`; `invalidArgument`
    ///   when `destination` exists and is not an empty folder, is `source`, inside it or holding it, a
    ///   symbolic link or a mount point; `locked` when a process has `source` open for writing, or a
    ///   checkpoint, backup or salvage to the same destination runs; or `ioError` (naming the file).
    @discardableResult
    public static func salvage(
        from source: String, to destination: String, options: StoreOptions = StoreOptions()
    ) throws(LogStoreError) -> SalvageReport {
        let io = SystemIO(faults: nil)
        guard io.isDirectory(source) else {
            throw LogStoreError(.storeMissing, "no store directory", file: source)
        }
        let recognized = try StoreRecognition(directory: source, io: io)
        try recognized.requireStore(source, for: "salvage")
        let target = try CheckpointDestination(destination, store: source, io: io)
        let storeLock = try Self.lockShared(source, io: io)
        defer { withExtendedLifetime(storeLock) {} }
        let lock = try target.lock()
        defer { withExtendedLifetime(lock) {} }
        guard try target.isFresh() else {
            throw LogStoreError(
                .invalidArgument, "the destination exists and is not an empty folder", file: target.destination)
        }
        try target.removeLeftover(target.salvageStaging)
        let encryption =
            recognized.identityDamage == nil
            ? try StoreRecognition.encryption(of: source, kind: recognized.kind, cipher: options.cipher, io: io) : nil
        let loaded = try StoreLoader(
            directory: source, mode: .verify, io: io, requiresManifest: recognized.kind != .legacy,
            encryption: encryption
        ).load()
        let plan = SalvagePlan(directory: source, loaded: loaded, io: io)
        var report = plan.report
        if let damage = recognized.identityDamage {
            report.problems.insert(
                .init(file: damage.file ?? source, offset: damage.offset, message: damage.message), at: 0)
            report.doubts.append("the store's identity file is damaged (\(damage.message))")
        }
        try SalvageWriter(plan: plan).write(to: target.salvageStaging, options: options)
        try target.publish(target.salvageStaging, what: "salvaged store")
        return report
    }

    /// A shared lock on the store's `LOCK` file, when it has one (none is created): refused while a writer
    /// holds it, and keeping a writer from opening the store while salvage reads it.
    /// - throws: ``LogStoreError`` `locked` when a process has the store open for writing.
    private static func lockShared(_ directory: String, io: SystemIO) throws(LogStoreError) -> FolderLock? {
        let path = directory + "/" + LogFormat.lockFileName
        guard let fd = try? io.open(path, flags: O_RDONLY | O_CLOEXEC | O_NOFOLLOW) else { return nil }
        guard flock(fd, LOCK_SH | LOCK_NB) == 0 else {
            let code = errno
            io.close(fd)
            if code == EWOULDBLOCK {
                throw LogStoreError(
                    .locked, "a process has the store open for writing: close it before salvaging", file: path)
            }
            return nil
        }
        return FolderLock(fd: fd, record: false)
    }
}
