import CDirectoryExchange
@_spi(Engine) import LogStoreFormat

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// The one seam every file system call of a store goes through.
///
/// Each method wraps one C call, retries `EINTR`, and turns a failure into a ``SystemError``. When the
/// store was opened with a ``FaultInjector``, the injector may fail the call, shorten a write, or end
/// the process first; that is how tests reach ENOSPC, EIO, short writes and crashes at chosen points.
package struct SystemIO: Sendable {
    package let faults: FaultInjector?

    /// Makes the seam; the first one in a process also has file-size-limit signals ignored
    /// (``FileSizeLimitSignal``), so a write beyond `RLIMIT_FSIZE` fails with `EFBIG` instead.
    package init(faults: FaultInjector?) {
        self.faults = faults
        FileSizeLimitSignal.ignore()
    }

    func injected(
        _ operation: FaultInjector.Operation, _ call: String, _ path: String?,
        observed: () -> FaultInjector.Call? = { nil }
    ) throws(SystemError) -> FaultInjector.Fault? {
        guard let faults else { return nil }
        guard let fault = faults.fault(for: operation, path: path) ?? faults.observed(observed) else { return nil }
        switch fault {
        case .error(let code): throw SystemError(call: call, errno: code, path: path)
        case .crash where operation != .write: _exit(137)
        case .delay(let microseconds):
            usleep(UInt32(clamping: microseconds))
            return nil
        default: return fault
        }
    }

    /// `open(2)` of a regular file.
    ///
    /// Anything else at `path` (a FIFO, a device, a socket, a directory) is refused with a
    /// ``SystemError`` saying what it is: a store holds only regular files. The open itself does not
    /// wait (`O_NONBLOCK`, cleared again on a regular file), so a FIFO named like a store file cannot
    /// block it until some process writes to it.
    package func open(_ path: String, flags: Int32, mode: mode_t = 0o644) throws(SystemError) -> Int32 {
        _ = try injected(.open, "open", path) { .open(path: path, flags: flags) }
        while true {
            let fd = path.withCString { cOpen($0, flags | O_NONBLOCK, mode) }
            if fd >= 0 {
                try requireRegularFile(fd, path: path)
                return fd
            }
            if errno != EINTR { throw Self.openFailure(errno, path: path) }
        }
    }

    /// The error of an `open` of `path` that failed with `code`: for `ENOENT` where a symbolic link is
    /// (its target does not exist), a reason saying so, as the file is there but can never be opened.
    private static func openFailure(_ code: Int32, path: String) -> SystemError {
        var info = stat()
        guard code == ENOENT, lstat(path, &info) == 0, info.st_mode & S_IFMT == S_IFLNK else {
            return SystemError(call: "open", errno: code, path: path)
        }
        return SystemError(
            call: "open", errno: code, path: path, reason: "a symbolic link whose target does not exist")
    }

    /// Checks that `fd` (just opened) is a regular file and clears `O_NONBLOCK`; closes it and throws
    /// when it is not.
    private func requireRegularFile(_ fd: Int32, path: String) throws(SystemError) {
        var info = stat()
        if fstat(fd, &info) != 0 {
            let code = errno
            cClose(fd)
            throw SystemError(call: "fstat", errno: code, path: path)
        }
        let type = info.st_mode & S_IFMT
        guard type == S_IFREG else {
            cClose(fd)
            throw SystemError(
                call: "open", errno: EINVAL, path: path, reason: "not a regular file (\(fileTypeName(type)))")
        }
        let status = fcntl(fd, F_GETFL)
        if status >= 0 { _ = fcntl(fd, F_SETFL, status & ~O_NONBLOCK) }
    }

    /// `close(2)`; errors are ignored, as the descriptor is gone either way.
    package func close(_ fd: Int32) { _ = cClose(fd) }

    /// `pwrite(2)` of all of `bytes` at `offset`, looping over short writes.
    package func writeAll(_ fd: Int32, _ bytes: UnsafeRawBufferPointer, at offset: UInt64, path: String)
        throws(SystemError)
    {
        var written = 0
        while written < bytes.count {
            guard let base = bytes.baseAddress else { return }
            var chunk = bytes.count - written
            var crashAfter = false
            let remaining = UnsafeRawBufferPointer(rebasing: bytes[written...])
            let at = offset + UInt64(written)
            switch try injected(
                .write, "pwrite", path, observed: { .write(path: path, offset: at, bytes: Array(remaining)) })
            {
            case .shortWrite(let limit)?: chunk = min(chunk, max(0, limit))
            case .crash(let limit)?:
                chunk = min(chunk, max(0, limit))
                crashAfter = true
            default: break
            }
            let result = chunk == 0 ? 0 : pwrite(fd, base + written, chunk, off_t(offset) + off_t(written))
            if crashAfter { _exit(137) }
            if result < 0 {
                if errno == EINTR { continue }
                throw SystemError(call: "pwrite", errno: errno, path: path)
            }
            if result == 0 && chunk > 0 { throw SystemError(call: "pwrite", errno: EIO, path: path) }
            written += result
        }
    }

    /// `pread(2)` of exactly `count` bytes at `offset`; fewer at end of file.
    package func read(_ fd: Int32, count: Int, at offset: UInt64, path: String) throws(SystemError) -> [UInt8] {
        _ = try injected(.read, "pread", path)
        var result = [UInt8](repeating: 0, count: count)
        var done = 0
        while done < count {
            let got = result.withUnsafeMutableBytes { raw in
                pread(fd, raw.baseAddress! + done, count - done, off_t(offset) + off_t(done))
            }
            if got < 0 {
                if errno == EINTR { continue }
                throw SystemError(call: "pread", errno: errno, path: path)
            }
            if got == 0 { break }
            done += got
        }
        result.removeLast(count - done)
        return result
    }

    /// `pread(2)` into `buffer` from `offset` until it is full or the file ends; returns the bytes read.
    package func read(_ fd: Int32, into buffer: UnsafeMutableRawBufferPointer, at offset: UInt64, path: String)
        throws(SystemError) -> Int
    {
        _ = try injected(.read, "pread", path)
        guard let base = buffer.baseAddress else { return 0 }
        var done = 0
        while done < buffer.count {
            let got = pread(fd, base + done, buffer.count - done, off_t(offset) + off_t(done))
            if got < 0 {
                if errno == EINTR { continue }
                throw SystemError(call: "pread", errno: errno, path: path)
            }
            if got == 0 { break }
            done += got
        }
        return done
    }

    /// `pread(2)` into `buffer`, only to bring a region of a file into the page cache (see
    /// ``PageCacheFiller``): advisory, so a failure is ignored. Returns the bytes read (0 at end of file or
    /// on an error).
    package func prefetch(_ fd: Int32, into buffer: UnsafeMutableRawBufferPointer, at offset: UInt64) -> Int {
        guard let base = buffer.baseAddress else { return 0 }
        let got = pread(fd, base, buffer.count, off_t(offset))
        return max(got, 0)
    }

    /// `pwrite(2)` of `zeros` at `offset`, looping over short writes; false when it fails. Only a
    /// speed-up (``PageCacheFiller``): the caller just stops on failure.
    package func writeZeros(_ fd: Int32, _ zeros: UnsafeRawBufferPointer, at offset: UInt64) -> Bool {
        do {
            switch try injected(.zeroFill, "pwrite", nil) {
            case .crash?: _exit(137)
            case .shortWrite?: return false
            default: break
            }
        } catch {
            return false  // an injected error
        }
        guard let base = zeros.baseAddress else { return true }
        var written = 0
        while written < zeros.count {
            let result = pwrite(fd, base + written, zeros.count - written, off_t(offset) + off_t(written))
            if result < 0 && errno == EINTR { continue }
            if result <= 0 { return false }
            written += result
        }
        return true
    }

    /// `fdatasync(2)` (on Darwin, `fcntl(F_FULLFSYNC)`), making a file's data durable.
    package func syncData(_ fd: Int32, path: String) throws(SystemError) {
        _ = try injected(.sync, "fdatasync", path) { .syncFile(path: path) }
        #if canImport(Darwin)
            let result = fcntl(fd, F_FULLFSYNC)
        #else
            let result = fdatasync(fd)
        #endif
        if result != 0 { throw SystemError(call: "fdatasync", errno: errno, path: path) }
    }

    /// Starts writing `length` bytes at `offset` of `fd` back to the disk without waiting
    /// (`sync_file_range(2)` with `SYNC_FILE_RANGE_WRITE` on Linux; nothing elsewhere). Only a hint, so
    /// a later ``syncData(_:path:)`` waits for less: it promises nothing and never fails.
    package func startWriteback(_ fd: Int32, offset: UInt64, length: Int) {
        #if os(Linux)
            _ = Self.syncFileRange?(fd, Int64(offset), Int64(length), 2)  // 2: SYNC_FILE_RANGE_WRITE
        #endif
    }

    #if os(Linux)
        /// glibc's `sync_file_range`, which the Glibc module does not export (it needs `_GNU_SOURCE`),
        /// looked up once by name; nil when the C library has none. The cast is safe because the type
        /// is the function's C prototype, `int sync_file_range(int, off64_t, off64_t, unsigned int)`.
        private static let syncFileRange: (@convention(c) (Int32, Int64, Int64, UInt32) -> Int32)? = {
            guard let symbol = dlsym(UnsafeMutableRawPointer(bitPattern: 0), "sync_file_range") else { return nil }
            return unsafeBitCast(symbol, to: (@convention(c) (Int32, Int64, Int64, UInt32) -> Int32).self)
        }()
    #endif

    /// `fsync(2)` of a directory, making the creation, rename or removal of its entries durable.
    package func syncDirectory(_ path: String) throws(SystemError) {
        _ = try injected(.sync, "fsync", path) { .syncDirectory(path: path) }
        let fd = path.withCString { cOpen($0, O_RDONLY | O_DIRECTORY, 0) }
        if fd < 0 { throw SystemError(call: "open", errno: errno, path: path) }
        defer { _ = cClose(fd) }
        if fsync(fd) != 0 { throw SystemError(call: "fsync", errno: errno, path: path) }
    }

    /// `ftruncate(2)`.
    package func truncate(_ fd: Int32, to size: UInt64, path: String) throws(SystemError) {
        _ = try injected(.truncate, "ftruncate", path) { .truncate(path: path, size: size) }
        if ftruncate(fd, off_t(size)) != 0 { throw SystemError(call: "ftruncate", errno: errno, path: path) }
    }

    /// `rename(2)`.
    package func rename(_ from: String, to: String) throws(SystemError) {
        _ = try injected(.rename, "rename", from) { .rename(from: from, to: to) }
        if cRename(from, to) != 0 { throw SystemError(call: "rename", errno: errno, path: from) }
    }

    /// Swaps the names `first` and `second` in one atomic step (``logstore_exchange_paths``): a crash
    /// leaves both names in place, each naming what it named before or what the other did.
    package func exchange(_ first: String, _ second: String) throws(SystemError) {
        _ = try injected(.rename, "renameat2", first) { .rename(from: first, to: second) }
        if logstore_exchange_paths(first, second) != 0 {
            throw SystemError(call: "renameat2(RENAME_EXCHANGE)", errno: errno, path: first)
        }
    }

    /// `unlink(2)`.
    package func unlink(_ path: String) throws(SystemError) {
        _ = try injected(.unlink, "unlink", path) { .unlink(path: path) }
        if cUnlink(path) != 0 { throw SystemError(call: "unlink", errno: errno, path: path) }
    }

    /// Where the file's data ends: the start of the first hole (`lseek(2)` with `SEEK_HOLE`), or `size`
    /// where holes cannot be told (then every byte counts as data). A file written from its start with an
    /// extension at the end has one hole there.
    package func dataEnd(_ fd: Int32, size: UInt64) -> UInt64 {
        #if os(Linux)
            let seekHole: Int32 = 4  // SEEK_HOLE (a macro of _GNU_SOURCE that Swift does not import)
            let hole = lseek(fd, 0, seekHole)
            return hole >= 0 ? min(UInt64(hole), size) : size
        #else
            return size
        #endif
    }

    /// The regions holding data (not holes) at or after `offset`, up to `size` (`lseek(2)` with
    /// `SEEK_DATA` and `SEEK_HOLE`): empty when only a hole follows. Nil where that cannot be told, or
    /// when there are more than `limit` regions; then every byte counts as data.
    package func dataRegions(_ fd: Int32, after offset: UInt64, size: UInt64, limit: Int = 64) -> [Range<UInt64>]? {
        #if os(Linux)
            let seekData: Int32 = 3  // SEEK_DATA and SEEK_HOLE: macros of _GNU_SOURCE that Swift does not import
            let seekHole: Int32 = 4
            var regions: [Range<UInt64>] = []
            var position = offset
            while position < size {
                let start = lseek(fd, off_t(position), seekData)
                if start < 0 { return errno == ENXIO ? regions : nil }
                let end = lseek(fd, start, seekHole)
                guard end > start, regions.count < limit else { return nil }
                regions.append(UInt64(start)..<min(UInt64(end), size))
                position = UInt64(end)
            }
            return regions
        #else
            return nil
        #endif
    }

    /// The size of an open file, from `fstat(2)`.
    package func size(_ fd: Int32, path: String) throws(SystemError) -> UInt64 {
        var info = stat()
        if fstat(fd, &info) != 0 { throw SystemError(call: "fstat", errno: errno, path: path) }
        return UInt64(info.st_size)
    }

    /// A second descriptor of the file open at `fd` (`fcntl(F_DUPFD_CLOEXEC)`), which the caller closes: a
    /// segment mapped again, larger, keeps its file even when a writer deleted it since the first open.
    /// Counts as an `open` for fault injection.
    package func duplicate(_ fd: Int32, path: String) throws(SystemError) -> Int32 {
        _ = try injected(.open, "fcntl", path)
        while true {
            let copy = fcntl(fd, F_DUPFD_CLOEXEC, 0)
            if copy >= 0 { return copy }
            if errno != EINTR { throw SystemError(call: "fcntl", errno: errno, path: path) }
        }
    }
}

