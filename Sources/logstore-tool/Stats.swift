import ArgumentParser
import Foundation
import LogStore
import LogStoreObjects

/// `stats DIR [--json]`: segments (live and garbage bytes, active or compaction output), objects,
/// reachable objects, types, bytes, roots and index memory of a store.
struct Stats: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: """
            Print a store's segments, objects, reachable objects, types, bytes (per type also bytes on disk \
            per payload byte), roots and index memory.
            """,
        discussion: """
            Opens the store read-only, without the write lock, so it works beside a writer. Per segment: its \
            bytes, the bytes of live records and the garbage that compaction could reclaim, and whether it is \
            the active segment (the one written to, never compacted while it is) or a compaction output. \
            Reachable objects are those a mark-sweep pass keeps: reachable through references from a named \
            root or a pinned object; the others await the next mark-sweep (`compact` runs one).
            """
    )

    @OptionGroup var store: StoreDirectory

    @Flag(help: "Print JSON instead of text.")
    var json = false

    /// How many roots the text output lists by name.
    private static let rootsListed = 20

    func run() throws {
        let opened = try store.openReadOnly()
        let statistics = try opened.statistics()
        let roots = try opened.roots()
        let reachable = try opened.reachableObjectCount()
        let recovery = opened.recovery
        let typeNames = (try? ObjectInspector(opened))?.typeNames ?? [:]
        let indexes = try IndexSummary.summaries(of: opened)
        let view = try opened.snapshot()
        let space = view.spaceByType()
        let byDictionary = view.spaceByDictionary()
        let dictionaries = view.dictionaries()
        let history = try opened.historyUsage()
        try opened.close()
        var report = StatsReport(
            directory: store.directory, statistics: statistics, reachable: reachable, roots: roots, recovery: recovery,
            typeNames: typeNames)
        report.indexes = indexes
        report.history = StatsReport.History(
            bytes: history.bytes, garbageBytesHeld: history.garbageBytesHeld,
            moments: history.moments.map {
                StatsReport.Moment(
                    name: $0.name, sequence: $0.sequence, createdMilliseconds: $0.createdMilliseconds,
                    segments: $0.segments, bytes: $0.bytes, bytesNotInStore: $0.bytesNotInStore,
                    garbageBytesHeld: $0.garbageBytesHeld)
            })
        report.history.replicaHolds = history.replicaHolds.map {
            StatsReport.ReplicaHoldSummary(
                name: $0.name, oldestSegment: $0.oldestSegment, segments: $0.segments, bytes: $0.bytes,
                changedMilliseconds: $0.changedMilliseconds)
        }
        report.spaceByType = Dictionary(
            uniqueKeysWithValues: space.map { tag, space in
                (
                    String(tag),
                    StatsReport.RecordSpace(
                        records: space.records, frameBytes: space.frameBytes, payloadBytes: space.payloadBytes)
                )
            })
        report.dictionaries = dictionaries.map { dictionary in
            let space = byDictionary[dictionary.id]
            return StatsReport.DictionarySpace(
                id: dictionary.id, bytes: dictionary.bytes, records: space?.records ?? 0,
                frameBytes: space?.frameBytes ?? 0, payloadBytes: space?.payloadBytes ?? 0)
        }
        if let none = byDictionary[0] {
            report.withoutDictionary = StatsReport.RecordSpace(
                records: none.records, frameBytes: none.frameBytes, payloadBytes: none.payloadBytes)
        }
        report.types = StatsReport.types(counts: statistics.countsByType, space: space, names: typeNames)
        if json {
            let encoder = JSONEncoder()
            encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
            let data = try encoder.encode(report)
            print(String(decoding: data, as: UTF8.self))
        } else {
            printText(report)
        }
    }

    /// A type for people: its name with the tag beside it (`Circle (tag 2166834857)`), or `tag 7`
    /// when no name is known.
    private func typeLabel(_ tag: String, _ report: StatsReport) -> String {
        report.typeNames[tag].map { "\($0) (tag \(tag))" } ?? "tag \(tag)"
    }

    private func printText(_ report: StatsReport) {
        print("store: \(report.directory)")
        print(
            "segments: \(report.segments.count), \(formatBytes(report.totalBytes)) "
                + "(\(formatBytes(report.liveBytes)) live, \(formatBytes(report.garbageBytes)) garbage)")
        if !report.segments.isEmpty {
            let header = ["segment", "bytes", "live bytes", "garbage bytes", "kind"]
            let rows = report.segments.map { segment in
                [
                    (segment.file as NSString).lastPathComponent, String(segment.bytes), String(segment.liveBytes),
                    String(segment.garbageBytes),
                    [segment.isActive ? "active" : nil, segment.isCompactionOutput ? "compaction output" : nil]
                        .compactMap { $0 }.joined(separator: ", "),
                ]
            }
            let widths = header.indices.map { column in
                ([header] + rows).map { $0[column].count }.max() ?? 0
            }
            for row in [header] + rows {
                let cells = row.enumerated().map { column, cell in
                    let padding = String(repeating: " ", count: widths[column] - cell.count)
                    return column == 0 || column == row.count - 1 ? cell + padding : padding + cell
                }
                var line = "  " + cells.joined(separator: "  ")
                while line.last == " " { line.removeLast() }
                print(line)
            }
        }
        let types = report.countsByType.sorted { (UInt32($0.key) ?? 0) < (UInt32($1.key) ?? 0) }
            .map { "\(typeLabel($0.key, report)): \($0.value)" }
        print("live objects: \(report.liveObjects)" + (types.isEmpty ? "" : " (\(types.joined(separator: ", ")))"))
        let unreachable = report.liveObjects - report.reachableObjects
        print(
            "reachable objects: \(report.reachableObjects)"
                + (unreachable > 0 ? " (\(unreachable) unreachable, awaiting mark-sweep)" : ""))
        print("roots: \(report.roots.count)")
        for (name, id) in report.roots.sorted(by: { $0.key < $1.key }).prefix(Self.rootsListed) {
            print("  \(name) -> \(id)")
        }
        if report.roots.count > Self.rootsListed {
            print("  ... and \(report.roots.count - Self.rootsListed) more")
        }
        if !report.spaceByType.isEmpty {
            print("space of live records (frame bytes ÷ payload bytes):")
            for (tag, space) in report.spaceByType.sorted(by: { (UInt32($0.key) ?? 0) < (UInt32($1.key) ?? 0) }) {
                let ratio = space.payloadBytes == 0 ? 0 : Double(space.frameBytes) / Double(space.payloadBytes)
                print(
                    "  \(typeLabel(tag, report)): \(space.records) records, \(formatBytes(space.frameBytes)) for "
                        + "\(formatBytes(space.payloadBytes)) of payload, \(String(format: "%.3f", ratio))")
            }
        }
        if !report.dictionaries.isEmpty || report.withoutDictionary != nil {
            print("space of live records by compression dictionary (frame bytes ÷ payload bytes):")
            for dictionary in report.dictionaries {
                let ratio =
                    dictionary.payloadBytes == 0 ? 0 : Double(dictionary.frameBytes) / Double(dictionary.payloadBytes)
                print(
                    "  dictionary \(dictionary.id) (\(formatBytes(UInt64(dictionary.bytes)))): \(dictionary.records) records, "
                        + "\(formatBytes(dictionary.frameBytes)) for \(formatBytes(dictionary.payloadBytes)) of payload, "
                        + String(format: "%.3f", ratio))
            }
            if let none = report.withoutDictionary {
                let ratio = none.payloadBytes == 0 ? 0 : Double(none.frameBytes) / Double(none.payloadBytes)
                print(
                    "  no dictionary: \(none.records) records, \(formatBytes(none.frameBytes)) for "
                        + "\(formatBytes(none.payloadBytes)) of payload, \(String(format: "%.3f", ratio))")
            }
        }
        print("index memory: \(formatBytes(UInt64(report.indexMemoryBytes)))")
        if !report.indexes.isEmpty {
            print("secondary indexes (in memory, built from the records on first use):")
            for index in report.indexes {
                print(
                    "  \(index.typeName).\(index.name)\(index.isUnique ? " (unique)" : ""): "
                        + "\(index.entries) entries of \(index.objects) objects"
                        + (index.absent > 0 ? ", \(index.absent) without the field" : "")
                        + ", about \(formatBytes(UInt64(index.estimatedMemoryBytes))) of memory")
            }
        }
        print("next id: \(report.nextID)")
        if !report.history.moments.isEmpty {
            print(
                "history: \(plural(report.history.moments.count, "retained moment")), "
                    + "\(formatBytes(report.history.bytes)) of files not shared with the store, "
                    + "\(formatBytes(report.history.garbageBytesHeld)) of garbage held in the store's segments")
            for moment in report.history.moments {
                print(
                    "  \(moment.name): commit \(moment.sequence), \(plural(moment.segments, "segment")), "
                        + "\(formatBytes(moment.bytesNotInStore)) not in the store, "
                        + "\(formatBytes(moment.garbageBytesHeld)) of garbage held")
            }
        }
        for hold in report.history.replicaHolds {
            print(
                "replica hold \(hold.name): \(plural(hold.segments, "segment")) (\(formatBytes(hold.bytes))) kept from "
                    + "compaction")
        }
        if let recovery = report.recovery {
            print("torn tail (cut by the next writable open): \(recovery)")
        }
    }
}

