import ArgumentParser
import Foundation
import LogStore

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// `import DIR [--input FILE] [--batch-size N]`: reads `export`'s JSON lines into a store.
struct Import: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Read objects and roots in export's JSON-lines format into a store.",
        discussion: """
            Each object is stored under the id it brings, with its pin ("pinned" defaults to true when \
            missing), and the store's id allocator moves past the highest id. An id above \
            4611686018427387904 (2^62) is refused unless the store has reserved it already (it is below the \
            store's next id), so that at least 2^62-1 ids stay for new objects. The whole input is read and \
            checked first: a bad line is reported as `line N: reason`, and then nothing at all is written and the exit \
            code is 1. A reference to an object that is neither in the input nor live in the store is a \
            bad line. Objects are then written dependencies first (an object after the objects it refers \
            to; objects that refer to each other in a cycle together), in atomic batches of about \
            --batch-size objects (a cycle is never split, so a batch may be larger); the roots go in the \
            last batch. Blank lines are skipped; "refs" may be left out. Standard input that is not a \
            regular file is copied to an unlinked temporary file as it is read, to be read again when \
            written. The fields `export --decoded` adds ("typeName", "decoded", "text") are ignored; a \
            line that has them but no "payload" (`export --decoded-only`) is a bad line. Objects already in \
            the store under an imported id are replaced, which may free what only they referred to (and \
            then a later batch that refers to that may be refused).

            Ctrl-C stops the import after the batch being written (a second Ctrl-C ends it at once) and says \
            what was written: the batches, objects and the last line L such that the objects of lines 1 … L \
            are all written; the process then ends by SIGINT (exit status 130 in a shell). Run the same import again with --resume-after-line L \
            to finish it (the objects of lines 1 … L must then be in the store as those lines have them); \
            the roots are set only by the last batch. What an unfinished import wrote and no root or pinned \
            object reaches is freed by `logstore-tool compact`; objects it replaced are not restored.
            """
    )

    @OptionGroup var store: StoreDirectory

    @Option(name: .shortAndLong, help: "Read this file instead of standard input.")
    var input: String?

    @Option(help: "Objects per atomic batch (a cycle of objects is never split).")
    var batchSize = 1000

    @Option(
        help: """
            Do not write the objects of lines 1 … N again: an import stopped by Ctrl-C wrote them (they must \
            be live in the store); later lines and all roots are imported as usual.
            """)
    var resumeAfterLine: Int?

    /// For tests of Ctrl-C: after each batch, say so on standard error and wait this many milliseconds.
    @Option(help: .private)
    var testPauseAfterBatch: Int?

    /// For tests of Ctrl-C: once the input is read and checked, say so on standard error and wait this
    /// many milliseconds.
    @Option(help: .private)
    var testPauseAfterReading: Int?

    /// How many bad lines are listed before the rest are only counted.
    private static let badLinesListed = 20

    func validate() throws {
        guard batchSize >= 1 else { throw ValidationError("--batch-size must be at least 1") }
        if let resumeAfterLine, resumeAfterLine < 0 {
            throw ValidationError("--resume-after-line must be a line number (0 or more)")
        }
        for (name, pause) in [("batch", testPauseAfterBatch), ("reading", testPauseAfterReading)] {
            if let pause, !(0...60_000).contains(pause) {
                throw ValidationError("--test-pause-after-\(name) must be 0 … 60000 milliseconds")
            }
        }
    }

    func run() throws {
        Interruption.install()
        do {
            try importInput()
        } catch is Interrupted {
            Interruption.endProcess()
        }
    }

    /// The import; throws ``Interrupted`` when a Ctrl-C stopped it (after saying so).
    private func importInput() throws {
        let source = try ImportSource(path: input)
        // A new store is created only once the input is known to be good: a refused import leaves a
        // missing or empty folder as it was.
        let existing = try store.openWritableIfPresent()
        defer { try? existing?.close() }
        let plan = try read(source, checkingAgainst: existing)
        if let testPauseAfterReading {
            Console.error("test: input read")
            usleep(UInt32(testPauseAfterReading) * 1000)
        }
        if Interruption.requested {
            Console.error(
                "import interrupted (Ctrl-C) after reading the input: nothing was written"
                    + (existing == nil ? " (no store was created)" : ""))
            throw Interrupted()
        }
        let opened = try existing ?? store.openWritable(createIfMissing: true)
        defer { try? opened.close() }

        let (batches, largestCycle) = plan.batches(of: batchSize)
        var written = Progress(objectCount: plan.objects.count)
        do {
            if plan.highestID > 0 { try opened.reserveIDs(through: ObjectID(plan.highestID)) }
            for (number, members) in batches.enumerated() {
                if Interruption.requested { break }
                var batch = WriteBatch()
                batch.reserveCapacity(members.count)
                for member in members {
                    batch.put(try source.record(plan.objects[member]))
                }
                let last = number == batches.count - 1
                if last {
                    for root in plan.roots { batch.setRoot(root.name, to: ObjectID(root.id)) }
                }
                do {
                    try opened.write(batch)
                } catch {
                    throw ToolError(
                        "batch \(number + 1) of \(batches.count) (\(plural(members.count, "object"))) was not "
                            + "written: \(error)")
                }
                written.objects += members.count
                written.roots += last ? plan.roots.count : 0
                written.batches += 1
                for member in members { written.members[member] = true }
                if let testPauseAfterBatch {
                    Console.error("test: batch \(number + 1) of \(batches.count) written")
                    usleep(UInt32(testPauseAfterBatch) * 1000)
                }
            }
            try opened.close()
        } catch {
            Console.error("\(error)")
            Console.error(
                "import stopped: \(plural(written.objects, "object")) and \(plural(written.roots, "root")) "
                    + "written in \(plural(written.batches, "batch"))")
            throw ExitCode(1)
        }
        if written.batches < batches.count {
            reportInterruption(plan, written, batchCount: batches.count, intoExistingStore: existing != nil)
            throw Interrupted()
        }
        let resumed =
            plan.skipped.isEmpty
            ? "" : " (\(plural(plan.skipped.count, "object")) of lines 1 … \(resumeAfterLine ?? 0) were written before)"
        print(
            "imported \(plural(written.objects, "object")) and \(plural(written.roots, "root")) "
                + "from \(plural(plan.lines, "line")) in \(plural(written.batches, "batch"))" + resumed)
        if let largestCycle, largestCycle > batchSize {
            print("note: \(largestCycle) objects that refer to each other in a cycle were written in one batch")
        }
    }

    /// Reads and checks the whole input against `target` (nil: a new store, with nothing in it); reports
    /// every bad line and exits 1 when there is any.
    private func read(_ source: ImportSource, checkingAgainst target: Store?) throws -> ImportPlan {
        var plan = ImportPlan()
        var bad: [(line: Int, reason: String)] = []
        /// Ids of object lines that are bad: references to them are not reported again.
        var badIDs: Set<UInt64> = []
        var rootLines: [String: Int] = [:]
        var lineNumber = 0
        // Ids below it are reserved in the store already: any of them may be imported.
        let nextID = try target?.statistics().nextID.rawValue ?? 1
        while let (line, location) = try source.next() {
            lineNumber += 1
            if Interruption.requested { break }
            if line.allSatisfy({ $0 == UInt8(ascii: " ") || $0 == UInt8(ascii: "\t") }) { continue }
            let parsed: ImportLine
            do {
                parsed = try ImportLine(parsing: line)
            } catch {
                bad.append((lineNumber, "\(error)"))
                if let id = ImportLine.objectID(in: line) { badIDs.insert(id) }
                continue
            }
            switch parsed {
            case .object(let record):
                let id = record.id.rawValue
                if let problem = idRangeProblem(id) ?? reservationProblem(id, nextID: nextID) {
                    bad.append((lineNumber, problem))
                    continue
                }
                if let first = plan.positions[id].map({ plan.objects[$0].line }) ?? plan.skipped[id] {
                    bad.append((lineNumber, "object \(id) appears again (first on line \(first))"))
                    continue
                }
                if let resumeAfterLine, lineNumber <= resumeAfterLine {
                    plan.skipped[id] = lineNumber
                    // The object must be in the store as the line has it (one missing is reported below).
                    if let stored = try target?.get(record.id), let difference = Self.difference(stored, record) {
                        bad.append(
                            (
                                lineNumber,
                                "object \(id) in the store differs from line \(lineNumber): \(difference), so the "
                                    + "import cannot resume after line \(resumeAfterLine) (import without "
                                    + "--resume-after-line to replace it)"
                            ))
                    }
                    continue
                }
                plan.positions[id] = plan.objects.count
                plan.objects.append(
                    ImportObject(
                        id: id, references: record.references.map(\.rawValue), isPinned: record.isPinned,
                        line: lineNumber, location: location))
                plan.highestID = max(plan.highestID, id)
            case .root(let name, let id):
                if let problem = idRangeProblem(id.rawValue) {
                    bad.append((lineNumber, problem))
                    continue
                }
                if let first = rootLines[name] {
                    bad.append((lineNumber, "root \(jsonString(name)) appears again (first on line \(first))"))
                    continue
                }
                rootLines[name] = lineNumber
                // A root names an object of the input or one live in the store (checked below): its id
                // needs no reservation of its own.
                plan.roots.append(ImportRoot(name: name, id: id.rawValue, line: lineNumber))
            }
        }
        plan.lines = lineNumber
        if Interruption.requested {
            Console.error(
                "import interrupted (Ctrl-C) while reading line \(lineNumber + (source.interrupted ? 1 : 0)): "
                    + "nothing was written")
            throw Interrupted()
        }
        if let reason = source.failure {
            Console.error("cannot read \(source.name) after line \(lineNumber): \(reason)")
            Console.error("import stopped: nothing was written")
            throw ExitCode(1)
        }

        // Every reference and root must name an object of the input or one live in the store.
        var liveInStore: [UInt64: Bool] = [:]
        func isKnown(_ id: UInt64) throws -> Bool {
            if plan.positions[id] != nil || badIDs.contains(id) { return true }
            // An object of a skipped line is known when it is live in the store (checked below).
            if let known = liveInStore[id] { return known }
            let known = try target?.contains(ObjectID(id)) ?? false
            liveInStore[id] = known
            return known
        }
        for object in plan.objects {
            let unknown = try object.references.filter { try !isKnown($0) }
            guard let first = unknown.first else { continue }
            let more = Set(unknown).count - 1
            bad.append(
                (
                    object.line,
                    "object \(object.id) refers to unknown object \(first)"
                        + (more > 0 ? " (and \(plural(more, "other unknown object")))" : "")
                ))
        }
        for (id, line) in plan.skipped where try !isKnown(id) {
            bad.append(
                (
                    line,
                    "object \(id) is not in the store, so the import cannot resume after line \(resumeAfterLine ?? 0) "
                        + "(import without --resume-after-line)"
                ))
        }
        for root in plan.roots where try !isKnown(root.id) {
            bad.append((root.line, "root \(jsonString(root.name)) points at unknown object \(root.id)"))
        }

        guard bad.isEmpty else {
            bad.sort { $0.line < $1.line }
            for (line, reason) in bad.prefix(Self.badLinesListed) {
                Console.error("line \(line): \(reason)")
            }
            if bad.count > Self.badLinesListed {
                Console.error("... and \(plural(bad.count - Self.badLinesListed, "more bad line"))")
            }
            Console.error("import stopped: \(plural(bad.count, "bad line")) of \(lineNumber); nothing was written")
            throw ExitCode(1)
        }
        return plan
    }

    /// Why `id` cannot be stored (0, or larger than the largest object id), or nil.
    private func idRangeProblem(_ id: UInt64) -> String? {
        let largest = LogStoreLimits.maxObjectID.rawValue
        guard id == 0 || id > largest else { return nil }
        return "object id \(id) is outside the ids a store holds (1 … \(largest))"
    }

    /// Why an object line may not bring `id`, or nil: an id above 2^62 that the store has not reserved
    /// already (`nextID` is the next id it would hand out) would move its id allocator beyond the ids a
    /// store keeps free for new objects.
    private func reservationProblem(_ id: UInt64, nextID: UInt64) -> String? {
        let limit = LogStoreLimits.maxReservableID.rawValue
        guard id > limit, id >= nextID else { return nil }
        return "object id \(id) is over \(limit) (2^62) and not reserved in the store (its next id is "
            + "\(nextID)): ids above 2^62 are refused so that at least 2^62−1 ids stay for new objects"
    }

    /// How `stored` (in the store) differs from `line` (an input line of the same id), or nil when they
    /// are the same.
    private static func difference(_ stored: Record, _ line: Record) -> String? {
        var differences: [String] = []
        if stored.typeTag != line.typeTag {
            differences.append("tag \(stored.typeTag) in the store, tag \(line.typeTag) on the line")
        }
        if stored.references != line.references {
            let short = stored.references.count <= 8 && line.references.count <= 8
            func listed(_ references: [ObjectID]) -> String {
                short ? "[\(references.map { "\($0.rawValue)" }.joined(separator: ", "))]" : "\(references.count)"
            }
            differences.append(
                "the references differ (\(listed(stored.references)) in the store, \(listed(line.references)) on the line)"
            )
        }
        if stored.isPinned != line.isPinned {
            differences.append(
                stored.isPinned
                    ? "pinned in the store, unpinned on the line" : "unpinned in the store, pinned on the line")
        }
        if stored.payload != line.payload {
            differences.append(
                "the payloads differ (\(plural(stored.payload.count, "byte")) in the store, "
                    + "\(plural(line.payload.count, "byte")) on the line)")
        }
        return differences.isEmpty ? nil : differences.joined(separator: "; ")
    }

    /// Says on standard error what an import stopped by Ctrl-C wrote, and how to finish or undo it.
    private func reportInterruption(
        _ plan: ImportPlan, _ written: Progress, batchCount: Int, intoExistingStore: Bool
    ) {
        let firstMissing = written.members.firstIndex(of: false).map { plan.objects[$0].line }
        let complete = (firstMissing ?? plan.lines + 1) - 1
        let pinned = plan.objects.indices.filter { written.members[$0] && plan.objects[$0].isPinned }.count
        let roots =
            switch plan.roots.count {
            case 0: "the input sets no root"
            case 1: "no root set (the root goes in the last batch)"
            case let count: "no root set (the \(count) roots go in the last batch)"
            }
        Console.error(
            "import interrupted (Ctrl-C): \(written.batches) of \(plural(batchCount, "batch")) written, "
                + "\(written.objects) of \(plural(plan.objects.count, "object")); \(roots)")
        Console.error(
            complete > 0
                ? "the objects of lines 1 … \(complete) are written; later lines are not, or only some of them"
                : "no line is written completely")
        Console.error(
            "to finish: run the same import again with --resume-after-line \(complete) "
                + "(the objects of lines 1 … \(complete) are then checked to be in the store as the lines have "
                + "them, not written again)")
        let pinnedStay = pinned == 1 ? "the pinned object written stays" : "the \(pinned) pinned objects written stay"
        let replaced = intoExistingStore ? "; objects the import replaced (same id) are not restored" : ""
        let unpinned = plural(written.objects - pinned, "unpinned object")
        Console.error(
            "to undo: `logstore-tool compact \(store.directory)` frees what nothing reaches (at most \(unpinned) "
                + "written: one that a root or a pinned object refers to stays); \(pinnedStay) live until deleted"
                + replaced)
    }

    private struct Progress {
        var objects = 0
        var roots = 0
        var batches = 0
        /// Whether each object of the plan was written.
        var members: [Bool]

        init(objectCount: Int) { members = [Bool](repeating: false, count: objectCount) }
    }
}

