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
/// consistent; the command then says what it did and ends itself with SIGINT (``endProcess()``), so that
/// its parent (a shell loop, `make`) sees it killed by Ctrl-C as with any other program. The handler is
/// installed with `SA_RESETHAND`: a second SIGINT gets the default action and ends the process at once
/// (every batch the store committed stays committed: a batch is atomic across a crash too). It is
/// installed without `SA_RESTART`, so that a read of standard input waiting for a line returns with
/// `EINTR` and the command stops at once (``LineReader`` keeps what it read before). A SIGINT that was
/// ignored when the process started (a background job of a non-interactive shell) stays ignored.
///
/// The state is one atomic counter in a `static let`: `Atomic` is `Sendable`, and its lock-free
/// operations are safe in a signal handler (no lock, no allocation); the handler does nothing else.
enum Interruption {
    /// SIGINTs received since ``install()``.
    private static let signals = Atomic<Int>(0)

    /// Handles SIGINT from now on as described above (unless it is ignored).
    static func install() {
        // Initialise the static before a signal can reach it (lazy initialisation is not signal-safe).
        _ = signals.load(ordering: .relaxed)
        var previous = sigaction()
        guard sigaction(SIGINT, nil, &previous) == 0, !isIgnore(previous) else { return }
        var action = sigaction()
        #if canImport(Glibc)
            action.__sigaction_handler.sa_handler = { _ in Interruption.signals.add(1, ordering: .relaxed) }
        #elseif canImport(Darwin)
            action.__sigaction_u.__sa_handler = { _ in Interruption.signals.add(1, ordering: .relaxed) }
        #endif
        sigemptyset(&action.sa_mask)
        action.sa_flags = Int32(truncatingIfNeeded: SA_RESETHAND)  // 0x8000_0000 on Linux: the sign bit
        guard sigaction(SIGINT, &action, nil) == 0 else { return }
        // A parent may have started this process with SIGINT blocked (the mask is inherited): unblock it
        // on this thread, and so on the threads it starts from now on.
        var mask = sigset_t()
        sigemptyset(&mask)
        sigaddset(&mask, SIGINT)
        pthread_sigmask(SIG_UNBLOCK, &mask, nil)
    }

    /// Whether `action` ignores the signal (`SIG_IGN`).
    private static func isIgnore(_ action: sigaction) -> Bool {
        #if canImport(Glibc)
            let handler = action.__sigaction_handler.sa_handler
        #elseif canImport(Darwin)
            let handler = action.__sigaction_u.__sa_handler
        #endif
        // SIG_IGN is the handler address 1 (no function lives there).
        return unsafeBitCast(handler, to: Int.self) == 1
    }

    /// Whether a SIGINT asked the command to stop.
    static var requested: Bool { signals.load(ordering: .relaxed) > 0 }

    /// Ends the process of a command that stopped because of SIGINT as that signal's default action
    /// would: killed by SIGINT, which a shell reports as exit status 130. Buffered output (`print`) is written first.
    static func endProcess() -> Never {
        fflush(nil)
        signal(SIGINT, SIG_DFL)
        var mask = sigset_t()
        sigemptyset(&mask)
        sigaddset(&mask, SIGINT)
        pthread_sigmask(SIG_UNBLOCK, &mask, nil)
        raise(SIGINT)
        // Only if the signal could not end the process.
        exit(128 + SIGINT)
    }
}

/// Thrown by a command that stopped because of SIGINT, once it has said what it did: its `run()` ends
/// the process with ``Interruption/endProcess()`` after every `defer` in between has run (stores closed).
struct Interrupted: Error {}
