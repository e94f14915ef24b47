@_spi(Engine) import LogStoreFormat
@_spi(Engine) import LogStoreSystem

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// The folder `history` inside a store's directory, which holds its retained moments: one folder per
/// moment (`history/NAME`, a checkpoint of the store whose sealed segments are hard links to the store's
/// files) with a `MOMENT` file saying its name, commit and creation time.
///
/// A moment is made in `NAME.partial` and renamed into place once synced; it is released by renaming it to
/// `NAME.releasing` before its files are removed, so a crash never leaves half a moment under its name.
/// Leftovers of either are removed by the next retain or release.
struct HistoryFolder {
    static let folderName = "history"
    static let momentFileName = "MOMENT"
    static let partialSuffix = ".partial"
    static let releasingSuffix = ".releasing"
    /// A replica's hold folder (``Store/replicate(to:)``): a hard link of the segment the replica has a part
    /// of, which keeps compaction away from it and from every segment numbered above it.
    static let holdSuffix = ".hold"
    /// The first line of a `MOMENT` file.
    static let momentFileHeader = "LogStore retained moment 1"

    let store: String
    let io: SystemIO
    var path: String { store + "/" + Self.folderName }

    func folder(_ name: String) -> String { path + "/" + name }

    /// Checks a moment's name: 1–128 characters of letters, digits, `-`, `_` and `.`, not starting with `.`
    /// and not ending in a suffix the folder uses.
    /// - throws: ``LogStoreError`` `invalidArgument` naming the rule broken.
    static func checkName(_ name: String) throws(LogStoreError) {
        let allowed = name.utf8.allSatisfy { byte in
            (byte >= 0x30 && byte <= 0x39) || (byte >= 0x41 && byte <= 0x5A) || (byte >= 0x61 && byte <= 0x7A)
                || byte == 0x2D || byte == 0x5F || byte == 0x2E
        }
        guard (1...128).contains(name.utf8.count), allowed, !name.hasPrefix("."),
            !name.hasSuffix(partialSuffix), !name.hasSuffix(releasingSuffix), !name.hasSuffix(holdSuffix),
            name != "LOCK"
        else {
            throw LogStoreError(
                .invalidArgument,
                "a retained moment's name is 1–128 letters, digits, '-', '_' or '.', not starting with '.' "
                    + "(got \"\(name)\")")
        }
    }

    /// Creates the folder when it is missing (syncing the store's directory).
    func create() throws(LogStoreError) {
        guard !io.isDirectory(path) else { return }
        do {
            try io.makeNewDirectory(path)
            try io.syncDirectory(store)
        } catch  where error.errno == EEXIST {
            return
        } catch {
            throw LogStoreError(.ioError, "cannot create the history folder", file: path, underlying: error)
        }
    }

    /// Runs `body` holding an exclusive `flock` of the store's folder itself (no file is made for it; another
    /// process of this store takes the same lock): a replica pass links the segment it will have a part of
    /// and takes the store's state under it, and a compaction pass checks the holds again and installs its
    /// outputs and deletes its inputs under it, so a compaction either deleted the segment before the pass
    /// looked (the pass then takes the state again) or sees the hold and drops itself.
    /// It waits for the lock at most `patience` (another pass holds it for milliseconds; a process outside
    /// LogStore could hold it for ever).
    /// - parameter required: throw when the file system cannot lock the folder (some network file systems);
    ///   else `body` then runs unlocked.
    /// - throws: ``LogStoreError`` `locked` when the folder stayed locked for `patience`; `ioError` when
    ///   `required` and the folder cannot be locked; what `body` throws.
    func withHoldLock<Result>(
        required: Bool, patience: Duration = .seconds(10), _ body: () throws(LogStoreError) -> Result
    ) throws(LogStoreError) -> Result {
        let fd = store.withCString { open($0, O_RDONLY | O_DIRECTORY | O_CLOEXEC) }
        var code = fd >= 0 ? 0 : errno
        var locked = false
        if fd >= 0 {
            let deadline = ContinuousClock.now + patience
            var pause = Duration.milliseconds(1)
            while true {
                if flock(fd, LOCK_EX | LOCK_NB) == 0 {
                    locked = true
                    break
                }
                code = errno
                if code == EINTR { continue }
                guard code == EWOULDBLOCK || code == EAGAIN else { break }
                guard ContinuousClock.now < deadline else {
                    close(fd)
                    throw LogStoreError(
                        .locked,
                        "the store's folder stayed locked for \(patience) (a replica pass or compaction, or a process "
                            + "outside LogStore holding flock on it)", file: store)
                }
                SystemClock.sleep(pause)
                pause = min(pause * 2, .milliseconds(50))
            }
        }
        defer {
            if fd >= 0 {
                if locked { flock(fd, LOCK_UN) }
                close(fd)
            }
        }
        if required, !locked {
            throw LogStoreError(
                .ioError, "cannot lock the store's folder (replicas need flock on the store's file system)",
                file: store, underlying: SystemError(call: fd >= 0 ? "flock" : "open", errno: code, path: store))
        }
        return try body()
    }

