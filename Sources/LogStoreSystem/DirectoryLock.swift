@_spi(Engine) import LogStoreFormat

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// The `LOCK` file's exclusive `flock`, held while a store is open for writing.
///
/// `flock` locks belong to the open file description, so a second `Store.open` of the same directory
/// fails too, in this process as in any other; the kernel releases the lock if the process dies.
package final class DirectoryLock: Sendable {
    private let fd: Int32
    /// Whether this lock created the `LOCK` file (it did not exist before).
    package let createdFile: Bool

    /// Takes the lock of the store in `directory`, or throws ``LogStoreError/Code/locked``.
    package init(directory: String, io: SystemIO) throws(LogStoreError) {
        let path = directory + "/" + LogFormat.lockFileName
        var fd: Int32 = -1
        var created = false
        do {
            // Create it exclusively first, to know whether this lock made the file; an existing one is
            // opened as it is (a few tries: it may be removed in between).
            for attempt in 0..<3 {
                do {
                    fd = try io.open(path, flags: O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC)
                    created = true
                    break
                } catch  where error.errno == EEXIST {
                    do {
                        fd = try io.open(path, flags: O_RDWR | O_CLOEXEC)
                        break
                    } catch  where error.isNoSuchFile && attempt < 2 {
                        continue
                    }
                }
            }
        } catch {
            throw LogStoreError(.ioError, "cannot open the lock file", file: path, underlying: error)
        }
        if flock(fd, LOCK_EX | LOCK_NB) != 0 {
            let code = errno
            io.close(fd)
            if code == EWOULDBLOCK {
                throw LogStoreError(
                    .locked, "the store is already open for writing by another process or Store", file: path)
            }
            throw LogStoreError(
                .ioError, "cannot lock the store", file: path, underlying: SystemError(call: "flock", errno: code))
        }
        self.fd = fd
        self.createdFile = created
    }

    deinit {
        // Unlock explicitly: a child process between fork and exec may briefly share this open file
        // description, and closing our descriptor alone would leave the lock held until it execs.
        flock(fd, LOCK_UN)
        close(fd)
    }
}
