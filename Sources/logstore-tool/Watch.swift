import ArgumentParser
import Dispatch
import LogStore
import Synchronization

/// `watch DIR [--after SEQ] [--count N]`: follows a store read-only and prints each batch a writer commits
/// as one JSON line, as it lands.
struct Watch: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Print each batch committed to a store, as one JSON line, as it lands.",
        usage: "logstore-tool watch <directory> [--after <sequence>] [--count <n>]",
        discussion: """
            Opens the store read-only, so it runs beside a writer in another process, and follows the \
            writer's log: each batch committed from then on is printed as one line of JSON, written out \
            at once (here on two lines):

              {"sequence":7,"written":[{"id":5,"type":1}],"deleted":[],"freed":[],
               "freedBy":"referenceCounting","rootsSet":{"main":5},"rootsRemoved":[]}

            sequence: the batch's sequence number. written, deleted, freed: the objects it stored, \
            deleted, and those the engine collected with it, each with its type tag. freedBy: \
            "referenceCounting", or "markSweep" for a batch of a mark-sweep pass. rootsSet: each root it \
            pointed at an object, with the last object when it set a root twice. rootsRemoved: the roots \
            it removed.

            When batches cannot be listed one by one (the writer's compaction replaced segments while it \
            followed, or --after names a batch older than the open), one line says which were missed:

              {"missed":{"after":7,"through":40}}

            When the store went back to an older batch (a power cut lost batches the writer had not \
            synced yet, which it may print, or the store was replaced by an older copy), one line says to which; \
            the batches committed from then on follow, and their sequence numbers may repeat:

              {"rewound":{"to":38}}

            It says on standard error which batch it starts after once it follows the store, and runs \
            until interrupted (Ctrl-C ends it with status 0) or until --count batches are printed.
            """
    )

    @OptionGroup var store: StoreDirectory

    @Option(help: "Print the batches after this sequence number (default: from the next one committed).")
    var after: UInt64?

    @Option(help: "Stop after printing this many batches.")
    var count: Int?

    func validate() throws {
        if let count, count < 1 { throw ValidationError("--count must be at least 1, got \(count)") }
    }

    func run() throws {
        Interruption.install()
        let opened = try store.openReadOnly()
        defer { try? opened.close() }
        let newest = try opened.snapshot().sequence
        // Batches up to the open are not kept one by one: the store follows the log from there.
        if let after, after < newest { try Console.acknowledge(Self.missedLine(after: after, through: newest)) }
        let feed = try opened.changes()
        Console.error("watching \(store.directory) from batch \(newest)")
        let (after, count) = (after ?? newest, count ?? .max)
        // The feed is read in a task; this (the main) thread waits for it, and for Ctrl-C, which ends it.
        let finished = DispatchSemaphore(value: 0)
        let failure = Mutex<String?>(nil)
        let reader = Task {
            do {
                try await Self.print(feed, after: after, count: count)
            } catch {
                failure.withLock { $0 = "\(error)" }
            }
            finished.signal()
        }
        while finished.wait(timeout: .now() + .milliseconds(20)) == .timedOut {
            guard Interruption.requested else { continue }
            reader.cancel()
            finished.wait()
            return
        }
        if let failure = failure.withLock({ $0 }) { throw ToolError(failure) }
    }

    /// Prints the changes of `feed` after sequence `after` until `count` batches are printed (or the feed
    /// ends).
    private static func print(_ feed: StoreChanges, after start: UInt64, count: Int) async throws {
        var after = start
        var printed = 0
        for await change in feed {
            switch change {
            case .batch(let batch) where batch.sequence > after:
                try Console.acknowledge(line(batch))
                printed += 1
                if printed >= count { return }
            case .missed(let from, let through) where through > after:
                try Console.acknowledge(missedLine(after: max(from, after), through: through))
            case .rewound(let to):
                // Batches printed after `to` are gone; those committed from now on follow, from `to`.
                try Console.acknowledge("{\"rewound\":{\"to\":\(to)}}")
                after = min(after, to)
            default:
                continue
            }
        }
    }

    /// A batch as one JSON object.
    static func line(_ batch: CommittedBatch) -> String {
        func objects(_ changes: ObjectChanges) -> String {
            "[" + changes.map { "{\"id\":\($0.id),\"type\":\($0.typeTag)}" }.joined(separator: ",") + "]"
        }
        // Each root once, at its first place, with the batch's last target for it.
        var names: [String] = []
        var targets: [String: ObjectID] = [:]
        for change in batch.rootsSet {
            if targets.updateValue(change.target, forKey: change.name) == nil { names.append(change.name) }
        }
        let roots = names.map { name in "\(jsonString(name)):\(targets[name].map { "\($0)" } ?? "0")" }
        return "{\"sequence\":\(batch.sequence),\"written\":\(objects(batch.written)),"
            + "\"deleted\":\(objects(batch.deleted)),\"freed\":\(objects(batch.freed)),"
            + "\"freedBy\":\"\(batch.freedBy.rawValue)\",\"rootsSet\":{\(roots.joined(separator: ","))},"
            + "\"rootsRemoved\":[\(batch.rootsRemoved.map(jsonString).joined(separator: ","))]}"
    }

    /// The line for batches after `after` through `through` that are not listed one by one.
    static func missedLine(after: UInt64, through: UInt64) -> String {
        "{\"missed\":{\"after\":\(after),\"through\":\(through)}}"
    }
}
