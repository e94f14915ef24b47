@_spi(Engine) import LogStoreFormat

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// A failed system call: which call, on which path, and the errno it returned.
public struct SystemError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The name of the system call, e.g. `"fdatasync"`.
    public var call: String
    /// The errno value.
    public var errno: Int32
    /// The path involved, when there is one.
    public var path: String?
    /// Why the call was refused, when the store refused it rather than the system (for example
    /// "not a regular file (a FIFO)"); nil when `errno` says it all.
    public var reason: String?

    /// Makes a system error.
    public init(call: String, errno: Int32, path: String? = nil, reason: String? = nil) {
        self.call = call
        self.errno = errno
        self.path = path
        self.reason = reason
    }

    /// Whether the call failed because nothing is at the path (`ENOENT`, and not a symbolic link whose
    /// target does not exist, which is there and never goes away by itself).
    package var isNoSuchFile: Bool { errno == ENOENT && reason == nil }

    /// `call(path): strerror (errno)`, or `call(path): reason` when there is a reason.
    public var description: String {
        if let reason { return "\(call)(\(path ?? "")): \(reason)" }
        let text = String(cString: strerror(errno))
        return "\(call)(\(path ?? "")): \(text) (errno \(errno))"
    }
}
