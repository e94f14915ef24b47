import ArgumentParser
import Foundation
import LogStore

/// `replicate DIR DEST [--interval SECONDS] [--once] [--json]`: keeps a replica of a store up to date.
struct Replicate: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Keep a replica of a store (another disk, a mounted remote path) up to date.",
        discussion: """
            Opens DIR read-only (beside its writer) and, every --interval seconds, brings DEST up to the \
            newest commit: segments DEST lacks are copied whole, the segment being written is extended by \
            what it gained, segments compacted away are removed, in the order a writer changes its own \
            store, so that DEST can be read meanwhile (any command that reads a store, a read-only open): \
            it holds exactly the commits up to one pass. Prints one line per pass that shipped something \
            (JSON with --json: {"sequence", "segmentsCopied", "bytesCopied", "bytesAppended", \
            "segmentsRemoved"}). Until Ctrl-C, or one pass with --once. DEST lags by at most the interval \
            plus a pass. To promote DEST after losing DIR: stop this, then open DEST for writing (any \
            writing command, or Store.open): it opens as a store after a crash and goes on from its last \
            commit; it is then a store of its own, and replicating into it is refused.
            """
    )

    @OptionGroup var store: StoreDirectory

    @Argument(help: "The replica's directory (missing, empty, or a replica of this store).")
    var destination: String

    @Option(help: "Seconds between passes.")
    var interval: Double = 1

    @Flag(help: "One pass, then exit.")
    var once = false

    @Flag(help: "Print JSON lines.")
    var json = false

    func validate() throws {
        guard interval > 0, interval <= 86_400 else { throw ValidationError("--interval must be in (0, 86400]") }
    }

    func run() throws {
        Interruption.install()
        let opened = try store.openReadOnly()
        defer { try? opened.close() }
        var last: UInt64?
        while true {
            try opened.refresh()
            let report = try opened.replicate(to: destination)
            if report.sequence != last || report.segmentsRemoved > 0 {
                last = report.sequence
                try Console.acknowledge(
                    json
                        ? "{\"sequence\":\(report.sequence),\"segmentsCopied\":\(report.segmentsCopied),"
                            + "\"bytesCopied\":\(report.bytesCopied),\"bytesAppended\":\(report.bytesAppended),"
                            + "\"segmentsRemoved\":\(report.segmentsRemoved)}"
                        : "replicated up to commit \(report.sequence): \(plural(report.segmentsCopied, "segment")) "
                            + "copied (\(formatBytes(report.bytesCopied))), \(formatBytes(report.bytesAppended)) "
                            + "appended, \(plural(report.segmentsRemoved, "segment")) removed")
            }
            if once { return }
            let deadline = Date().addingTimeInterval(interval)
            while Date() < deadline {
                if Interruption.requested { return }
                usleep(20_000)
            }
        }
    }
}
