import Synchronization

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Ctrl-C (SIGINT) as a request to stop at the next safe point, for commands that write in steps
/// (`import` between batches, `stress` between operations).
///
/// The first SIGINT only sets a flag, which the command checks where stopping leaves everything
/// consistent; a second one ends the process at once with exit code 130, as an unhandled SIGINT would
/// (every batch the store committed stays committed: a batch is atomic across a crash too).
///
/// The state is one atomic counter in a `static let`: `Atomic` is `Sendable`, and its lock-free
/// operations are safe in a signal handler (no lock, no allocation).
enum Interruption {
    /// SIGINTs received since ``install()``.
    private static let signals = Atomic<Int>(0)

    /// The exit code of a command that stopped because of SIGINT: 128 + its signal number 2, as a shell
    /// reports a process ended by it.
    static var exitCode: Int32 { 130 }

    /// Handles SIGINT from now on as described above.
    static func install() {
        // Initialise the static before a signal can reach it (lazy initialisation is not signal-safe).
        _ = signals.load(ordering: .relaxed)
        // A parent may have started this process with SIGINT blocked (the mask is inherited): unblock it
        // on this thread, and so on the threads it starts from now on.
        var mask = sigset_t()
        sigemptyset(&mask)
        sigaddset(&mask, SIGINT)
        pthread_sigmask(SIG_UNBLOCK, &mask, nil)
        _ = signal(SIGINT) { _ in
            if Interruption.signals.add(1, ordering: .relaxed).newValue > 1 { _exit(130) }
        }
    }

    /// Whether a SIGINT asked the command to stop.
    static var requested: Bool { signals.load(ordering: .relaxed) > 0 }
}
