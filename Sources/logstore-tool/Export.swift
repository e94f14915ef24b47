import ArgumentParser
import Foundation
import LogStore

/// `export DIR [--output FILE]`: every live object and named root as JSON lines.
struct Export: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Write every live object and named root as JSON lines.",
        discussion: """
            One line per live object, by increasing id: \
            {"id":N,"type":T,"refs":[...],"pinned":true|false,"payload":"BASE64"}; then one line per named \
            root, by name: {"root":"NAME","id":N}. `import` reads this format and reproduces the objects, \
            their pins and the roots exactly.
            """
    )

    @OptionGroup var store: StoreDirectory

    @Option(name: .shortAndLong, help: "Write to this file instead of standard output.")
    var output: String?

    func run() throws {
        let opened = try store.openReadOnly()
        defer { try? opened.close() }
        let sink = try output.map { try OutputSink(path: $0) } ?? OutputSink()
        var objects = 0
        for id in try opened.ids() {
            // An object deleted since `ids()` (by a writer beside us) is simply skipped.
            guard let record = try opened.get(id) else { continue }
            let references = record.references.map(\.description).joined(separator: ",")
            let payload = Data(record.payload).base64EncodedString()
            try sink.writeLine(
                "{\"id\":\(record.id),\"type\":\(record.typeTag),\"refs\":[\(references)],"
                    + "\"pinned\":\(record.isPinned),\"payload\":\"\(payload)\"}")
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
}