/// Where a line of the input is, to read it again.
struct LineLocation {
    /// Byte offset of the line's first byte in the file it is re-read from.
    var offset: Int64
    /// Bytes of the line, without its line break.
    var length: Int
}

/// An object line of the input: what ordering needs, without the payload (read again when written).
private struct ImportObject {
    var id: UInt64
    var references: [UInt64]
    var isPinned: Bool
    var line: Int
    var location: LineLocation
}

/// A root line of the input.
private struct ImportRoot {
    var name: String
    var id: UInt64
    var line: Int
}

/// The checked input: its objects and roots, and the order to write them in.
private struct ImportPlan {
    var objects: [ImportObject] = []
    /// Index in `objects` of each object id.
    var positions: [UInt64: Int] = [:]
    var roots: [ImportRoot] = []
    /// The highest id any object line brings.
    var highestID: UInt64 = 0
    /// Objects of the lines `--resume-after-line` skips (written by an earlier import): id and line.
    var skipped: [UInt64: Int] = [:]
    var lines = 0

    /// Objects (indices into `objects`) in batches: whole strongly connected components of the
    /// reference graph, dependencies first, about `size` objects a batch. References to objects that
    /// are not in the input (live in the store already) are no edges.
    ///
    /// The roots go in the last batch; with roots but no objects there is one empty batch for them.
    /// Also returns the size of the largest group of objects that refer to each other, when there is a cycle.
    func batches(of size: Int) -> (batches: [[Int]], largestCycle: Int?) {
        var graph = ReferenceGraph(nodeCount: objects.count)
        for object in objects {
            graph.addNode(edges: object.references.lazy.compactMap { positions[$0] })
        }
        var batches: [[Int]] = []
        var current: [Int] = []
        var largestCycle: Int?
        for component in graph.stronglyConnectedComponents() {
            if component.count > 1 || objects[component[0]].references.contains(objects[component[0]].id) {
                largestCycle = max(largestCycle ?? 0, component.count)
            }
            if !current.isEmpty, current.count + component.count > size {
                batches.append(current)
                current = []
            }
            current += component
        }
        if !current.isEmpty || (batches.isEmpty && !roots.isEmpty) { batches.append(current) }
        return (batches, largestCycle)
    }
}

