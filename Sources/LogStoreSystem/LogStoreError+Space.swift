@_spi(Engine) import LogStoreFormat

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

extension LogStoreError {
    /// An `ioError` for a write of `bytes` bytes that failed; when the file system is full (`ENOSPC`,
    /// `EDQUOT`), the message says so and how much free space the write needs.
    package static func writeFailed(
        _ what: String, file: String, bytes: Int, offset: UInt64? = nil, underlying: SystemError
    ) -> LogStoreError {
        guard underlying.errno == ENOSPC || underlying.errno == EDQUOT else {
            return LogStoreError(.ioError, "cannot \(what)", file: file, offset: offset, underlying: underlying)
        }
        return LogStoreError(
            .ioError,
            "no space left to \(what): it needs \(bytes) bytes free (rounded up to whole blocks of the file "
                + "system); free that much and try again (a read-only open needs no space)",
            file: file, offset: offset, underlying: underlying)
    }
}
