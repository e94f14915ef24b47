import ArgumentParser
import Foundation
import LogStore
import LogStoreExamples
import TestSupport

/// `replica-reader DIR --seconds S`: opens the replica in DIR read-only again and again for S seconds while
/// another process brings it up to date, and checks that every open shows one commit of a `crash-writer`
/// store: every root `batch-M` names a manifest whose members are all there with their payloads, every
/// object has the payload of its id, and neither the commit nor the objects go backwards from one open to the
/// next. Prints `reads N` when every open passed, or `inconsistent: …` (and exits 3) at the first that did not.
struct CrashReplicaReader: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "replica-reader",
        abstract: "Test helper: read a replica again and again and check each open is one whole commit.",
    )

    @Argument(help: "The replica's directory.") var directory: String

    @Option(help: "How long to read, in seconds.") var seconds: Double

    func run() throws {
        let end = Date().addingTimeInterval(seconds)
        var reads = 0
        var lastSequence: UInt64 = 0
        var lastCount = 0
        while Date() < end {
            guard FileManager.default.fileExists(atPath: directory + "/SEGMENTS") else {
                usleep(1_000)
                continue
            }
            let store = try Store.open(at: directory, options: StoreOptions(createIfMissing: false, readOnly: true))
            let snapshot = try store.snapshot()
            let ids = snapshot.ids()
            if let problem = try Self.problem(in: snapshot, ids: ids) {
                try store.close()
                try acknowledge("inconsistent at commit \(snapshot.sequence): \(problem)")
                throw ExitCode(3)
            }
            guard snapshot.sequence >= lastSequence, ids.count >= lastCount else {
                try store.close()
                try acknowledge(
                    "inconsistent: went back from commit \(lastSequence) (\(lastCount) objects) to "
                        + "\(snapshot.sequence) (\(ids.count) objects)")
                throw ExitCode(3)
            }
            lastSequence = snapshot.sequence
            lastCount = ids.count
            try store.close()
            reads += 1
        }
        try acknowledge("reads \(reads) last commit \(lastSequence)")
    }

    /// What is wrong with `snapshot` as a state of a `crash-writer` store, or nil.
    private static func problem(in snapshot: Snapshot, ids: [ObjectID]) throws -> String? {
        for id in ids {
            guard let record = try snapshot.get(id) else { return "object \(id) listed but unreadable" }
            guard record.payload == crashPayload(for: id) else { return "object \(id) has another payload" }
        }
        for (name, manifest) in snapshot.roots() where name.hasPrefix("batch-") {
            guard let record = try snapshot.get(manifest) else { return "root \(name) names a missing manifest" }
            for member in record.references where !snapshot.contains(member) {
                return "batch \(manifest) lacks its member \(member)"
            }
        }
        return nil
    }
}
