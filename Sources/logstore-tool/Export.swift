import ArgumentParser
import Foundation
import LogStore
import LogStoreObjects

/// `export DIR [--output FILE] [--decoded | --decoded-only]`: every live object and named root as JSON lines.
struct Export: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Write every live object and named root as JSON lines.",
        discussion: """
            One line per live object, by increasing id: \
            {"id":N,"type":T,"refs":[...],"pinned":true|false,"payload":"BASE64"}; then one line per named \
            root, by name: {"root":"NAME","id":N}. `import` reads this format and reproduces the objects, \
            their pins and the roots exactly.

            --decoded adds what a person can read, as `get` prints it: "typeName" (for objects saved \
            through LogStoreObjects), and "decoded" (the object's fields by name) or "text" (a payload that \
            is printable UTF-8). `import` ignores these fields and reads the payload. --decoded-only leaves \
            the payload out where "decoded" or "text" stands for it: for reading only, `import` refuses \
            such lines.
            """
    )

    @OptionGroup var store: StoreDirectory

    @Option(name: .shortAndLong, help: "Write to this file instead of standard output.")
    var output: String?

    @Flag(help: "Add the type name and the decoded fields (or the text) of each object beside its payload.")
    var decoded = false

    @Flag(help: "Like --decoded, but leave the base64 payload out where it was decoded (cannot be imported).")
    var decodedOnly = false

    func validate() throws {
        if decoded, decodedOnly { throw ValidationError("use --decoded or --decoded-only, not both") }
    }

    func run() throws {
        let opened = try store.openReadOnly()
        defer { try? opened.close() }
        let inspector = decoded || decodedOnly ? try? ObjectInspector(opened) : nil
        let sink = try output.map { try OutputSink(path: $0) } ?? OutputSink()
        var objects = 0
        for id in try opened.ids() {
            // An object deleted since `ids()` (by a writer beside us) is simply skipped.
            guard let record = try opened.get(id) else { continue }
            let references = record.references.map(\.description).joined(separator: ",")
            var line = "{\"id\":\(record.id),\"type\":\(record.typeTag),"
            if decoded || decodedOnly {
                line += readable(record, inspector)
            } else {
                line += "\"refs\":[\(references)],\"pinned\":\(record.isPinned),\"payload\":\"\(base64(record))\"}"
            }
            try sink.writeLine(line)
            objects += 1
        }
        let roots = try opened.roots().sorted { $0.key < $1.key }
        for (name, id) in roots {
            try sink.writeLine("{\"root\":\(jsonString(name)),\"id\":\(id)}")
        }
        try sink.finish()
        if let output {
            print("exported \(plural(objects, "object")) and \(plural(roots.count, "root")) to \(output)")
        }
    }

    private func base64(_ record: Record) -> String { Data(record.payload).base64EncodedString() }

    /// The rest of an object line with --decoded or --decoded-only, from "typeName" to the closing brace.
    private func readable(_ record: Record, _ inspector: ObjectInspector?) -> String {
        let typeName = inspector?.typeNames[record.typeTag]
        var fields: [String] = []
        if let typeName { fields.append("\"typeName\":\(jsonString(typeName))") }
        fields.append("\"refs\":[\(record.references.map(\.description).joined(separator: ","))]")
        fields.append("\"pinned\":\(record.isPinned)")
        // As `get` shows it: an object-layer record by field name, else text, else only the payload.
        var readable: String?
        if let typeName, let description = inspector?.describe(record) {
            let prefix = typeName + " "
            let body = description.hasPrefix(prefix) ? String(description.dropFirst(prefix.count)) : description
            readable = "\"decoded\":\(jsonString(body))"
        } else if !record.payload.isEmpty, let text = printableText(record.payload) {
            readable = "\"text\":\(jsonString(text))"
        }
        if !decodedOnly || readable == nil { fields.append("\"payload\":\"\(base64(record))\"") }
        if let readable { fields.append(readable) }
        return fields.joined(separator: ",") + "}"
    }
}
