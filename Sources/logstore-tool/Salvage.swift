import ArgumentParser
import Foundation
import LogStore
import LogStoreObjects

/// `salvage DIR DEST [--json]`: copies every intact record of a damaged store into a new store and says
/// exactly what was lost.
struct Salvage: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Copy every intact record of a damaged store into a new store, and list what was lost.",
        discussion: """
            DIR is only read (no lock is taken: stop its writer first). DEST must be missing or an empty \
            directory; the new store is made in DEST.salvage-partial and renamed to DEST once synced. Every \
            live object whose record reads back whole is copied with its id, and every root. Listed: the \
            damaged byte ranges (file, offsets, whether every frame in them is known, from the segment's \
            hint file or intact frames), each object lost, copied in an older version, or copied though its \
            deletion was lost (id, type name when the store's catalog names it, where), root changes lost, \
            and references to lost objects, each of which gets a placeholder record (type logstore.lost, \
            unpinned) so that DEST is a sound store. Exit code 0 when nothing was lost, 2 when DEST was made \
            but something was lost, 1 when no copy could be made. With --json: {"source", "destination", \
            "complete", "sequence", "salvagedObjects", "salvagedRoots", "lostObjects": [{"id", "typeTag", \
            "typeName", "loss", "file", "offset"}], "lostRootChanges": [{"name", "lostTarget", \
            "copiedTarget", "file", "offset"}], "damagedRanges": [{"file", "start", "end", "identified", \
            "reason"}], "danglingReferences": [{"referrer" or "root", "target"}], "placeholders": [id], \
            "notes": [text], "problems": [{"file", "offset", "message"}]} (absent fields: not known).
            """
    )

    @Argument(help: "The damaged store's directory (only read).")
    var source: String

    @Argument(help: "Where the new store goes (missing or an empty directory).")
    var destination: String

    @Flag(help: "Print the report as JSON.")
    var json = false

    func run() throws {
        try StoreDirectory(directory: source).checkNotAFile()
        let report = try Store.salvage(from: source, to: destination)
        let names = typeNames(in: destination)
        if json {
            let encoder = JSONEncoder()
            encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
            let summary = SalvageSummary(source: source, destination: destination, report: report, names: names)
            print(String(decoding: try encoder.encode(summary), as: UTF8.self))
        } else {
            printText(report, names: names)
        }
        if !report.isComplete { throw ExitCode(2) }
    }

    /// The type names the salvaged store's catalog knows, by type tag (none when it has no catalog).
    private func typeNames(in directory: String) -> [UInt32: String] {
        guard let opened = try? Store.open(at: directory, options: StoreOptions(createIfMissing: false, readOnly: true))
        else { return [:] }
        defer { try? opened.close() }
        var names = (try? ObjectInspector(opened).typeNames) ?? [:]
        names[SalvageReport.placeholderTypeTag] = "logstore.lost"
        return names
    }

    private func printText(_ report: SalvageReport, names: [UInt32: String]) {
        print("salvaged \(source) into \(destination)")
        print(
            "copied: \(plural(report.salvagedObjects, "object")), \(plural(report.salvagedRoots, "root")) "
                + "(commits up to \(report.sequence))")
        let damagedBytes = report.damagedRanges.reduce(UInt64(0)) { $0 + ($1.end - $1.start) }
        print(
            "lost: \(plural(report.lostObjects.count, "object")), "
                + "\(plural(report.lostRootChanges.count, "root change")), "
                + "\(plural(report.damagedRanges.count, "damaged range")) (\(damagedBytes) bytes), "
                + "\(plural(report.danglingReferences.count, "reference")) to lost objects "
                + "(\(plural(report.placeholders.count, "placeholder")))")
        for range in report.damagedRanges { print("damaged: \(range)") }
        for object in report.lostObjects {
            let type = object.typeTag.map { " (\(names[$0] ?? "type \($0)"))" } ?? ""
            print(
                "lost object \(object.id)\(type): \(object.loss), at \(object.file)"
                    + (object.offset.map { " @ \($0)" } ?? ""))
        }
        for change in report.lostRootChanges { print("lost \(change)") }
        for reference in report.danglingReferences { print("dangling: \(reference)") }
        for note in report.notes { print("note: \(note)") }
        for problem in report.problems { print("problem: \(problem)") }
        print(report.isComplete ? "complete: nothing was lost" : "INCOMPLETE: see what was lost above")
    }
}

/// The JSON form of a salvage report.
private struct SalvageSummary: Encodable {
    struct LostObject: Encodable {
        var id: UInt64
        var typeTag: UInt32?
        var typeName: String?
        var loss: String
        var file: String
        var offset: UInt64?
    }

    struct LostRootChange: Encodable {
        var name: String
        var lostTarget: UInt64?
        var copiedTarget: UInt64?
        var file: String
        var offset: UInt64
    }

    struct DamagedRange: Encodable {
        var file: String
        var start: UInt64
        var end: UInt64
        var identified: Bool
        var reason: String?
    }

    struct DanglingReference: Encodable {
        var referrer: UInt64?
        var root: String?
        var target: UInt64
    }

    struct Problem: Encodable {
        var file: String
        var offset: UInt64?
        var message: String
    }

    var source: String
    var destination: String
    var complete: Bool
    var sequence: UInt64
    var salvagedObjects: Int
    var salvagedRoots: Int
    var lostObjects: [LostObject]
    var lostRootChanges: [LostRootChange]
    var damagedRanges: [DamagedRange]
    var danglingReferences: [DanglingReference]
    var placeholders: [UInt64]
    var notes: [String]
    var problems: [Problem]

    init(source: String, destination: String, report: SalvageReport, names: [UInt32: String]) {
        self.source = source
        self.destination = destination
        complete = report.isComplete
        sequence = report.sequence
        salvagedObjects = report.salvagedObjects
        salvagedRoots = report.salvagedRoots
        lostObjects = report.lostObjects.map {
            LostObject(
                id: $0.id.rawValue, typeTag: $0.typeTag, typeName: $0.typeTag.flatMap { names[$0] },
                loss: $0.loss.description, file: $0.file, offset: $0.offset)
        }
        lostRootChanges = report.lostRootChanges.map {
            LostRootChange(
                name: $0.name, lostTarget: $0.lostTarget?.rawValue, copiedTarget: $0.copiedTarget?.rawValue,
                file: $0.file, offset: $0.offset)
        }
        damagedRanges = report.damagedRanges.map {
            DamagedRange(file: $0.file, start: $0.start, end: $0.end, identified: $0.isIdentified, reason: $0.reason)
        }
        danglingReferences = report.danglingReferences.map {
            DanglingReference(referrer: $0.referrer?.rawValue, root: $0.root, target: $0.target.rawValue)
        }
        placeholders = report.placeholders.map(\.rawValue)
        notes = report.notes
        problems = report.problems.map { Problem(file: $0.file, offset: $0.offset, message: $0.message) }
    }
}
