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
        guard let storePath = Self.resolved(store), let parentPath = Self.resolved(parent) else {
            throw LogStoreError(.invalidArgument, "cannot resolve the store's or the destination's path", file: path)
        }
        let full = (parentPath == "/" ? "" : parentPath) + "/" + name
        if full == storePath || full.hasPrefix(storePath + "/") || storePath.hasPrefix(full + "/") {
            throw LogStoreError(
                .invalidArgument, "the destination is the store's folder, inside it, or holds it", file: path)
        }
    }

    /// Takes an exclusive lock on the parent folder for the run (released when the descriptor is closed by
    /// the returned lock's end), so that two runs to destinations in one folder never overlap.
    /// - throws: ``LogStoreError`` `locked` when another checkpoint or backup into that folder is running.
    func lock() throws(LogStoreError) -> FolderLock {
        let fd = parent.withCString { open($0, O_RDONLY | O_DIRECTORY | O_CLOEXEC) }
        guard fd >= 0 else {
            throw LogStoreError(
                .ioError, "cannot open the destination's parent folder", file: parent,
                underlying: SystemError(call: "open", errno: errno, path: parent))
        }
        if flock(fd, LOCK_EX | LOCK_NB) != 0 {
            let code = errno
            close(fd)
            if code == EWOULDBLOCK {
                throw LogStoreError(
                    .locked, "another checkpoint or backup into this folder is running", file: destination)
            }
            throw LogStoreError(
                .ioError, "cannot lock the destination's parent folder", file: parent,
                underlying: SystemError(call: "flock", errno: code, path: parent))
        }
        return FolderLock(fd: fd)
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
        guard let bytes = readSmallFile(directory + "/" + SegmentManifest.fileName) else { return false }
        let decoded = bytes.withUnsafeBytes { raw -> SegmentManifest? in
            if case .success(let manifest) = SegmentManifest.decode(raw) { return manifest }
            return nil
        }
        guard let manifest = decoded, let clean = manifest.cleanClose else { return false }
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
    /// left, with the folder, and named in the returned note.
    func removePrevious() -> String? {
        guard let names = try? io.listDirectory(previous) else { return nil }
        var left: [String] = []
        for name in names {
            if Self.isStoreFileName(name), (try? io.unlink(previous + "/" + name)) != nil { continue }
            left.append(name)
        }
        if left.isEmpty, (try? io.removeDirectory(previous)) != nil { return nil }
        return "the previous backup was replaced, but \(previous) was left: it holds "
            + left.prefix(5).joined(separator: ", ") + (left.count > 5 ? ", …" : "")
    }

    func readSmallFile(_ path: String) -> [UInt8]? {
        guard let fd = try? io.open(path, flags: O_RDONLY | O_CLOEXEC) else { return nil }
        defer { io.close(fd) }
        guard let size = try? io.size(fd, path: path), size <= 1 << 24 else { return nil }
        return try? io.read(fd, count: Int(size), at: 0, path: path)
    }

    /// Whether `name` is one a store (or a copy of one being made) holds: what a leftover may hold.
    static func isStoreFileName(_ name: String) -> Bool {
        if name == StoreIdentity.fileName || name == SegmentManifest.fileName || name == "LOCK" { return true }
        if name.hasSuffix(LogFormat.writingSuffix) || name.contains(".seg.torn-") { return true }
        if name.hasPrefix("index-") && name.hasSuffix(".lsindex") { return true }
        return LogFormat.segmentNumber(fromFileName: name) != nil || DictionaryFile.id(fromFileName: name) != nil
            || name.hasSuffix("." + HintFile.fileExtension)
    }

    struct Status {
        var device: UInt64
        var inode: UInt64
        var size: UInt64
        var isDirectory: Bool
        var isRegular: Bool
        var isSymbolicLink: Bool
    }

    /// `stat(2)` (or `lstat(2)` when not `following` symbolic links), nil when the path does not exist.
    static func status(_ path: String, following: Bool) -> Status? {
        var info = stat()
        guard (following ? stat(path, &info) : lstat(path, &info)) == 0 else { return nil }
        let type = info.st_mode & S_IFMT
        return Status(
            device: UInt64(info.st_dev), inode: UInt64(info.st_ino), size: UInt64(info.st_size),
            isDirectory: type == S_IFDIR, isRegular: type == S_IFREG, isSymbolicLink: type == S_IFLNK)
    }

    /// The path with every symbolic link, `.` and `..` resolved (`realpath(3)`), nil when it does not exist.
    static func resolved(_ path: String) -> String? {
        guard let pointer = realpath(path, nil) else { return nil }
        defer { free(pointer) }
        return String(cString: pointer)
    }
}

/// An exclusive `flock` on a folder, released when this ends.
final class FolderLock {
    private let fd: Int32
    init(fd: Int32) { self.fd = fd }
    deinit {
        flock(fd, LOCK_UN)
        close(fd)
    }
}