/// What a file of type `type` (`st_mode & S_IFMT`) is, in words.
package func fileTypeName(_ type: mode_t) -> String {
    switch type {
    case S_IFIFO: return "a FIFO"
    case S_IFCHR: return "a character device"
    case S_IFBLK: return "a block device"
    case S_IFSOCK: return "a socket"
    case S_IFDIR: return "a directory"
    case S_IFLNK: return "a symbolic link"
    default: return "file type 0o\(String(type, radix: 8))"
    }
}

// Unqualified names of the C calls that `SystemIO`'s own methods shadow.
private func cOpen(_ path: UnsafePointer<CChar>, _ flags: Int32, _ mode: mode_t) -> Int32 {
    open(path, flags, mode)
}
@discardableResult private func cClose(_ fd: Int32) -> Int32 { close(fd) }
private func cRename(_ from: String, _ to: String) -> Int32 { rename(from, to) }
private func cUnlink(_ path: String) -> Int32 { unlink(path) }

extension SystemIO {
    /// `mkdir(2)`; an existing directory is not an error.
    package func makeDirectory(_ path: String) throws(SystemError) {
        _ = try injected(.open, "mkdir", path) { .makeDirectory(path: path) }
        if mkdir(path, 0o755) != 0 && errno != EEXIST {
            throw SystemError(call: "mkdir", errno: errno, path: path)
        }
    }

