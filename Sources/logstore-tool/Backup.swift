import ArgumentParser
import Foundation
import LogStore

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// `backup DIR DEST [--copy] [--verify] [--json]`: a consistent copy of a store, made or brought up to date
/// in DEST, beside a writer if one is running.
struct Backup: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Back up a store, also while another process writes to it.",
        discussion: """
            Opens DIR read-only (so it works beside a process writing to it) and makes DEST a copy of the \
            store as of its newest commit. When DEST is missing or empty, the backup is made there; when it \
            holds an earlier backup of the same store, only what that backup lacks is added (segments it \
            has are kept) and what the store no longer has leaves it. Sealed segments on the same file \
            system are hard links to the store's files unless --copy is given; the segment being written is \
            copied up to the commit.

            The new backup is made beside DEST (DEST.backup-partial) and takes DEST's place only once \
            complete and synced: after a crash or an interruption, DEST is a complete backup (the old or the \
            new one), or it is missing while the old one waits in DEST.backup-previous; running the command \
            again finishes the swap first (or puts the old one back when the new one is incomplete). Ctrl-C \
            ends the command at once, which is such an interruption. DEST opens as a store. One backup at a \
            time runs to a given DEST (DEST.lock, left beside it, holds the lock; another gets "locked").
            """
    )

    @OptionGroup var store: StoreDirectory

    @Argument(help: "Where the backup goes (missing, empty, or an earlier backup of the same store).")
    var destination: String

    @Flag(help: "Copy every byte, never hard-link to the store's files (a backup that shares no file with it).")
    var copy = false

    @Flag(help: "Verify the backup afterwards (reads all of it).")
    var verify = false

    @Flag(help: "Print the summary as JSON.")
    var json = false

    func run() throws {
        let started = ContinuousClock.now
        let opened = try store.openReadOnly()
        defer { try? opened.close() }
        let display = ProgressDisplay(
            fd: json ? STDERR_FILENO : STDOUT_FILENO, label: "backing up", onlyOnTerminal: json)
        let report = try opened.backup(to: destination, hardLinks: !copy) { progress in
            display.update(done: progress.bytesDone, total: progress.bytesTotal)
        }
        display.finish()
        try opened.close()
        try finish(report, started: started, verify: verify, json: json, cipher: try store.cipher())
    }
}

/// `restore BACKUP DIR [--verify] [--json]`: a new store in DIR from a backup, every byte copied.
struct Restore: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Make a new store from a backup.",
        discussion: """
            Copies the backup in BACKUP (opened read-only; it is not changed) into DIR, which must be \
            missing or empty, as a store of its own: every byte is copied (no hard link to the backup's \
            files), made in DIR.checkpoint-partial and renamed to DIR once complete and synced. Stop the \
            processes using the damaged store first, move it aside, and restore into its path.
            """
    )

    @Argument(help: "The backup directory.")
    var backup: String

    @Argument(help: "Where the restored store goes (missing or an empty directory).")
    var destination: String

    @Option(
        name: .customLong("key-file"),
        help: ArgumentHelp(
            "The key of an encrypted backup: a file of 32 bytes or 64 hexadecimal digits.", valueName: "FILE"))
    var keyFile: String?

    @Flag(help: "Verify the restored store afterwards (reads all of it).")
    var verify = false

    @Flag(help: "Print the summary as JSON.")
    var json = false

    func run() throws {
        let started = ContinuousClock.now
        var source = StoreDirectory(directory: backup)
        source.keyFile = keyFile
        let opened = try source.openReadOnly()
        defer { try? opened.close() }
        let display = ProgressDisplay(
            fd: json ? STDERR_FILENO : STDOUT_FILENO, label: "restoring", onlyOnTerminal: json)
        let report = try opened.checkpoint(to: destination, hardLinks: false) { progress in
            display.update(done: progress.bytesDone, total: progress.bytesTotal)
        }
        display.finish()
        try opened.close()
        try finish(report, started: started, verify: verify, json: json, cipher: try source.cipher())
    }
}

extension StoreDirectory {
    init(directory: String) {
        self.init()
        self.directory = directory
    }
}

/// Prints what a backup or restore wrote (and verifies the copy when asked); throws when verify finds a
/// problem.
private func finish(
    _ report: CheckpointReport, started: ContinuousClock.Instant, verify: Bool, json: Bool, cipher: (any StoreCipher)?
) throws {
    var problems: [String]?
    if verify {
        problems = try Store.verify(at: report.destination, cipher: cipher).problems.map(\.description)
    }
    let elapsed = ContinuousClock.now - started
    let summary = BackupSummary(
        report: report,
        seconds: Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18,
        verifyProblems: problems)
    if json {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
        print(String(decoding: try encoder.encode(summary), as: UTF8.self))
    } else {
        print("copy: \(report.destination), as of commit \(report.sequence)")
        print(
            "segments: \(report.segments) (\(report.keptSegments) kept, \(report.linkedSegments) linked, "
                + "\(report.copiedSegments) copied)")
        print("bytes: \(formatBytes(report.bytesCopied)) copied, \(formatBytes(report.bytesLinked)) linked or kept")
        for note in report.notes { print("note: \(note)") }
        if let problems {
            print(problems.isEmpty ? "verify: no problems" : "verify: \(plural(problems.count, "problem"))")
            for problem in problems { print("  \(problem)") }
        }
        print("time: \(formatSeconds(summary.seconds))")
    }
    if let problems, !problems.isEmpty {
        throw ToolError("verify found \(plural(problems.count, "problem")) in \(report.destination)")
    }
}

/// What `backup` or `restore` did, and its JSON form.
private struct BackupSummary: Encodable {
    var destination: String
    var sequence: UInt64
    var segments: Int
    var keptSegments: Int
    var linkedSegments: Int
    var copiedSegments: Int
    var bytesCopied: UInt64
    var bytesLinked: UInt64
    var seconds: Double
    /// Present when `--verify` was given.
    var verifyProblems: [String]?
    var notes: [String]

    init(report: CheckpointReport, seconds: Double, verifyProblems: [String]?) {
        destination = report.destination
        sequence = report.sequence
        segments = report.segments
        keptSegments = report.keptSegments
        linkedSegments = report.linkedSegments
        copiedSegments = report.copiedSegments
        bytesCopied = report.bytesCopied
        bytesLinked = report.bytesLinked
        self.seconds = seconds
        self.verifyProblems = verifyProblems
        notes = report.notes
    }
}
