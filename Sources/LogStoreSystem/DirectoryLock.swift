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

    /// Takes the lock of the store in `directory`, or throws ``LogStoreError/Code/locked``.
    package init(directory: String, io: SystemIO) throws(LogStoreError) {
        let path = directory + "/" + LogFormat.lockFileName
        let fd: Int32
        do {
            fd = try io.open(path, flags: O_RDWR | O_CREAT | O_CLOEXEC)
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
    }

    deinit {
        // Unlock explicitly: a child process between fork and exec may briefly share this open file
        // description, and closing our descriptor alone would leave the lock held until it execs.
        flock(fd, LOCK_UN)
        close(fd)
    }
}