    /// An exclusive lock on `history/LOCK` for one retain or release at a time, in this process or another.
    /// - throws: ``LogStoreError`` `locked` when another one runs.
    func lock() throws(LogStoreError) -> FolderLock {
        try CheckpointDestination.lockFile(path + "/LOCK", what: "another retain or release of a moment is running")
    }

    /// The `MOMENT` file's bytes for `moment`.
    static func momentFile(name: String, sequence: UInt64, created: UInt64) -> [UInt8] {
        let body = "\(momentFileHeader)\nname \(name)\nsequence \(sequence)\ncreated \(created)\n"
        let checksum = Array(body.utf8).withUnsafeBytes { Checksum.xxh3($0) }
        return Array((body + "checksum \(String(checksum, radix: 16))\n").utf8)
    }

    /// Reads a `MOMENT` file: name, sequence, creation time; nil when it is not one (damaged, another
    /// version, its checksum wrong).
    static func readMomentFile(_ bytes: [UInt8]) -> (name: String, sequence: UInt64, created: UInt64)? {
        guard let text = String(validating: bytes, as: UTF8.self), text.hasSuffix("\n") else { return nil }
        let lines = text.dropLast().split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        guard lines.count == 5, lines[0] == momentFileHeader, lines[4].hasPrefix("checksum ") else { return nil }
        let body = lines[0..<4].joined(separator: "\n") + "\n"
        let checksum = Array(body.utf8).withUnsafeBytes { Checksum.xxh3($0) }
        guard String(checksum, radix: 16) == lines[4].dropFirst("checksum ".count) else { return nil }
        func field(_ line: String, _ key: String) -> String? {
            line.hasPrefix(key + " ") ? String(line.dropFirst(key.count + 1)) : nil
        }
        guard let name = field(lines[1], "name"), let sequence = field(lines[2], "sequence").flatMap({ UInt64($0) }),
            let created = field(lines[3], "created").flatMap({ UInt64($0) })
        else { return nil }
        return (name, sequence, created)
    }

