import ArgumentParser
import Foundation
import LogStore

/// `logstore-crash-harness`: processes that crash tests start and kill (test-only; not a product).
@main
struct CrashHarness: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "logstore-crash-harness",
        abstract: "Writers and compactors for crash tests to kill.",
        subcommands: [
            CrashWriter.self, CrashCompactor.self, CrashTaskWriter.self, CrashBackup.self, CrashReplicaReader.self,
        ]
    )
}

/// Prints `line` on standard output in one write, as soon as the work it acknowledges is done.
func acknowledge(_ line: String) throws {
    try FileHandle.standardOutput.write(contentsOf: Data((line + "\n").utf8))
}

/// Options for the harness's opens: no background compaction, so the only work is the harness's own.
func harnessOptions(segmentSize: Int?, createIfMissing: Bool = true) -> StoreOptions {
    var options = StoreOptions(createIfMissing: createIfMissing)
    if let segmentSize { options.segmentSize = segmentSize }
    options.compaction.background = false
    return options
}