/// The input lines: read once in order, then read again by location when they are written.
///
/// A file is re-read where it is; standard input that is not a regular file (a pipe) is copied to
/// an unlinked temporary file as it is read.
private final class ImportSource {
    /// The input's name for messages.
    let name: String
    private let reader: LineReader
    /// Where lines are re-read from, and the offset there of the reader's first byte.
    private let descriptor: Int32
    private let base: Int64
    private let spool: SpoolFile?

    init(path: String?) throws {
        if let path {
            name = path
            reader = try LineReader(path: path)
            descriptor = reader.fileDescriptor
            base = 0
            spool = nil
            return
        }
        name = "standard input"
        reader = LineReader.standardInput()
        var info = stat()
        let position = lseek(STDIN_FILENO, 0, SEEK_CUR)
        if position >= 0, fstat(STDIN_FILENO, &info) == 0, info.st_mode & S_IFMT == S_IFREG {
            descriptor = STDIN_FILENO
            base = Int64(position)
            spool = nil
        } else {
            let spool = try SpoolFile()
            descriptor = spool.descriptor
            base = 0
            self.spool = spool
        }
    }

    /// The next line and where to find it again, or nil at the end of the input.
    func next() throws -> (line: [UInt8], location: LineLocation)? {
        guard let line = reader.next() else { return nil }
        if let spool {
            return (line, LineLocation(offset: try spool.append(line), length: line.count))
        }
        return (line, LineLocation(offset: base + reader.lineOffset, length: line.count))
    }

