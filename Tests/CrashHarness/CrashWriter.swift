import ArgumentParser
import Foundation
import LogStore
import LogStoreExamples
import TestSupport

/// `crash-writer DIR --seed S` : writes forever and acknowledges every commit on standard
/// output, for crash tests that kill it at a random moment and then check what survived.
///
/// Every object's payload is ``crashPayload(for:)`` (TestSupport) of its id, so a checker can recompute it.
/// After each commit returns it prints one line, in one `write`:
/// - `put ID` for a single put (type tag 1, no references);
/// - `batch M ID1 ID2 ...` for an atomic batch of 2 to 50 member puts (type tag 2), a manifest `M`
///   (type tag 3) whose references are the members in order, and the root `batch-M` pointing at `M`.
///
/// A root `batch-M` that exists after a crash, acknowledged or not, so names a manifest whose
/// references are every member of its batch. Every object is pinned and nothing is ever deleted, so
/// the store's referential-integrity rules never refuse a commit and nothing is ever collected (the
/// manifest's references name members put in the same batch). Background compaction is off.
///
/// With `--retain-every N`, after every N commits it retains a moment (``Store/retain(as:)``) named
/// `PREFIX-K` and prints `retained PREFIX-K SEQUENCE` once that returns: the moment holds exactly the
/// commits acknowledged before that line.
///
/// Whatever the `--fsync` policy, a killed process loses nothing acknowledged: the commit is in the
/// file (the page cache) when the call returns.
struct CrashWriter: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "crash-writer",
        abstract: "Test helper: write forever, printing a line per durable commit.",
    )

    @Argument(help: "The store directory.") var directory: String

    @Option(help: "Seed of the choice between single puts and batches, and of the batch sizes.")
    var seed: UInt64

    @Option(help: "Segment size (default: the engine's default).")
    var segmentSize: Int?

    @Option(help: "When commits are synced: always, never, or a number of milliseconds (default: always).")
    var fsync = "always"

    @Option(help: "Retain a moment after every this many commits (0: never).")
    var retainEvery = 0

    @Option(help: "The retained moments' name prefix.")
    var retainPrefix = "moment"

    @Option(help: "Microseconds to wait after each commit (0: none), to bound how fast the store grows.")
    var pauseMicroseconds: UInt32 = 0

    func validate() throws {
        guard policy != nil else { throw ValidationError("--fsync takes always, never or milliseconds") }
    }

    private var policy: FsyncPolicy? {
        switch fsync {
        case "always": return .always
        case "never": return .never
        default: return Int(fsync).flatMap { $0 > 0 ? .interval(.milliseconds($0)) : nil }
        }
    }

    func run() throws {
        var options = harnessOptions(segmentSize: segmentSize)
        options.fsyncPolicy = policy ?? .always
        let opened = try Store.open(at: directory, options: options)
        var random = SplitMix64(seed: seed)
        var commits = 0
        var retained = 0
        while true {
            if pauseMicroseconds > 0 { usleep(pauseMicroseconds) }
            commits += 1
            if retainEvery > 0, commits % retainEvery == 0 {
                retained += 1
                let moment = try opened.retain(as: "\(retainPrefix)-\(retained)")
                try acknowledge("retained \(moment.name) \(moment.sequence)")
            }
            if random.next() % 2 == 0 {
                let id = opened.newID()
                try opened.put(id, typeTag: CrashTag.single, payload: crashPayload(for: id))
                try acknowledge("put \(id)")
            } else {
                let members = (0..<(2 + Int(random.next() % 49))).map { _ in opened.newID() }
                let manifest = opened.newID()
                var batch = WriteBatch()
                for id in members {
                    batch.put(id, typeTag: CrashTag.member, payload: crashPayload(for: id))
                }
                batch.put(
                    manifest, typeTag: CrashTag.manifest, references: members, payload: crashPayload(for: manifest))
                batch.setRoot("batch-\(manifest)", to: manifest)
                try opened.write(batch)
                try acknowledge("batch \(manifest) " + members.map { "\($0)" }.joined(separator: " "))
            }
        }
    }
}
