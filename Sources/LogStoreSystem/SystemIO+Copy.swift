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
        let target = try open(path, flags: O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC)
        defer { close(target) }
        let chunkSize = 1 << 20
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: chunkSize, alignment: 4096)
        defer { buffer.deallocate() }
        var offset: UInt64 = 0
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
            offset += UInt64(want)
            progress(want)
        }
        try syncData(target, path: path)
    }

    /// Removes the directory at `path` and the files in it (not subdirectories: it fails on one).
    package func removeDirectory(_ path: String) throws(SystemError) {
        for name in try listDirectory(path) { try unlink(path + "/" + name) }
        _ = try injected(.unlink, "rmdir", path)
        if rmdir(path) != 0 { throw SystemError(call: "rmdir", errno: errno, path: path) }
    }
}

private func cLink(_ from: String, _ to: String) -> Int32 { link(from, to) }
