@_spi(Engine) import LogStoreFormat

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// `SIGXFSZ`, the signal a process gets when it writes or extends a file beyond its file-size limit
/// (`RLIMIT_FSIZE`, `ulimit -f`), is ignored once a store is used in the process.
///
/// By default that signal ends the process, before the store can report anything: extending a
/// segment ahead of its writes alone would kill a process under a limit. Ignored, the call fails with
/// `EFBIG` instead, which the store reports as a `LogStoreError` with code `ioError` ("File too large")
/// like any other failed write. This is done once per process, when the first store (or verification)
/// opens, and only while the signal has its default action: a handler or mask the application set
/// itself is left alone.
package enum FileSizeLimitSignal {
    /// Sets `SIGXFSZ` to be ignored if it has its default action; runs once per process.
    package static func ignore() { _ = once }

    private static let once: Void = {
        var current = sigaction()
        guard sigaction(SIGXFSZ, nil, &current) == 0 else { return }
        #if canImport(Glibc)
            let isDefault = current.__sigaction_handler.sa_handler == nil
        #else
            let isDefault = current.__sigaction_u.__sa_handler == nil
        #endif
        guard isDefault else { return }
        _ = signal(SIGXFSZ, SIG_IGN)
    }()
}
