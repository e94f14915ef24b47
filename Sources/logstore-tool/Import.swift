import ArgumentParser
import Foundation
import LogStore

/// `import DIR [--input FILE] [--batch-size N]`: reads `export`'s JSON lines into a store.
struct Import: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Read objects and roots in export's JSON-lines format into a store.",
        discussion: """
            Each object is stored under the id it brings (the store's id allocator moves past it). Lines \
            are written in atomic batches of --batch-size lines. A bad line is reported as `line N: reason` \
            and ends the import with exit code 1: the batches before it are written, its own batch and \
            everything after it are not. Blank lines are skipped; "refs" may be left out.
            """
    )

    @OptionGroup var store: StoreDirectory

    @Option(name: .shortAndLong, help: "Read this file instead of standard input.")
    var input: String?

    @Option(help: "Lines per atomic batch.")
    var batchSize = 1000

    func validate() throws {
        guard batchSize >= 1 else { throw ValidationError("--batch-size must be at least 1") }
    }

    func run() throws {
        let reader = try input.map { try LineReader(path: $0) } ?? LineReader.standardInput()
        let opened = try Store.open(at: store.directory)
        defer { try? opened.close() }

        var progress = Progress()
        var batch = PendingBatch()
        var lineNumber = 0
        while let line = reader.next() {
            lineNumber += 1
            if line.allSatisfy({ $0 == UInt8(ascii: " ") || $0 == UInt8(ascii: "\t") }) { continue }
            let parsed: ImportLine
            do {
                parsed = try ImportLine(parsing: line)
            } catch {
                Console.error("line \(lineNumber): \(error)")
                reportStop(progress, batch: batch, badLine: lineNumber)
                throw ExitCode(1)
            }
            batch.add(parsed, line: lineNumber)
            if batch.lines == batchSize {
                try write(&batch, to: opened, progress: &progress)
            }
        }
        guard !reader.failed else {
            Console.error("cannot read \(input ?? "standard input") after line \(lineNumber)")
            reportStop(progress, batch: batch, badLine: nil)
            throw ExitCode(1)
        }
        try write(&batch, to: opened, progress: &progress)
        try opened.close()
        print(
            "imported \(plural(progress.objects, "object")) and \(plural(progress.roots, "root")) "
                + "from \(plural(lineNumber, "line")) in \(plural(progress.batches, "batch"))")
    }

    /// Writes the batch (ids reserved first) and starts a new one.
    private func write(_ batch: inout PendingBatch, to store: Store, progress: inout Progress) throws {
        guard !batch.operations.isEmpty else { return }
        if batch.highestID > 0 { store.reserveIDs(through: ObjectID(batch.highestID)) }
        do {
            try store.write(batch.operations)
        } catch {
            Console.error("lines \(batch.firstLine)-\(batch.lastLine): the batch was not written: \(error)")
            reportStop(progress, batch: nil, badLine: nil)
            throw ExitCode(1)
        }
        progress.objects += batch.objects
        progress.roots += batch.roots
        progress.batches += 1
        batch = PendingBatch()
    }

    private func reportStop(_ progress: Progress, batch: PendingBatch?, badLine: Int?) {
        var message = "import stopped: \(plural(progress.objects, "object")) and \(plural(progress.roots, "root")) "
        message += "written in \(plural(progress.batches, "batch"))"
        if let badLine {
            let first = batch.flatMap { $0.operations.isEmpty ? nil : $0.firstLine } ?? badLine
            let lines = first == badLine ? "line \(badLine)" : "lines \(first)-\(badLine)"
            message += "; \(lines) and everything after were not written"
        }
        Console.error(message)
    }

    private struct Progress {
        var objects = 0
        var roots = 0
        var batches = 0
    }
}

/// The operations of the batch being collected.
private struct PendingBatch {
    var operations = WriteBatch()
    var lines = 0
    var firstLine = 0
    var lastLine = 0
    var objects = 0
    var roots = 0
    /// The highest id a line names: the ids through it are reserved before the batch is written.
    var highestID: UInt64 = 0

    mutating func add(_ line: ImportLine, line number: Int) {
        if lines == 0 { firstLine = number }
        lastLine = number
        lines += 1
        switch line {
        case .object(let record):
            operations.put(record)
            objects += 1
            highestID = max(highestID, record.id.rawValue)
        case .root(let name, let id):
            operations.setRoot(name, to: id)
            roots += 1
            highestID = max(highestID, id.rawValue)
        }
    }
}

/// One line of the export format, checked.
private enum ImportLine {
    case object(Record)
    case root(String, ObjectID)

    /// The raw fields; which are required depends on the kind of line.
    private struct Fields: Decodable {
        var id: UInt64?
        var type: UInt32?
        var refs: [UInt64]?
        var payload: String?
        var root: String?
    }

    init(parsing line: [UInt8]) throws(ToolError) {
        let fields: Fields
        do {
            fields = try JSONDecoder().decode(Fields.self, from: Data(line))
        } catch let error as DecodingError {
            throw ToolError(Self.describe(error, line: line))
        } catch {
            throw ToolError("invalid JSON")
        }
        guard let id = fields.id else { throw ToolError("missing field \"id\"") }
        guard id > 0 else { throw ToolError("field \"id\" must be at least 1") }
        if let name = fields.root {
            guard !name.isEmpty, name.utf8.count <= LogStoreLimits.maxRootNameLength else {
                throw ToolError("root names have 1 to \(LogStoreLimits.maxRootNameLength) UTF-8 bytes")
            }
            self = .root(name, ObjectID(id))
            return
        }
        guard let type = fields.type else { throw ToolError("missing field \"type\"") }
        guard let encoded = fields.payload else { throw ToolError("missing field \"payload\"") }
        guard let payload = Data(base64Encoded: encoded) else {
            throw ToolError("field \"payload\" is not valid base64")
        }
        guard payload.count <= LogStoreLimits.maxPayloadSize else {
            throw ToolError("payload of \(payload.count) bytes is over the \(LogStoreLimits.maxPayloadSize)-byte limit")
        }
        let references = fields.refs ?? []
        guard references.count <= LogStoreLimits.maxReferenceCount else {
            throw ToolError("\(references.count) references, at most \(LogStoreLimits.maxReferenceCount)")
        }
        guard !references.contains(0) else { throw ToolError("field \"refs\" holds id 0, which is never valid") }
        self = .object(
            Record(
                id: ObjectID(id), typeTag: type, references: references.map { ObjectID($0) }, payload: Array(payload)))
    }

    private static func describe(_ error: DecodingError, line: [UInt8]) -> String {
        func field(_ path: [any CodingKey]) -> String {
            path.first.map { "field \"\($0.stringValue)\"" } ?? "the line"
        }
        switch error {
        case .dataCorrupted(let context) where context.codingPath.isEmpty:
            // A number out of range is reported without a path; the JSON itself may be fine.
            let parses = (try? JSONSerialization.jsonObject(with: Data(line))) != nil
            return parses ? "a field has a value out of range" : "invalid JSON"
        case .dataCorrupted(let context):
            return "\(field(context.codingPath)) has an invalid value"
        case .typeMismatch(_, let context) where context.codingPath.isEmpty:
            return "not a JSON object"
        case .typeMismatch(_, let context), .valueNotFound(_, let context):
            return "\(field(context.codingPath)) has the wrong type"
        case .keyNotFound(let key, _):
            return "missing field \"\(key.stringValue)\""
        @unknown default:
            return "invalid line"
        }
    }
}