/// The statistics `stats` prints, and their JSON form.
private struct StatsReport: Encodable {
    struct Segment: Encodable {
        var number: UInt32
        var file: String
        var bytes: UInt64
        var liveBytes: UInt64
        var garbageBytes: UInt64
        /// Whether this is the segment being written (never compacted while it is).
        var isActive: Bool
        /// Whether compaction wrote this segment.
        var isCompactionOutput: Bool
    }

    var directory: String
    var segments: [Segment]
    var liveObjects: Int
    /// Live objects reachable from a named root or a pinned object; the rest await mark-sweep.
    var reachableObjects: Int
    /// Live objects per type tag, the tag in decimal.
    var countsByType: [String: Int]
    /// The type names of the tags, for objects saved through LogStoreObjects (from its field-name records).
    var typeNames: [String: String]
    var totalBytes: UInt64
    var liveBytes: UInt64
    var garbageBytes: UInt64
    /// Every named root and the id it points at.
    var roots: [String: UInt64]
    var indexMemoryBytes: Int
    var nextID: UInt64
    /// A torn tail that a read-only open saw and left in place.
    var recovery: String?
    /// Per type tag, the live records' frame bytes and payload bytes.
    var spaceByType: [String: RecordSpace] = [:]
    /// Per type, keyed by its name (the tag in decimal when no name is known): the tag, the live
    /// objects, and the frame and payload bytes of their records.
    var types: [String: TypeSummary] = [:]
    /// The store's compression dictionaries, with the live records compressed against each.
    var dictionaries: [DictionarySpace] = []
    /// The live records compressed against no dictionary.
    var withoutDictionary: RecordSpace?
    /// The indexes the object layer's classes declare (kept in memory by an object store), measured.
    var indexes: [IndexSummary] = []
    /// The retained moments and what they cost on disk beside the store.
    var history = History(bytes: 0, garbageBytesHeld: 0, moments: [])

