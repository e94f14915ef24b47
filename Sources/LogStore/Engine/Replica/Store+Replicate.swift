@_spi(Engine) import LogStoreFormat
@_spi(Engine) import LogStoreSystem

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Replicas: a second directory (another disk, a mounted remote path) kept up to date by shipping segments
/// (see `Documentation/Reliability.md`, "Replicas").
extension Store {
    /// Brings the replica in `destination` up to the store's newest commit, in place, or makes one there
    /// when it is missing or empty. Call it again and again (`logstore-tool replicate` does, every second by
    /// default): each pass ships only what the replica lacks — new segments whole, and the bytes the
    /// segment being written gained since.
    ///
    /// The replica changes as a store changes beside its writer, so a process may read it meanwhile (a
    /// read-only ``open(at:options:)``, a follower): it sees a store consistent at one commit, at most the
    /// pass before. To promote it after losing the store, stop replicating and open it for writing: it opens
    /// as a store after a crash (a tail that a pass cut short is cut) and goes on from its last commit.
    /// Afterwards it is a store of its own: a pass to it is refused.
    ///
    /// ```swift
    /// try store.replicate(to: "/mnt/other-disk/notes")   // again every second
    /// ```
    /// How far it lags: the commits since the pass began, that is the interval between passes plus a pass's
    /// time (sealed segments copied whole, then the new tail). Works on a store open read-only beside a writer
    /// after ``refresh()``.
    /// - throws: ``LogStoreError`` with code `invalidArgument` when `destination` is in, around or linked to the
    ///   store, or holds anything but a replica of this store (another store, a backup, files, a replica that
    ///   was opened for writing); `locked` when another pass to it runs or a process has it open for writing;
    ///   `closed`; `storeFailed`; or `ioError` (naming the file).
    @discardableResult
    public func replicate(to destination: String) throws(LogStoreError) -> ReplicationReport {
        try checkOpen()
        let target = try CheckpointDestination(destination, store: directory, io: io)
        let lock = try target.lock()
        defer { withExtendedLifetime(lock) {} }
        if try target.isFresh() {
            try target.removeLeftover(target.checkpointStaging)
            let staging = target.checkpointStaging
            do {
                try io.makeNewDirectory(staging)
                let identity = directory + "/" + StoreIdentity.fileName
                if io.exists(identity) {
                    try io.writeNewFile(staging + "/" + StoreIdentity.fileName, try io.readWholeFile(identity))
                }
            } catch {
                throw LogStoreError(.ioError, "cannot start the replica", file: staging, underlying: error)
            }
            var report = try ship(to: staging, for: target)
            try target.publish(staging, what: "replica")
            report.destination = target.destination
            return report
        }
        try requireCopyOfThisStore(target, kind: "replica", verb: "replicate")
        let destinationLock = try DirectoryLock(directory: target.destination, io: io)
        defer { withExtendedLifetime(destinationLock) {} }
        if let manifest = CheckpointDestination.manifest(in: target.destination, io: io), manifest.cleanClose != nil {
            throw LogStoreError(
                .invalidArgument,
                "the destination was closed by a writer (a promoted replica, or a backup): it is a store of its own; "
                    + "replicate into a new folder", file: target.destination)
        }
        try requireHold(for: target)
        return try ship(to: target.destination, for: target)
    }

    /// One pass into `folder` (the replica, or the staging folder of a new one): the state taken under the
    /// replica's hold, shipped, and the hold moved on to what the replica now has a part of.
    private func ship(to folder: String, for target: CheckpointDestination) throws(LogStoreError)
        -> ReplicationReport
    {
        let hold = try replicaHold(for: target)
        let source = try heldSource(hold)
        let report = try ReplicaWriter(io: io, storeDirectory: directory, replica: folder).update(from: source)
        releaseHold(hold, keeping: source)
        return report
    }

    /// Removes the hold a replica keeps on the store's compaction (one of ``HistoryUsage/replicaHolds``, by
    /// name): for a replica given up, which no longer receives passes. A later pass into that replica is
    /// refused (the store may have compacted what it had not received); make a new replica then.
    /// - throws: ``LogStoreError`` `readOnly` on a store open read-only, `notFound` when there is no such
    ///   hold, `closed`, `ioError`.
    public func forgetReplica(_ name: String) throws(LogStoreError) {
        try checkWritable()
        try HistoryFolder(store: directory, io: io).removeReplicaHold(name)
    }

    /// Checks that the hold the last pass left is there and holds every segment the replica has not received
    /// whole (it names no segment above the replica's newest): else the store may have compacted such a
    /// segment meanwhile, and the replica cannot be brought up to date through states some commit had.
    /// - throws: ``LogStoreError`` `invalidArgument` when it is missing (forgotten, removed, or the replica
    ///   reached by another path) or names only newer segments.
    private func requireHold(for target: CheckpointDestination) throws(LogStoreError) {
        let hold = holdPath(for: target)
        let newest = ((try? io.listDirectory(target.destination)) ?? []).compactMap(
            LogFormat.segmentNumber(fromFileName:)
        ).max()
        let oldestHeld = ((try? io.listDirectory(hold)) ?? []).compactMap(LogFormat.segmentNumber(fromFileName:)).min()
        guard let oldestHeld, oldestHeld <= newest ?? 0 else {
            throw LogStoreError(
                .invalidArgument,
                "the store keeps no hold for this replica (it was forgotten or removed, or the replica is reached by "
                    + "another path): the store may have compacted segments the replica has not received, so a pass "
                    + "cannot bring it up to date through states some commit had; make a new replica", file: hold)
        }
    }