    /// The moments in the folder (those whose `MOMENT` file reads and names the folder), oldest first, with
    /// what each costs beside the store: files whose inode none of the store's own files has.
    /// - parameter garbage: the garbage bytes of each of the store's segments (by number), for what the
    ///   moments hold in the store.
    func usage(garbage: [UInt32: UInt64] = [:]) throws(LogStoreError) -> HistoryUsage {
        guard io.isDirectory(path) else { return HistoryUsage(moments: [], bytes: 0) }
        let names: [String]
        do {
            names = try io.listDirectory(path)
        } catch {
            throw LogStoreError(.ioError, "cannot list the history folder", file: path, underlying: error)
        }
        var storeFiles: Set<CheckpointDestination.Identity> = []
        var storeSegments: [CheckpointDestination.Identity: UInt32] = [:]
        if let own = try? io.listDirectory(store) {
            for name in own {
                if let info = CheckpointDestination.status(store + "/" + name, following: false), info.isRegular {
                    storeFiles.insert(CheckpointDestination.Identity(info))
                    if let number = LogFormat.segmentNumber(fromFileName: name) {
                        storeSegments[CheckpointDestination.Identity(info)] = number
                    }
                }
            }
        }
        var heldByAny: Set<UInt32> = []
        var moments: [RetainedMoment] = []
        var counted: Set<CheckpointDestination.Identity> = []
        var total: UInt64 = 0
        for name in names where !name.hasSuffix(Self.partialSuffix) && !name.hasSuffix(Self.releasingSuffix) {
            let folder = folder(name)
            guard io.isDirectory(folder), let recorded = moment(named: name), let files = try? io.listDirectory(folder)
            else { continue }
            var moment = RetainedMoment(
                name: name, sequence: recorded.sequence, createdMilliseconds: recorded.created, segments: 0, bytes: 0,
                bytesNotInStore: 0)
            for file in files where file != Self.momentFileName {
                guard let info = CheckpointDestination.status(folder + "/" + file, following: false), info.isRegular
                else { continue }
                if LogFormat.segmentNumber(fromFileName: file) != nil { moment.segments += 1 }
                moment.bytes += info.size
                let identity = CheckpointDestination.Identity(info)
                if let number = storeSegments[identity] {
                    moment.garbageBytesHeld += garbage[number] ?? 0
                    heldByAny.insert(number)
                }
                guard !storeFiles.contains(identity) else { continue }
                moment.bytesNotInStore += info.size
                if counted.insert(identity).inserted { total += info.size }
            }
            moments.append(moment)
        }
        moments.sort { ($0.sequence, $0.createdMilliseconds, $0.name) < ($1.sequence, $1.createdMilliseconds, $1.name) }
        let held = heldByAny.reduce(UInt64(0)) { $0 + (garbage[$1] ?? 0) }
        var usage = HistoryUsage(moments: moments, bytes: total, garbageBytesHeld: held)
        usage.replicaHolds = replicaHolds(names: names, storeSegments: Array(storeSegments.values))
        return usage
    }

    /// The replicas' holds among the history folder's `names`, with what each keeps of `storeSegments`.
    private func replicaHolds(names: [String], storeSegments: [UInt32]) -> [ReplicaHold] {
        var holds: [ReplicaHold] = []
        for name in names.sorted() where name.hasSuffix(Self.holdSuffix) {
            guard let links = try? io.listDirectory(folder(name)),
                let oldest = links.compactMap(LogFormat.segmentNumber(fromFileName:)).min()
            else { continue }
            var hold = ReplicaHold(
                name: name, oldestSegment: oldest, segments: 0, bytes: 0,
                changedMilliseconds: Self.modificationMilliseconds(folder(name)))
            for number in storeSegments where number >= oldest {
                hold.segments += 1
                hold.bytes +=
                    CheckpointDestination.status(
                        store + "/" + LogFormat.segmentFileName(number), following: false)?.size ?? 0
            }
            holds.append(hold)
        }
        return holds
    }

    /// The modification time of `path` in milliseconds since 1970 (0 when it cannot be read).
    static func modificationMilliseconds(_ path: String) -> UInt64 {
        var info = stat()
        guard stat(path, &info) == 0 else { return 0 }
        #if canImport(Darwin)
            let time = info.st_mtimespec
        #else
            let time = info.st_mtim
        #endif
        return UInt64(max(0, time.tv_sec)) * 1_000 + UInt64(max(0, time.tv_nsec)) / 1_000_000
    }

    /// Removes the replica hold `name` (its links, then the folder).
    /// - throws: ``LogStoreError`` `notFound` when there is no such hold, `ioError` naming the file.
    func removeReplicaHold(_ name: String) throws(LogStoreError) {
        let hold = folder(name)
        guard name.hasSuffix(Self.holdSuffix), !name.contains("/"), !name.hasPrefix("."), io.isDirectory(hold) else {
            throw LogStoreError(.notFound, "no replica hold is named \"\(name)\"", file: hold)
        }
        try withHoldLock(required: false) { () throws(LogStoreError) in
            do {
                for link in try io.listDirectory(hold) { try io.unlink(hold + "/" + link) }
                try io.removeDirectory(hold)
                try io.syncDirectory(path)
            } catch {
                throw LogStoreError(.ioError, "cannot remove the replica hold", file: hold, underlying: error)
            }
        }
    }

