@_spi(Engine) import LogStoreFormat
@_spi(Engine) import LogStoreSystem

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Where a checkpoint or backup goes, and the directories beside it that it uses: checked before
/// anything is written (never into or around the store, never through a symbolic link or onto another
/// file system than its parent's), locked against a second run to the same place, and cleaned of what an
/// interrupted run left (only a store's files are ever deleted).
struct CheckpointDestination {
    let destination: String
    let parent: String
    /// Where a checkpoint is made before it takes the destination's name.
    let checkpointStaging: String
    /// Where a backup is made before it takes the destination's place.
    let backupStaging: String
    /// Where a backup moves the backup it replaces, until it is removed.
    let previous: String
    /// Where a salvage writes its store before it takes the destination's name.
    let salvageStaging: String
    let io: SystemIO

    /// Checks the destination's path against the store's directory.
    /// - throws: ``LogStoreError`` `invalidArgument` naming the path when it is empty, ends in `.` or `..`,
    ///   is a symbolic link, a mount point, or the store's directory, inside it, or holding it.
    init(_ path: String, store: String, io: SystemIO) throws(LogStoreError) {
        self.io = io
        var trimmed = path
        while trimmed.count > 1 && trimmed.hasSuffix("/") { trimmed.removeLast() }
        let name = trimmed.split(separator: "/", omittingEmptySubsequences: false).last.map(String.init) ?? ""
        guard !name.isEmpty, name != ".", name != ".." else {
            throw LogStoreError(.invalidArgument, "the destination must name a new or empty folder", file: path)
        }
        destination = trimmed
        if let slash = trimmed.lastIndex(of: "/") {
            parent = slash == trimmed.startIndex ? "/" : String(trimmed[..<slash])
        } else {
            parent = "."
        }
        checkpointStaging = trimmed + ".checkpoint-partial"
        backupStaging = trimmed + ".backup-partial"
        previous = trimmed + ".backup-previous"
        salvageStaging = trimmed + ".salvage-partial"
        guard let parentInfo = Self.status(parent, following: true), parentInfo.isDirectory else {
            throw LogStoreError(.invalidArgument, "the destination's parent folder does not exist", file: parent)
        }
        if let info = Self.status(trimmed, following: false) {
            guard !info.isSymbolicLink else {
                throw LogStoreError(
                    .invalidArgument, "the destination is a symbolic link; give the folder it points to", file: path)
            }
            guard info.device == parentInfo.device else {
                throw LogStoreError(
                    .invalidArgument, "the destination is a mount point; give a folder inside it", file: path)
            }
        }
        guard let storeInfo = Self.status(store, following: true), storeInfo.isDirectory else {
            throw LogStoreError(.invalidArgument, "cannot find the store's folder", file: store)
        }
        let storeID = Identity(storeInfo)
        let storeAncestors = Self.ancestors(of: store)
        // The destination's parent chain must not pass through the store's folder (the copy would be inside
        // it); the destination and the folders beside it must be neither the store's folder nor hold it.
        // Compared by device and inode, so a second path to a folder (a bind mount, a case-insensitive
        // file system, a symbolic link) is no way around it.
        guard !Self.ancestors(of: parent).contains(storeID) else {
            throw LogStoreError(.invalidArgument, "the destination is inside the store's folder", file: path)
        }
        for sibling in [trimmed, checkpointStaging, backupStaging, previous, salvageStaging] {
            guard let info = Self.status(sibling, following: false) else { continue }
            guard !info.isSymbolicLink else {
                throw LogStoreError(
                    .invalidArgument, "a symbolic link is where the copy would go; give the folder it points to",
                    file: sibling)
            }
            if storeAncestors.contains(Identity(info)) {
                throw LogStoreError(
                    .invalidArgument,
                    "the destination (or a folder beside it that a copy uses) is the store's "
                        + "folder or holds it", file: sibling)
            }
        }
    }

    /// A file's device and inode: what makes two paths one file.
    struct Identity: Hashable {
        let device: UInt64
        let inode: UInt64
        init(_ status: Status) {
            device = status.device
            inode = status.inode
        }
    }

    /// The identities of `path` and of every folder above it, up to the root.
    static func ancestors(of path: String) -> Set<Identity> {
        var found: Set<Identity> = []
        var current = path
        for _ in 0..<4_096 {
            guard let info = status(current, following: true) else { break }
            guard found.insert(Identity(info)).inserted else { break }
            current += "/.."
        }
        return found
    }

