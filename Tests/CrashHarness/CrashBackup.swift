import ArgumentParser
@_spi(Testing) import LogStore

/// `crash-backup DIR DEST --operation OP --after K [--restore]`: opens the store read-only, arms a fault
/// injector to end the process at the K+1-th call of one kind of system call, then backs the store up into
/// DEST (with `--restore`: makes a new store in DEST from it, every byte copied, as `logstore-tool restore`
/// does); for crash tests that then check what DEST holds. The crash is `_exit(137)`, at once, as if the
/// process had been killed there. When the backup finishes first, it prints `survived` and exits 0.
struct CrashBackup: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "crash-backup",
        abstract: "Test helper: crash at a chosen system call of a backup or restore.",
    )

    @Argument(help: "The store directory.") var directory: String
    @Argument(help: "The backup's directory.") var destination: String

    @Option(help: "The kind of system call to crash at: write, sync, rename, unlink or open.")
    var operation: String

    @Option(help: "How many calls of that kind go through before the one that crashes.")
    var after: Int

    @Flag(help: "Restore (a new store, every byte copied) instead of backing up.")
    var restore = false

    private static let operations: [String: FaultInjector.Operation] = [
        "write": .write, "sync": .sync, "rename": .rename, "unlink": .unlink, "open": .open,
    ]

    func validate() throws {
        guard Self.operations[operation] != nil else {
            throw ValidationError("--operation takes write, sync, rename, unlink or open")
        }
        guard after >= 0 else { throw ValidationError("--after must not be negative") }
    }

    func run() throws {
        guard let target = Self.operations[operation] else { throw ValidationError("unknown --operation") }
        let faults = FaultInjector()
        var options = StoreOptions(createIfMissing: false, readOnly: true)
        options.faultInjector = faults
        let opened = try Store.open(at: directory, options: options)
        faults.inject(target, .crash(afterBytes: 0), after: after)
        if restore {
            try opened.checkpoint(to: destination, hardLinks: false)
        } else {
            try opened.backup(to: destination)
        }
        faults.clear()
        try opened.close()
        try acknowledge("survived")
    }
}