    /// The store's segments that compaction leaves alone: those a retained moment holds (whose file is also
    /// a file of a moment: the same device and inode), unless `includingMoments` is false, and those a
    /// replica holds (every segment numbered as or above the lowest segment named in a replica's hold folder:
    /// the one the replica has a part of, and every segment the store made since, which the replica has not
    /// yet received). Empty when there is no history folder.
    func heldSegments(includingMoments: Bool = true) -> Set<UInt32> {
        guard io.isDirectory(path), let folders = try? io.listDirectory(path) else { return [] }
        var held: Set<CheckpointDestination.Identity> = []
        var threshold = UInt32.max
        for folder in folders {
            let isHold = folder.hasSuffix(Self.holdSuffix)
            // A `.partial` or `.releasing` folder is removed by the next retain or release.
            guard isHold || (includingMoments && moment(named: folder) != nil),
                let names = try? io.listDirectory(self.folder(folder))
            else { continue }
            for name in names {
                guard let number = LogFormat.segmentNumber(fromFileName: name) else { continue }
                if isHold {
                    threshold = min(threshold, number)
                } else if let info = CheckpointDestination.status(self.folder(folder) + "/" + name, following: false) {
                    held.insert(CheckpointDestination.Identity(info))
                }
            }
        }
        guard !held.isEmpty || threshold != .max, let names = try? io.listDirectory(store) else { return [] }
        var numbers: Set<UInt32> = []
        for name in names {
            guard let number = LogFormat.segmentNumber(fromFileName: name) else { continue }
            if number >= threshold {
                numbers.insert(number)
            } else if !held.isEmpty, let info = CheckpointDestination.status(store + "/" + name, following: false),
                held.contains(CheckpointDestination.Identity(info))
            {
                numbers.insert(number)
            }
        }
        return numbers
    }

    /// Removes what a retain or release cut short left: `NAME.partial` and `NAME.releasing` folders (only
    /// when they hold nothing but a store's files and a `MOMENT` file; another is left as it is).
    func removeLeftovers() {
        guard let names = try? io.listDirectory(path) else { return }
        for name in names where name.hasSuffix(Self.partialSuffix) || name.hasSuffix(Self.releasingSuffix) {
            try? removeMomentFolder(path + "/" + name)
        }
    }

    /// The moment `name` when its folder holds a `MOMENT` file that reads and names it.
    func moment(named name: String) -> (name: String, sequence: UInt64, created: UInt64)? {
        guard let bytes = try? io.readWholeFile(folder(name) + "/" + Self.momentFileName, limit: 4_096),
            let recorded = Self.readMomentFile(bytes), recorded.name == name
        else { return nil }
        return recorded
    }

    /// Checks that a moment's folder holds nothing but its `MOMENT` file and a store's files.
    /// - throws: ``LogStoreError`` `invalidArgument` naming the folder when it holds anything else, `ioError`.
    func checkMomentFolder(_ folder: String) throws(LogStoreError) {
        let names: [String]
        do {
            names = try io.listDirectory(folder)
        } catch {
            throw LogStoreError(.ioError, "cannot list the moment's folder", file: folder, underlying: error)
        }
        let foreign = names.filter { $0 != Self.momentFileName && !CheckpointDestination.isStoreFileName($0) }
        guard foreign.isEmpty else {
            throw LogStoreError(
                .invalidArgument,
                "the moment's folder holds files that are not a store's (" + foreign.prefix(3).joined(separator: ", ")
                    + "); move them away first", file: folder)
        }
    }

    /// Removes a moment's folder: its `MOMENT` file and store files, then the folder.
    /// - throws: ``LogStoreError`` `invalidArgument` when it holds anything else (left as it is), `ioError`.
    func removeMomentFolder(_ folder: String) throws(LogStoreError) {
        try checkMomentFolder(folder)
        do {
            let names = try io.listDirectory(folder)
            // The identity file and manifest last: until then what is left is still recognizably a store.
            let ordered =
                names.filter { $0 != StoreIdentity.fileName && $0 != SegmentManifest.fileName }
                + names.filter { $0 == SegmentManifest.fileName || $0 == StoreIdentity.fileName }
            for name in ordered { try io.unlink(folder + "/" + name) }
            try io.removeDirectory(folder)
            try io.syncDirectory(path)
        } catch {
            throw LogStoreError(.ioError, "cannot remove a moment's folder", file: folder, underlying: error)
        }
    }
}