    /// Takes an exclusive lock on `DEST.lock` (created beside the destination, never removed: removing a
    /// lock file races with a second run opening it) for the run, so that two checkpoints or backups to
    /// one destination never overlap; `flock(2)`, or a POSIX record lock where the file system has no
    /// `flock` (some network file systems).
    /// - throws: ``LogStoreError`` `locked` when another checkpoint or backup to the destination is running.
    func lock() throws(LogStoreError) -> FolderLock {
        try Self.lockFile(destination + ".lock", what: "another checkpoint or backup to this destination is running")
    }

    /// Takes an exclusive lock on the file at `path` (created when missing, never removed), `flock(2)` or a
    /// POSIX record lock where the file system has no `flock`.
    /// - throws: ``LogStoreError`` `locked` (saying `what`) when another holds it, `ioError`.
    static func lockFile(_ path: String, what: String) throws(LogStoreError) -> FolderLock {
        let fd = path.withCString { open($0, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0o644) }
        guard fd >= 0 else {
            throw LogStoreError(
                .ioError, "cannot open the lock file", file: path,
                underlying: SystemError(call: "open", errno: errno, path: path))
        }
        if flock(fd, LOCK_EX | LOCK_NB) == 0 { return FolderLock(fd: fd, record: false) }
        var code = errno
        if code != EWOULDBLOCK {
            var range = flock()
            range.l_type = Int16(F_WRLCK)
            range.l_whence = Int16(SEEK_SET)
            if fcntl(fd, F_SETLK, &range) == 0 { return FolderLock(fd: fd, record: true) }
            code = errno == EAGAIN || errno == EACCES ? EWOULDBLOCK : errno
        }
        close(fd)
        if code == EWOULDBLOCK { throw LogStoreError(.locked, what, file: path) }
        throw LogStoreError(
            .ioError, "cannot lock the lock file", file: path,
            underlying: SystemError(call: "flock", errno: code, path: path))
    }

    /// Locks the store in the destination (its `LOCK` file, as a writable open takes it) while a backup
    /// replaces it, so that a process that has that backup open for writing is never moved away under it.
    /// - throws: ``LogStoreError`` `locked` when a process has it open for writing.
    func lockDestinationStore() throws(LogStoreError) -> DirectoryLock? {
        guard io.exists(destination + "/" + LogFormat.lockFileName) else { return nil }
        return try DirectoryLock(directory: destination, io: io)
    }

    /// Renames the finished copy in `staging` to the destination and syncs the parent folder.
    /// - throws: ``LogStoreError`` `ioError` saying `what` could not be put in place.
    func publish(_ staging: String, what: String) throws(LogStoreError) {
        do {
            try io.rename(staging, to: destination)
            try io.syncDirectory(parent)
        } catch {
            throw LogStoreError(.ioError, "cannot put the \(what) in place", file: destination, underlying: error)
        }
    }

    /// Whether the destination is missing or an empty folder.
    func isFresh() throws(LogStoreError) -> Bool {
        guard io.exists(destination) else { return true }
        guard io.isDirectory(destination) else { return false }
        do {
            return try io.listDirectory(destination).isEmpty
        } catch {
            throw LogStoreError(.ioError, "cannot list the destination", file: destination, underlying: error)
        }
    }

    /// Whether `directory` holds a complete copy: a manifest that reads, with a clean-close record, every
    /// segment it lists (the append segment of the recorded size) and every dictionary it records.
    func isComplete(_ directory: String) -> Bool {
        guard let manifest = Self.manifest(in: directory, io: io), let clean = manifest.cleanClose else {
            return false
        }
        for number in manifest.segments {
            guard let info = Self.status(directory + "/" + LogFormat.segmentFileName(number), following: false),
                info.isRegular
            else { return false }
            if number == clean.appendSegment && info.size != clean.appendSize { return false }
        }
        return (manifest.dictionaries ?? []).allSatisfy {
            io.exists(directory + "/" + DictionaryFile.fileName($0.id))
        }
    }

    /// Removes what an interrupted run left at `path`, after checking that it holds nothing but a store's
    /// files (a folder that is not ours is refused, never emptied).
    func removeLeftover(_ path: String) throws(LogStoreError) {
        guard io.exists(path) else { return }
        do {
            guard io.isDirectory(path), try io.listDirectory(path).allSatisfy(Self.isStoreFileName) else {
                throw LogStoreError(
                    .invalidArgument, "a file or folder that is not a leftover checkpoint is in the way", file: path)
            }
            try io.removeDirectory(path)
        } catch let error as LogStoreError {
            throw error
        } catch {
            throw LogStoreError(.ioError, "cannot remove a leftover checkpoint folder", file: path, underlying: error)
        }
    }