    /// Why reading stopped before the end of the input, when it stopped on an error.
    var failure: String? { reader.readError.map { String(cString: strerror($0)) } }

    /// Whether reading stopped because of a Ctrl-C.
    var interrupted: Bool { reader.interrupted }

    /// The record of `object`, read again; the line must still say what it said.
    func record(_ object: ImportObject) throws -> Record {
        try spool?.flush()
        var bytes = [UInt8](repeating: 0, count: object.location.length)
        var done = 0
        while done < bytes.count {
            let count = bytes.withUnsafeMutableBytes { buffer in
                pread(
                    descriptor, buffer.baseAddress.map { $0 + done }, buffer.count - done,
                    off_t(object.location.offset) + off_t(done))
            }
            if count < 0, errno == EINTR { continue }
            guard count > 0 else {
                let reason = count < 0 ? String(cString: strerror(errno)) : "the input is shorter"
                throw ToolError("cannot read line \(object.line) of \(name) again: \(reason)")
            }
            done += count
        }
        guard case .object(let record) = try? ImportLine(parsing: bytes), record.id.rawValue == object.id,
            record.references.map(\.rawValue) == object.references
        else {
            throw ToolError("line \(object.line) of \(name) changed during the import")
        }
        return record
    }
}

/// An unlinked temporary file that lines are appended to, in large writes.
private final class SpoolFile {
    /// The open file.
    let descriptor: Int32
    private var buffer: [UInt8] = []
    private var size: Int64 = 0