    struct History: Encodable {
        /// Bytes of the moments' files the store no longer has, each file counted once.
        var bytes: UInt64
        /// Garbage in the store's segments that moments hold, each segment once.
        var garbageBytesHeld: UInt64
        var moments: [Moment]
        /// The holds replicas keep on compaction (`replicate`).
        var replicaHolds: [ReplicaHoldSummary] = []
    }

    struct ReplicaHoldSummary: Encodable {
        var name: String
        var oldestSegment: UInt32
        var segments: Int
        var bytes: UInt64
        var changedMilliseconds: UInt64
    }

    struct Moment: Encodable {
        var name: String
        var sequence: UInt64
        var createdMilliseconds: UInt64
        var segments: Int
        var bytes: UInt64
        var bytesNotInStore: UInt64
        var garbageBytesHeld: UInt64
    }

    struct DictionarySpace: Encodable {
        var id: UInt32
        /// Size of the dictionary's content.
        var bytes: Int
        var records: Int
        var frameBytes: UInt64
        var payloadBytes: UInt64
    }

    struct RecordSpace: Encodable {
        var records: Int
        var frameBytes: UInt64
        var payloadBytes: UInt64
    }

    struct TypeSummary: Encodable {
        var tag: UInt32
        var objects: Int
        var frameBytes: UInt64
        var payloadBytes: UInt64
    }

    /// ``types`` from the counts and space per tag and the names of the tags.
    static func types(
        counts: [UInt32: Int], space: [UInt32: Snapshot.RecordSpace], names: [UInt32: String]
    ) -> [String: TypeSummary] {
        var types: [String: TypeSummary] = [:]
        for tag in Set(counts.keys).union(space.keys).sorted() {
            var key = names[tag] ?? String(tag)
            if types[key] != nil { key += " (tag \(tag))" }  // a name that reads like another tag
            types[key] = TypeSummary(
                tag: tag, objects: counts[tag] ?? 0, frameBytes: space[tag]?.frameBytes ?? 0,
                payloadBytes: space[tag]?.payloadBytes ?? 0)
        }
        return types
    }

    init(
        directory: String, statistics: StoreStatistics, reachable: Int, roots: [String: ObjectID],
        recovery: RecoveryReport?, typeNames: [UInt32: String]
    ) {
        self.directory = directory
        segments = statistics.segments.map { segment in
            Segment(
                number: segment.number, file: segment.file, bytes: segment.bytes, liveBytes: segment.liveBytes,
                garbageBytes: segment.garbageBytes, isActive: segment.isActive,
                isCompactionOutput: segment.isCompactionOutput)
        }
        liveObjects = statistics.liveObjects
        reachableObjects = reachable
        countsByType = Dictionary(uniqueKeysWithValues: statistics.countsByType.map { (String($0.key), $0.value) })
        self.typeNames = Dictionary(
            uniqueKeysWithValues: typeNames.filter { statistics.countsByType[$0.key] != nil }.map {
                (String($0.key), $0.value)
            })
        totalBytes = statistics.totalBytes
        liveBytes = statistics.liveBytes
        garbageBytes = statistics.garbageBytes
        self.roots = roots.mapValues(\.rawValue)
        indexMemoryBytes = statistics.indexMemoryBytes
        nextID = statistics.nextID.rawValue
        self.recovery = recovery.map(String.init(describing:))
    }
}