    /// Removes the backup a backup replaced: its store files; anything else (a user's file, a folder) is
    /// left, with the folder. Returns the names left (empty when the folder is gone).
    func removePrevious() -> [String] {
        guard let info = Self.status(previous, following: false), info.isDirectory,
            let names = try? io.listDirectory(previous)
        else { return [] }
        var left: [String] = []
        // The identity file last: until the folder is empty, what is left is still known as this store's
        // backup, so a run that a crash cut short here is finished by the next.
        let ordered = names.filter { $0 != StoreIdentity.fileName } + names.filter { $0 == StoreIdentity.fileName }
        for name in ordered {
            if Self.isStoreFileName(name), (try? io.unlink(previous + "/" + name)) != nil { continue }
            left.append(name)
        }
        if left.isEmpty, (try? io.removeDirectory(previous)) != nil { return [] }
        return left
    }

    /// The names in the destination that are not a store's (a backup holding them is not only a backup).
    func foreignNames() throws(LogStoreError) -> [String] {
        do {
            return try io.listDirectory(destination).filter { !Self.isStoreFileName($0) }
        } catch {
            throw LogStoreError(.ioError, "cannot list the destination", file: destination, underlying: error)
        }
    }

    /// The segment manifest of the store in `directory`, nil when it is missing, unreadable or damaged.
    static func manifest(in directory: String, io: SystemIO) -> SegmentManifest? {
        guard let bytes = try? io.readWholeFile(directory + "/" + SegmentManifest.fileName) else { return nil }
        return bytes.withUnsafeBytes { raw in
            if case .success(let manifest) = SegmentManifest.decode(raw) { return manifest }
            return nil
        }
    }

    /// Whether `name` is one a store (or a copy of one being made) holds: what a leftover may hold. Exact
    /// patterns: `STORE`, `SEGMENTS`, `LOCK`, a segment, hint or dictionary file (ten digits), a torn-tail
    /// side file of a segment, an index file (`index-` and eight hexadecimal digits), and any of them
    /// with `.writing` after it.
    static func isStoreFileName(_ name: String) -> Bool {
        if name.hasSuffix(LogFormat.writingSuffix) {
            return isStoreFileName(String(name.dropLast(LogFormat.writingSuffix.count)))
        }
        if name == StoreIdentity.fileName || name == SegmentManifest.fileName || name == "LOCK" { return true }
        if LogFormat.segmentNumber(fromFileName: name) != nil || DictionaryFile.id(fromFileName: name) != nil {
            return true
        }
        let hintSuffix = "." + HintFile.fileExtension
        if name.hasSuffix(hintSuffix),
            LogFormat.segmentNumber(fromFileName: name.dropLast(hintSuffix.count) + "." + LogFormat.segmentExtension)
                != nil
        {
            return true
        }
        if let torn = name.range(of: ".torn-"),
            LogFormat.segmentNumber(fromFileName: String(name[..<torn.lowerBound])) != nil
        {
            return true
        }
        if name.hasPrefix("index-"), name.hasSuffix(".lsindex") {
            let hex = name.dropFirst("index-".count).dropLast(".lsindex".count)
            return hex.count == 8 && hex.allSatisfy(\.isHexDigit)
        }
        return false
    }

    struct Status {
        var device: UInt64
        var inode: UInt64
        var size: UInt64
        var isDirectory: Bool
        var isRegular: Bool
        var isSymbolicLink: Bool

        init(_ info: stat) {
            let type = info.st_mode & S_IFMT
            device = UInt64(info.st_dev)
            inode = UInt64(info.st_ino)
            size = UInt64(info.st_size)
            isDirectory = type == S_IFDIR
            isRegular = type == S_IFREG
            isSymbolicLink = type == S_IFLNK
        }
    }

    /// `stat(2)` (or `lstat(2)` when not `following` symbolic links), nil when the path does not exist.
    static func status(_ path: String, following: Bool) -> Status? {
        var info = stat()
        guard (following ? stat(path, &info) : lstat(path, &info)) == 0 else { return nil }
        return Status(info)
    }

    /// `fstat(2)` of an open file, nil when it fails.
    static func status(of fd: Int32) -> Status? {
        var info = stat()
        guard fstat(fd, &info) == 0 else { return nil }
        return Status(info)
    }

    /// The path with every symbolic link, `.` and `..` resolved (`realpath(3)`), nil when it does not exist.
    static func resolved(_ path: String) -> String? {
        guard let pointer = realpath(path, nil) else { return nil }
        defer { free(pointer) }
        return String(cString: pointer)
    }
}

/// An exclusive lock on a file (`flock`, or a POSIX record lock), released when this ends (closing the
/// descriptor releases either).
final class FolderLock {
    private let fd: Int32
    private let record: Bool
    init(fd: Int32, record: Bool) {
        self.fd = fd
        self.record = record
    }
    deinit {
        if !record { flock(fd, LOCK_UN) }
        close(fd)
    }
}