    /// `history/replica-HASH.hold` in the store for the replica `target` (HASH: the XXH3-64 of its path with
    /// the parent folder's symbolic links resolved).
    private func holdPath(for target: CheckpointDestination) -> String {
        let place =
            (CheckpointDestination.resolved(target.parent) ?? target.parent) + "/"
            + String(target.destination.split(separator: "/").last ?? "")
        let hash = Array(place.utf8).withUnsafeBytes { Checksum.xxh3($0) }
        return HistoryFolder(store: directory, io: io).path + "/replica-" + String(hash, radix: 16)
            + HistoryFolder.holdSuffix
    }

    /// The folder `history/replica-HASH.hold` (created when missing) whose hard links keep compaction away
    /// from the segment a replica holds a part of: until the replica has it whole, the segment's later bytes
    /// must stay readable as the segment, or the replica could only be brought up to date through states no
    /// commit had (a reader of it would see newer records without older ones).
    private func replicaHold(for target: CheckpointDestination) throws(LogStoreError) -> String {
        let history = HistoryFolder(store: directory, io: io)
        try history.create()
        let hold = holdPath(for: target)
        guard !io.isDirectory(hold) else { return hold }
        do {
            try io.makeNewDirectory(hold)
            try io.syncDirectory(history.path)
        } catch  where error.errno == EEXIST {
            return hold
        } catch {
            throw LogStoreError(.ioError, "cannot create the replica's hold folder", file: hold, underlying: error)
        }
        return hold
    }

    /// The state a pass copies, taken after the store's two newest writer segments were linked into `hold`
    /// (a hold keeps compaction away from the segment it names and every segment numbered above it): the
    /// segment the replica will have a part of cannot be taken away before the next pass has it whole. When
    /// that segment left the store before the link (compacted away, on a read-only store whose view was
    /// older), or a newer segment started meanwhile, the state is taken again (a read-only store refreshed
    /// first).
    private func heldSource(_ hold: String) throws(LogStoreError) -> CheckpointSource {
        let history = HistoryFolder(store: directory, io: io)
        for _ in 0..<8 {
            // Under the lock a compaction pass installs under: one that has not deleted the segment by now
            // sees the hold before it does. A read-only store first moves on to the writer's newest state
            // (without taking the batches its next refresh returns), so that what it takes reflects every
            // compaction done before the hold.
            let source = try history.withHoldLock(required: true) { () throws(LogStoreError) -> CheckpointSource? in
                try follower?.catchUp(self)
                let newest = try readState { state in
                    state.segments.all.filter { !SegmentStatistics.isOutput($0.file) }.map(\.file.number).sorted()
                        .suffix(2)
                }
                for number in newest { try holdSegment(number, in: hold) }
                let source = Self.withoutUnstartedSegment(try checkpointSource())
                guard let growing = source.segments.first(where: { $0.mayGrow }) else { return source }
                let inStore = CheckpointDestination.status(
                    directory + "/" + LogFormat.segmentFileName(growing.file.number), following: false)
                let opened = CheckpointDestination.status(of: growing.file.fd)
                guard newest.contains(growing.file.number), let inStore, let opened,
                    CheckpointDestination.Identity(inStore) == CheckpointDestination.Identity(opened)
                else { return nil }
                return source
            }
            if let source { return source }
        }
        throw LogStoreError(
            .ioError, "the store kept starting new segments while a replica pass took its state", file: directory)
    }

    /// `source` without a newest segment its writer (another process) has created but not yet given its
    /// header: the replica must not list a segment that does not read as one. The segment before it is then
    /// the one the replica may have a part of.
    static func withoutUnstartedSegment(_ source: CheckpointSource) -> CheckpointSource {
        guard let last = source.segments.lastIndex(where: { $0.isAppend }),
            source.segments[last].size < UInt64(LogFormat.segmentHeaderSize)
        else { return source }
        var trimmed = source
        trimmed.segments.remove(at: last)
        if let previous = trimmed.segments.lastIndex(where: { !SegmentStatistics.isOutput($0.file) }) {
            let segment = trimmed.segments[previous]
            trimmed.segments[previous] = CheckpointSource.Segment(
                file: segment.file, size: segment.size, isAppend: true, mayGrow: true, hintUsable: false)
        }
        return trimmed
    }

    /// Links segment `number` into `hold` (nothing when it is there already, or gone from the store).
    private func holdSegment(_ number: UInt32, in hold: String) throws(LogStoreError) {
        let name = LogFormat.segmentFileName(number)
        guard !io.exists(hold + "/" + name) else { return }
        do {
            try io.link(directory + "/" + name, to: hold + "/" + name)
            try io.syncDirectory(hold)
        } catch  where error.errno == ENOENT || error.errno == EEXIST {
            return
        } catch {
            throw LogStoreError(
                .ioError, "cannot hold a segment for the replica", file: hold + "/" + name, underlying: error)
        }
    }

    /// Removes from `hold` every segment but the one the replica now has a part of (the segment being written
    /// in `source`; when none is, the newest writer segment), once that one is there: the hold then keeps it
    /// and every newer segment, which the replica has not yet received; what the replica has whole, compaction
    /// may take.
    private func releaseHold(_ hold: String, keeping source: CheckpointSource) {
        let growing =
            source.segments.first { $0.mayGrow }
            ?? source.segments.last { !SegmentStatistics.isOutput($0.file) }
        guard let keep = growing.map({ LogFormat.segmentFileName($0.file.number) }), io.exists(hold + "/" + keep),
            let names = try? io.listDirectory(hold)
        else { return }
        for name in names where name != keep && LogFormat.segmentNumber(fromFileName: name) != nil {
            try? io.unlink(hold + "/" + name)
        }
    }
}
