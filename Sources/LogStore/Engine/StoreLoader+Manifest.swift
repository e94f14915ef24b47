@_spi(Engine) import LogStoreFormat
@_spi(Engine) import LogStoreSystem

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// What the loader takes from the `SEGMENTS` manifest: which segments must be there, and whether the
/// store was closed cleanly (then the append segment must have exactly the size recorded, and no part
/// of it can be a torn tail).
extension StoreLoader {
    var manifestPath: String { directory + "/" + SegmentManifest.fileName }

    /// The manifest file as one read of it found it.
    enum ManifestFile: Equatable {
        /// There is no `SEGMENTS`.
        case absent
        /// Its bytes.
        case bytes([UInt8])
        /// It is there but cannot be read (not a regular file, or an I/O error).
        case unreadable(SystemError)
    }

    /// Reads the manifest file as it is now.
    func readManifestFile() -> ManifestFile {
        guard io.exists(manifestPath) else { return .absent }
        do {
            return .bytes(try readManifestBytes())
        } catch {
            return .unreadable(error)
        }
    }

    /// Checks the manifest (`file`, as read before the directory was listed) against the segments
    /// listed, into `loaded`. Every segment it lists must be there; one that is not listed is accepted (a
    /// crash can come between creating a segment and listing it). A damaged or unreadable manifest is an
    /// error (a problem when verifying): without it a lost segment could not be told from one removed on
    /// purpose. A missing one is an error only when the store must have one (``requiresManifest``).
    ///
    /// A read-only open or `verify` reads the manifest again when a segment it lists is not in the
    /// listing: one the manifest no longer lists was deleted on purpose by a writer's compaction after
    /// the first read, and is returned as a change (the load starts again); one it still lists is lost,
    /// since a writer lists a segment out before it deletes it and never lists it again.
    func checkManifest(_ file: ManifestFile, against numbers: [UInt32], into loaded: inout Loaded)
        throws(LogStoreError) -> StoreChange?
    {
        let path = manifestPath
        let bytes: [UInt8]
        switch file {
        case .absent:
            if requiresManifest, !numbers.isEmpty {
                try fail(
                    path, nil, "the segment manifest is missing, so lost segments cannot be detected",
                    .corruptManifest, &loaded)
            }
            return nil
        case .unreadable(let error):
            // Not a regular file, or unreadable: an error, which `verify` lists and goes on.
            guard collectsProblems else {
                throw LogStoreError(.ioError, "cannot read the segment manifest", file: path, underlying: error)
            }
            try fail(path, nil, "cannot read the segment manifest: \(error)", .ioError, &loaded)
            return nil
        case .bytes(let read):
            bytes = read
        }
        let manifest: SegmentManifest
        switch bytes.withUnsafeBytes({ SegmentManifest.decode($0) }) {
        case .success(let decoded):
            manifest = decoded
        case .failure(let problem):
            let damage = Self.manifestDamage(problem, path: path)
            try fail(path, damage.offset, damage.message, damage.code, &loaded)
            return nil
        }
        loaded.manifest = manifest
        loaded.cleanClose = manifest.cleanClose
        loaded.reservedIDs = max(loaded.reservedIDs, manifest.reservedIDs)
        let present = Set(numbers)
        var missing = manifest.segments.filter { !present.contains($0) }
        if !missing.isEmpty, tracksChanges {
            guard case .bytes(let again) = readManifestFile(),
                case .success(let current) = again.withUnsafeBytes({ SegmentManifest.decode($0) })
            else {
                return StoreChange("the segment manifest changed while the store was read", file: path)
            }
            let stillListed = Set(current.segments)
            let removed = missing.filter { !stillListed.contains($0) }
            missing.removeAll { !stillListed.contains($0) }
            if missing.isEmpty, let first = removed.first {
                return StoreChange(
                    "segment \(LogFormat.segmentFileName(first)) was deleted (by a writer's compaction) while the "
                        + "store was read", file: directory + "/" + LogFormat.segmentFileName(first))
            }
        }
        if !missing.isEmpty {
            loaded.missingSegments = missing
            let names = missing.map(LogFormat.segmentFileName).joined(separator: ", ")
            try fail(path, nil, "segment(s) listed in the manifest are missing: \(names)", .missingSegment, &loaded)
        }
        return nil
    }

    /// The error for a manifest at `path` whose bytes fail its checks with `problem`.
    static func manifestDamage(_ problem: SegmentManifest.Problem, path: String) -> LogStoreError {
        LogStoreError(
            problem.isUnsupportedVersion ? .unsupportedVersion : .corruptManifest,
            problem.reason + "; lost segments cannot be detected, so it is left as it is", file: path,
            offset: problem.offset)
    }

    /// The error an open would meet loading the manifest as it is now (damaged, or unreadable), or nil;
    /// what an open for writing checks before it writes anything, the lock file included.
    func manifestDamageBeforeLoading() -> LogStoreError? {
        switch readManifestFile() {
        case .absent:
            return nil
        case .unreadable(let error):
            return LogStoreError(.ioError, "cannot read the segment manifest", file: manifestPath, underlying: error)
        case .bytes(let bytes):
            guard case .failure(let problem) = bytes.withUnsafeBytes({ SegmentManifest.decode($0) }) else { return nil }
            return Self.manifestDamage(problem, path: manifestPath)
        }
    }

    /// After a clean close the append segment must be the one recorded (none when 0 was recorded).
    func checkCleanClose(appendSegment: UInt32?, into loaded: inout Loaded) throws(LogStoreError) {
        guard let clean = loaded.cleanClose, clean.appendSegment != (appendSegment ?? 0) else { return }
        guard cleanCloseStillRecorded(clean) else {
            loaded.cleanClose = nil
            return
        }
        let recorded = clean.appendSegment == 0 ? "none" : LogFormat.segmentFileName(clean.appendSegment)
        let found = appendSegment.map(LogFormat.segmentFileName) ?? "none"
        try fail(
            manifestPath, nil,
            "the store was closed cleanly with append segment \(recorded), but the newest writer segment is \(found)",
            .corruptManifest, &loaded)
        loaded.cleanClose = nil
    }

    /// Whether the manifest still holds the clean-close record `clean`. Always true for an open for
    /// writing (it holds the lock); a read-only open or `verify` may run while a writer opens the store,
    /// and a writer removes the record before it writes anything.
    func cleanCloseStillRecorded(_ clean: SegmentManifest.CleanClose) -> Bool {
        if case .writable = mode { return true }
        guard let bytes = try? readManifestBytes(),
            case .success(let manifest) = bytes.withUnsafeBytes({ SegmentManifest.decode($0) })
        else { return false }
        return manifest.cleanClose == clean
    }

    /// What is wrong with an append segment of `size` bytes that had `recorded` bytes at the clean close.
    static func sizeChange(_ size: UInt64, _ recorded: UInt64) -> String {
        if size < recorded {
            return "segment is \(size) bytes but had \(recorded) when the store was closed cleanly: "
                + "its last \(recorded - size) bytes are lost"
        }
        return "segment is \(size) bytes but had \(recorded) when the store was closed cleanly: "
            + "\(size - recorded) bytes were added after the clean close"
    }

    private func readManifestBytes() throws(SystemError) -> [UInt8] {
        let path = manifestPath
        let fd = try io.open(path, flags: O_RDONLY | O_CLOEXEC)
        defer { io.close(fd) }
        let size = try io.size(fd, path: path)
        return try io.read(fd, count: Int(min(size, 1 << 30)), at: 0, path: path)
    }
}
