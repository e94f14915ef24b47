import ArgumentParser
@_spi(Testing) import LogStore

/// `crash-compactor DIR --operation OP --after K [--bytes N]` : opens the store, arms a fault
/// injector to end the process at the K+1-th call of one kind of system call, then runs a mark-sweep
/// pass and a compaction pass; for crash tests that then check what a reopen recovers.
///
/// The injector is armed only once the store is open, so K counts the calls of the mark-sweep and
/// compaction passes alone. The crash is `_exit(137)`, at once, as if the process had been killed
/// there: a write (`--operation write`) first writes at most `--bytes` bytes of its buffer (a torn
/// write); any other call ends the process before it runs. When the passes finish without reaching the
/// crash point, it disarms the injector, closes the store, prints `survived` and exits 0.
///
/// Background compaction and mark-sweep are off, so the passes run only on this thread.
struct CrashCompactor: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "crash-compactor",
        abstract: "Test helper: crash at a chosen system call of a mark-sweep and compaction pass.",
    )

    @Argument(help: "The store directory.") var directory: String

    @Option(help: "The kind of system call to crash at: write, sync, rename, unlink, open or truncate.")
    var operation: String

    @Option(help: "How many calls of that kind go through before the one that crashes.")
    var after: Int

    @Option(help: "For writes: how many bytes the crashing write writes first (default 0).")
    var bytes = 0

    @Option(help: "Segment size (default: the engine's default).")
    var segmentSize: Int?

    /// The system calls a crash may be injected at.
    private static let operations: [String: FaultInjector.Operation] = [
        "write": .write, "sync": .sync, "rename": .rename, "unlink": .unlink, "open": .open,
        "truncate": .truncate,
    ]

    func validate() throws {
        guard Self.operations[operation] != nil else {
            throw ValidationError("--operation takes write, sync, rename, unlink, open or truncate")
        }
        guard after >= 0 else { throw ValidationError("--after must not be negative") }
        guard bytes >= 0 else { throw ValidationError("--bytes must not be negative") }
        if let segmentSize, !(LogStoreLimits.minSegmentSize...LogStoreLimits.maxSegmentSize).contains(segmentSize) {
            throw ValidationError(
                "--segment-size must be between \(LogStoreLimits.minSegmentSize) and \(LogStoreLimits.maxSegmentSize)"
            )
        }
    }

    func run() throws {
        guard let target = Self.operations[operation] else {
            throw ValidationError("--operation takes write, sync, rename, unlink, open or truncate")
        }
        let faults = FaultInjector()
        var options = harnessOptions(segmentSize: segmentSize, createIfMissing: false)
        options.faultInjector = faults
        let opened = try Store.open(at: directory, options: options)
        faults.inject(target, .crash(afterBytes: bytes), after: after)
        try opened.collectGarbage()
        try opened.compact()
        // Past the passes: disarm, so closing (or the store's deinit) cannot reach the crash point.
        faults.clear()
        try opened.close()
        try acknowledge("survived")
    }
}
