import ArgumentParser
import Foundation
import LogStore
import LogStoreObjects

/// `verify DIR [--json]`: checks every frame, every live record and referential integrity; exit code 0
/// when sound, 1 when not.
struct Verify: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Check every frame and live record of a store; exit 0 when sound, 1 when damaged.",
        discussion: """
            Changes nothing and takes no lock. Every problem is listed with its file and, when known, byte \
            offset: damaged frames and records, references to objects that are not live (dangling) and \
            roots that point at objects that are not live. Unreachable objects awaiting mark-sweep are a \
            note, not a problem. With --json: {"store", "sound", "segments", "frames", "dictionaries", \
            "liveObjects", "notes": [text], "problems": [{"file", "offset" (absent when not known), \
            "message"}]}, and the same exit code. When the store cannot be checked at all (not a store, \
            unreadable), the JSON is {"store", "sound": false, "error": {"code" (LogStore's error code, \
            absent for other errors), "message", "file" and "offset" (when known)}} (the error is also on \
            standard error) and the exit code 1.
            """
    )

    @OptionGroup var store: StoreDirectory

    @Flag(help: "Print the report as JSON.")
    var json = false

    func run() throws {
        var report: VerificationReport
        do {
            try store.checkNotAFile()
            report = try Store.verify(at: store.directory, cipher: try store.cipher())
            if report.isSound { try checkIndexes(&report) }
        } catch  where json {
            try printJSON(VerifyFailure(store.directory, error))
            Console.error("Error: \(error)")
            throw ExitCode(1)
        }
        if json {
            try printJSON(VerifyReport(store.directory, report))
            if !report.isSound { throw ExitCode(1) }
            return
        }
        print("store: \(store.directory)")
        print(
            "segments: \(report.segments), frames: \(report.frames), dictionaries: \(report.dictionaries), "
                + "live objects checked: \(report.liveObjects)")
        for note in report.notes {
            print("note: \(note)")
        }
        for problem in report.problems {
            // `file @ offset: message`, or `file: message` when the offset is not known.
            print("problem: \(problem)")
        }
        guard report.isSound else {
            print("DAMAGED: \(plural(report.problems.count, "problem"))")
            throw ExitCode(1)
        }
        print("sound")
    }

    /// Reads the indexes the object layer's catalog lists from the records: a unique index that two objects
    /// share a key of is a problem (saves of those objects fail until one changes). Checks the index files
    /// too: one that is damaged, or whose keys disagree with the records, is a problem.
    private func checkIndexes(_ report: inout VerificationReport) throws {
        let opened = try store.openReadOnly()
        defer { try? opened.close() }
        for index in try IndexSummary.summaries(of: opened) {
            report.notes.append(
                "index \(index.typeName).\(index.name): \(index.entries) entries of \(index.objects) objects")
            for (key, ids) in index.duplicates.sorted(by: { $0.key < $1.key }) {
                report.problems.append(
                    VerificationReport.Problem(
                        file: "index \(index.typeName).\(index.name)", offset: nil,
                        message:
                            "the unique index holds \(key) for objects \(ids.map(String.init).joined(separator: ", "))")
                )
            }
        }
        for file in try IndexFileReport.reports(of: opened) {
            report.notes.append(
                "index file \(file.fileName): \(file.objects) objects, \(file.staleObjects) changed since it was written"
                    + file.notes.map { "; \($0)" }.joined())
            for problem in file.problems {
                report.problems.append(VerificationReport.Problem(file: file.fileName, offset: nil, message: problem))
            }
        }
    }

    private func printJSON(_ value: some Encodable) throws {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
        print(String(decoding: try encoder.encode(value), as: UTF8.self))
    }
}

/// The JSON form of a `verify` that could not check the store at all.
private struct VerifyFailure: Encodable {
    struct Failure: Encodable {
        var code: String?
        var message: String
        var file: String?
        var offset: UInt64?
    }

    var store: String
    var sound = false
    var error: Failure

    init(_ directory: String, _ error: any Error) {
        store = directory
        if let error = error as? LogStoreError {
            let cause = error.underlying.map { " (cause: \($0))" } ?? ""
            self.error = Failure(
                code: error.code.name, message: error.message + cause, file: error.file, offset: error.offset)
        } else {
            self.error = Failure(message: "\(error)")
        }
    }
}

/// The JSON form of `verify`'s report.
private struct VerifyReport: Encodable {
    struct Problem: Encodable {
        var file: String
        var offset: UInt64?
        var message: String
    }

    var store: String
    var sound: Bool
    var segments: Int
    var frames: Int
    var dictionaries: Int
    var liveObjects: Int
    var notes: [String]
    var problems: [Problem]

    init(_ directory: String, _ report: VerificationReport) {
        store = directory
        sound = report.isSound
        segments = report.segments
        frames = report.frames
        dictionaries = report.dictionaries
        liveObjects = report.liveObjects
        notes = report.notes
        problems = report.problems.map { Problem(file: $0.file, offset: $0.offset, message: $0.message) }
    }
}
