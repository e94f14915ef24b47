#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Hard links, file copies and directory removal, for checkpoints and backups.
extension SystemIO {
    /// `link(2)`: a second name `to` for the file at `from` (same file system only: `EXDEV` otherwise).
    /// Counts as a `rename` for fault injection.
    package func link(_ from: String, to: String) throws(SystemError) {
        _ = try injected(.rename, "link", from)
        if cLink(from, to) != 0 { throw SystemError(call: "link", errno: errno, path: from) }
    }

    /// Copies the first `count` bytes of the file open at `fd` (named `source`, for errors) into a new
    /// file at `path` (`O_EXCL`: an existing file is never overwritten) and syncs it; `progress` is called
    /// with the bytes of each chunk copied. Fails when the source holds fewer than `count` bytes.
    package func copyPrefix(
        of fd: Int32, count: UInt64, source: String, to path: String, progress: (Int) -> Void
    ) throws(SystemError) {
        let target = try copyPrefixUnsynced(of: fd, count: count, source: source, to: path, progress: progress)
        defer { close(target) }
        try syncData(target, path: path)
    }

    /// ``copyPrefix(of:count:source:to:progress:)`` without the sync: returns the new file's descriptor,
    /// which the caller syncs (through this descriptor, which sees every write error of the file) and
    /// closes, so that the disk writes several copies at once.
    package func copyPrefixUnsynced(
        of fd: Int32, count: UInt64, source: String, to path: String, progress: (Int) -> Void
    ) throws(SystemError) -> Int32 {
        let target = try open(path, flags: O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC)
        do {
            try copy(from: fd, count: count, source: source, to: target, path: path, progress: progress)
        } catch {
            close(target)
            throw error
        }
        return target
    }

    private func copy(
        from fd: Int32, count: UInt64, source: String, to target: Int32, path: String, progress: (Int) -> Void
    ) throws(SystemError) {
        var offset: UInt64 = 0
        // In the kernel first (`copy_file_range(2)`: no copy through this process's memory, and a
        // reflink where the file system has them); by reads and writes where it is not available, or
        // where it stops short (the reads then tell a real end of the file).
        while offset < count,
            let copied = try copyInKernel(from: fd, to: target, at: offset, count: count - offset, path: path),
            copied > 0
        {
            startWriteback(target, offset: offset, length: copied)
            offset += UInt64(copied)
            progress(copied)
        }
        guard offset < count else { return }
        let chunkSize = 1 << 20
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: chunkSize, alignment: 4096)
        defer { buffer.deallocate() }
        while offset < count {
            let want = Int(min(UInt64(chunkSize), count - offset))
            let chunk = UnsafeMutableRawBufferPointer(rebasing: buffer[0..<want])
            let got = try read(fd, into: chunk, at: offset, path: source)
            guard got == want else {
                throw SystemError(
                    call: "pread", errno: EIO, path: source,
                    reason: "the file ended at \(offset + UInt64(got)) bytes, before the \(count) to copy")
            }
            try writeAll(target, UnsafeRawBufferPointer(chunk), at: offset, path: path)
            // The disk starts on each chunk while the next is read, so the final sync waits for little.
            startWriteback(target, offset: offset, length: want)
            offset += UInt64(want)
            progress(want)
        }
    }

    /// One `copy_file_range(2)` of up to 8 MiB from `source` to `target`, both at `offset`: the bytes
    /// copied (0 at the source's end), or nil when the call is not available for these files (then nothing
    /// was copied).
    private func copyInKernel(from source: Int32, to target: Int32, at offset: UInt64, count: UInt64, path: String)
        throws(SystemError) -> Int?
    {
        #if os(Linux)
            guard let copyFileRange = Self.copyFileRange else { return nil }
            // Faults armed for writes apply as to a write: a short one copies fewer bytes, a crash copies
            // the bytes it allows and ends the process.
            var length = Int(min(count, 8 << 20))
            var crashAfter = false
            switch try injected(.write, "copy_file_range", path) {
            case .shortWrite(let limit)?: length = min(length, max(0, limit))
            case .crash(let limit)?:
                length = min(length, max(0, limit))
                crashAfter = true
            default: break
            }
            var sourceOffset = Int64(offset)
            var targetOffset = Int64(offset)
            while true {
                let copied = length == 0 ? 0 : copyFileRange(source, &sourceOffset, target, &targetOffset, length, 0)
                if crashAfter { _exit(137) }
                if copied >= 0 { return copied }
                switch errno {
                case EINTR: continue
                // Not for these files or not allowed here (a seccomp filter, an old kernel, another file
                // system): reads and writes do it.
                case ENOSYS, EXDEV, EINVAL, EOPNOTSUPP, EBADF, EPERM, ETXTBSY: return nil
                default: throw SystemError(call: "copy_file_range", errno: errno, path: path)
                }
            }
        #else
            return nil
        #endif
    }

    #if os(Linux)
        /// glibc's `copy_file_range`, which the Glibc module does not export (it needs `_GNU_SOURCE`), looked
        /// up once by name; nil when the C library has none. The cast is safe because the type is the
        /// function's C prototype, `ssize_t copy_file_range(int, off64_t *, int, off64_t *, size_t,
        /// unsigned int)`.
        private static let copyFileRange:
            (
                @convention(c) (Int32, UnsafeMutablePointer<Int64>?, Int32, UnsafeMutablePointer<Int64>?, Int, UInt32)
                    -> Int
            )? = {
                guard let symbol = dlsym(UnsafeMutableRawPointer(bitPattern: 0), "copy_file_range") else {
                    return nil
                }
                return unsafeBitCast(
                    symbol,
                    to: (@convention(c) (
                        Int32, UnsafeMutablePointer<Int64>?, Int32, UnsafeMutablePointer<Int64>?, Int, UInt32
                    ) -> Int).self)
            }()
    #endif

    /// The whole content of the small file at `path` (at most `limit` bytes; a larger one is `EFBIG`).
    package func readWholeFile(_ path: String, limit: UInt64 = 1 << 24) throws(SystemError) -> [UInt8] {
        let fd = try open(path, flags: O_RDONLY | O_CLOEXEC)
        defer { close(fd) }
        let size = try size(fd, path: path)
        guard size <= limit else { throw SystemError(call: "read", errno: EFBIG, path: path) }
        return try read(fd, count: Int(size), at: 0, path: path)
    }

    /// `mkdir(2)` of a new directory: one that exists already is an error (`EEXIST`).
    package func makeNewDirectory(_ path: String) throws(SystemError) {
        _ = try injected(.open, "mkdir", path)
        if mkdir(path, 0o755) != 0 { throw SystemError(call: "mkdir", errno: errno, path: path) }
    }

    /// Removes the directory at `path` and the files in it (not subdirectories: it fails on one).
    package func removeDirectory(_ path: String) throws(SystemError) {
        for name in try listDirectory(path) { try unlink(path + "/" + name) }
        _ = try injected(.unlink, "rmdir", path)
        if rmdir(path) != 0 { throw SystemError(call: "rmdir", errno: errno, path: path) }
    }
}

private func cLink(_ from: String, _ to: String) -> Int32 { link(from, to) }
