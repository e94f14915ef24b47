import ArgumentParser
import Foundation
import LogStore

/// `history DIR [--retain NAME | --release NAME | --changes NAME | --keep-last N ...] [--json]`: a store's
/// retained moments.
struct History: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "List, retain, release or compare a store's retained moments; list or forget replica holds.",
        discussion: """
            Without an action, lists the moments (name, commit, creation time, segments, and the bytes \
            each holds that the store itself no longer has) and the holds replicas keep on compaction \
            (`replicate`), opening the store read-only. --retain NAME \
            keeps the store as of its newest commit under NAME; --release NAME frees a moment; with \
            --keep-last, --hourly-hours or --daily-days, moments (whose name starts with --prefix) that \
            no rule keeps are released. These open the store for writing (stop its writer first). \
            --changes NAME lists the objects added, changed and removed, and the roots changed, from the \
            moment to the store's newest commit. --forget-replica NAME removes a replica's hold (for a \
            replica given up: its hold keeps every newer segment from compaction). Open a moment read-only with any command on \
            DIR/history/NAME (e.g. `export DIR/history/NAME`).
            """
    )

    @OptionGroup var store: StoreDirectory

    @Option(help: "Retain the store's newest commit under this name.")
    var retain: String?

    @Option(help: "Release the moment of this name.")
    var release: String?

    @Option(help: "List what changed since the moment of this name.")
    var changes: String?

    @Option(help: "Remove the hold of this name that a replica keeps on compaction (for a replica given up).")
    var forgetReplica: String?

    @Option(help: "Retention: keep the newest N moments.")
    var keepLast: Int?

    @Option(help: "Retention: keep the newest moment of each hour for this many hours.")
    var hourlyHours: Int?

    @Option(help: "Retention: keep the newest moment of each day (UTC) for this many days.")
    var dailyDays: Int?

    @Option(help: "Retention applies only to moments whose name starts with this.")
    var prefix = ""

    @Flag(help: "Print JSON.")
    var json = false

    func validate() throws {
        let actions = [retain != nil, release != nil, changes != nil, forgetReplica != nil, retention != nil]
            .filter { $0 }.count
        guard actions <= 1 else {
            throw ValidationError(
                "give at most one of --retain, --release, --changes, --forget-replica and the retention options")
        }
        for value in [keepLast, hourlyHours, dailyDays].compactMap({ $0 }) where value < 0 || value > 1_000_000 {
            throw ValidationError("retention counts must be between 0 and 1,000,000")
        }
    }

    private var retention: RetentionPolicy? {
        guard keepLast != nil || hourlyHours != nil || dailyDays != nil else { return nil }
        return RetentionPolicy(
            keepLast: keepLast ?? 0, hourlyFor: .seconds(3_600 * (hourlyHours ?? 0)),
            dailyFor: .seconds(86_400 * (dailyDays ?? 0)), namePrefix: prefix)
    }

    func run() throws {
        if let name = retain {
            let opened = try store.openWritable()
            defer { try? opened.close() }
            let moment = try opened.retain(as: name)
            try opened.close()
            print(json ? try encode(Summary(moment)) : "retained \(moment.name) at commit \(moment.sequence)")
        } else if let name = release {
            let opened = try store.openWritable()
            defer { try? opened.close() }
            try opened.release(name)
            try opened.close()
            print(json ? try encode(["released": [name]]) : "released \(name)")
        } else if let name = forgetReplica {
            let opened = try store.openWritable()
            defer { try? opened.close() }
            try opened.forgetReplica(name)
            try opened.close()
            print(json ? try encode(["forgotten": [name]]) : "removed the replica hold \(name)")
        } else if let policy = retention {
            let opened = try store.openWritable()
            defer { try? opened.close() }
            let released = try opened.applyRetention(policy)
            try opened.close()
            print(
                json
                    ? try encode(["released": released.map(\.name)])
                    : "released \(plural(released.count, "moment"))"
                        + (released.isEmpty ? "" : ": " + released.map(\.name).joined(separator: ", ")))
        } else if let name = changes {
            let opened = try store.openReadOnly()
            defer { try? opened.close() }
            let found = try opened.changes(since: name)
            try opened.close()
            if json {
                print(try encode(ChangesSummary(found)))
            } else {
                print(
                    "since \(name): \(found.added.count) added, \(found.changed.count) changed, "
                        + "\(found.removed.count) removed, \(found.rootsSet.count) roots set, "
                        + "\(found.rootsRemoved.count) removed")
                for (label, ids) in [("added", found.added), ("changed", found.changed), ("removed", found.removed)]
                where !ids.isEmpty {
                    print(
                        "\(label): " + ids.prefix(100).map { "\($0)" }.joined(separator: " ")
                            + (ids.count > 100 ? " …" : ""))
                }
                for (root, target) in found.rootsSet.sorted(by: { $0.key < $1.key }) {
                    print("root \(root) -> \(target)")
                }
                for root in found.rootsRemoved { print("root \(root) removed") }
            }
        } else {
            let opened = try store.openReadOnly()
            defer { try? opened.close() }
            let usage = try opened.historyUsage()
            try opened.close()
            if json {
                print(
                    try encode([
                        "bytes": AnyEncodable(usage.bytes), "moments": AnyEncodable(usage.moments.map(Summary.init)),
                        "replicaHolds": AnyEncodable(usage.replicaHolds.map(HoldSummary.init)),
                    ]))
                return
            }
            print(
                "\(plural(usage.moments.count, "retained moment")), \(formatBytes(usage.bytes)) not shared with the store"
            )
            for moment in usage.moments {
                let created = Date(timeIntervalSince1970: Double(moment.createdMilliseconds) / 1_000)
                print(
                    "\(moment.name): commit \(moment.sequence), \(created.formatted(.iso8601)), "
                        + "\(plural(moment.segments, "segment")), \(formatBytes(moment.bytesNotInStore)) not in the store"
                )
            }
            for hold in usage.replicaHolds {
                let changed = Date(timeIntervalSince1970: Double(hold.changedMilliseconds) / 1_000)
                print(
                    "replica hold \(hold.name): keeps \(plural(hold.segments, "segment")) "
                        + "(\(formatBytes(hold.bytes)), from segment \(hold.oldestSegment)) from compaction; "
                        + "last pass \(changed.formatted(.iso8601))")
            }
        }
    }

    private func encode(_ value: some Encodable) throws -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
        return String(decoding: try encoder.encode(value), as: UTF8.self)
    }

    /// A moment's JSON form.
    private struct HoldSummary: Encodable {
        var name: String
        var oldestSegment: UInt32
        var segments: Int
        var bytes: UInt64
        var changedMilliseconds: UInt64

        init(_ hold: ReplicaHold) {
            name = hold.name
            oldestSegment = hold.oldestSegment
            segments = hold.segments
            bytes = hold.bytes
            changedMilliseconds = hold.changedMilliseconds
        }
    }

    private struct Summary: Encodable {
        var name: String
        var sequence: UInt64
        var createdMilliseconds: UInt64
        var segments: Int
        var bytes: UInt64
        var bytesNotInStore: UInt64
        var garbageBytesHeld: UInt64

        init(_ moment: RetainedMoment) {
            name = moment.name
            sequence = moment.sequence
            createdMilliseconds = moment.createdMilliseconds
            segments = moment.segments
            bytes = moment.bytes
            bytesNotInStore = moment.bytesNotInStore
            garbageBytesHeld = moment.garbageBytesHeld
        }
    }

    /// The JSON form of what changed since a moment.
    private struct ChangesSummary: Encodable {
        var added: [UInt64]
        var changed: [UInt64]
        var removed: [UInt64]
        var rootsSet: [String: UInt64]
        var rootsRemoved: [String]

        init(_ changes: StoreDifference) {
            added = changes.added.map(\.rawValue)
            changed = changes.changed.map(\.rawValue)
            removed = changes.removed.map(\.rawValue)
            rootsSet = changes.rootsSet.mapValues(\.rawValue)
            rootsRemoved = changes.rootsRemoved
        }
    }
}

/// Any encodable value, for JSON objects whose values differ in type.
private struct AnyEncodable: Encodable {
    let encodeValue: (Encoder) throws -> Void
    init(_ value: some Encodable) { encodeValue = value.encode(to:) }
    func encode(to encoder: Encoder) throws { try encodeValue(encoder) }
}