    init() throws {
        let base = FileManager.default.temporaryDirectory.path
        var template = Array((base + "/logstore-import-XXXXXX").utf8CString)
        let descriptor = template.withUnsafeMutableBufferPointer { buffer in
            buffer.baseAddress.map { mkstemp($0) } ?? -1
        }
        guard descriptor >= 0 else {
            throw ToolError("cannot create a temporary file in \(base): \(String(cString: strerror(errno)))")
        }
        template.withUnsafeBufferPointer { buffer in
            if let path = buffer.baseAddress { _ = unlink(path) }
        }
        self.descriptor = descriptor
    }

    deinit { close(descriptor) }

    /// Appends `line` and a line break; returns the line's offset.
    func append(_ line: [UInt8]) throws -> Int64 {
        let offset = size
        buffer += line
        buffer.append(UInt8(ascii: "\n"))
        size += Int64(line.count + 1)
        if buffer.count >= 1 << 20 { try flush() }
        return offset
    }

    /// Writes out what is buffered.
    func flush() throws {
        guard !buffer.isEmpty else { return }
        do {
            try Console.writeAll(buffer, to: descriptor)
        } catch {
            throw ToolError("cannot write the temporary copy of standard input: \(error)")
        }
        buffer.removeAll(keepingCapacity: true)
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
        var pinned: Bool?
        var payload: String?
        var root: String?
        /// What `export --decoded` adds for people; ignored, but a line with it and no payload is
        /// refused with a message that says why.
        var decoded: String?
        var text: String?
    }

    /// Just the id, of a line that is otherwise bad.
    private struct Identity: Decodable {
        var id: UInt64
        var root: String?
    }

    /// The object id of an object line that does not parse as a whole, when it has one.
    static func objectID(in line: [UInt8]) -> UInt64? {
        guard let identity = try? JSONDecoder().decode(Identity.self, from: Data(line)), identity.root == nil else {
            return nil
        }
        return identity.id
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
        guard let encoded = fields.payload else {
            if fields.decoded != nil || fields.text != nil {
                throw ToolError(
                    "missing field \"payload\": the line has only decoded fields (written by export "
                        + "--decoded-only, for reading), which import cannot turn back into the object; "
                        + "export without --decoded-only to import")
            }
            throw ToolError("missing field \"payload\"")
        }
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
                id: ObjectID(id), typeTag: type, references: references.map { ObjectID($0) }, payload: Array(payload),
                isPinned: fields.pinned ?? true))
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