    /// Whether anything exists at `path` (`stat(2)`; not a seam call: it changes nothing).
    package func exists(_ path: String) -> Bool {
        var info = stat()
        return stat(path, &info) == 0
    }

    /// Whether `path` is an existing directory.
    package func isDirectory(_ path: String) -> Bool {
        var info = stat()
        return stat(path, &info) == 0 && (info.st_mode & S_IFMT) == S_IFDIR
    }

    /// The names in a directory (without `.` and `..`), from `opendir(3)`/`readdir(3)`.
    package func listDirectory(_ path: String) throws(SystemError) -> [String] {
        guard let directory = opendir(path) else { throw SystemError(call: "opendir", errno: errno, path: path) }
        defer { closedir(directory) }
        var names: [String] = []
        while let entry = readdir(directory) {
            let name = withUnsafePointer(to: entry.pointee.d_name) {
                $0.withMemoryRebound(to: CChar.self, capacity: 256) { String(cString: $0) }
            }
            if name != "." && name != ".." { names.append(name) }
        }
        return names
    }

    /// Replaces the file at `path` durably: writes `PATH.writing`, syncs it, renames it over `path`,
    /// and syncs `directory`. A crash leaves either the old file or the new one (and maybe a leftover
    /// temporary file, which the next open for writing deletes).
    package func replaceFile(_ path: String, with bytes: [UInt8], directory: String) throws(SystemError) {
        let temporary = path + LogFormat.writingSuffix
        if exists(temporary) { try unlink(temporary) }
        try writeNewFile(temporary, bytes)
        try rename(temporary, to: path)
        try syncDirectory(directory)
    }

    /// Writes `bytes` to a new file at `path` and syncs it (not its directory).
    package func writeNewFile(_ path: String, _ bytes: [UInt8]) throws(SystemError) {
        let fd = try open(path, flags: O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC)
        defer { close(fd) }
        let result = bytes.withUnsafeBytes { raw in
            Result { () throws(SystemError) in try writeAll(fd, raw, at: 0, path: path) }
        }
        try result.get()
        try syncData(fd, path: path)
    }
}
