import ArgumentParser
import Foundation
import LogStore
import LogStoreObjects

/// `tables DIR [PATH]` (alias `odb`): lists, sets, deletes, exports and imports ODB tables.
struct Tables: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "tables",
        abstract: "List or edit the ODB: the store's tree of case-insensitive tables.",
        discussion: """
            PATH is dot-separated (RSS.feeds.abc.editedName); a key containing a dot is quoted \
            (prefs."window.frame"); no PATH, or `root`, is the root table. Without an option, prints the \
            children of the table at PATH (key, kind, value), or the value at PATH. --set, --delete and \
            --import change the store (--set and --import create it when missing); --export and listings open it \
            read-only, beside a writer. A --json listing is {"path", "children": [{"key", "kind", "value", \
            "applicationType"}]}: an int or double value is a JSON number (a double that is infinite or NaN \
            is the string "inf", "-inf" or "nan"), a bool is true or false, a date is ISO 8601 text, data is \
            base64 text; a table has no "value".
            """,
        aliases: ["odb"]
    )

    /// The kinds `--type` accepts.
    enum Kind: String, ExpressibleByArgument, CaseIterable {
        case int, double, bool, date, string
    }

    @OptionGroup var store: StoreDirectory

    @Argument(help: "The path, dot-separated (default: the root table).")
    var path: String = ""

    @Option(help: "Set the value at PATH (creating missing tables).")
    var set: String?

    @Option(help: "The kind of the --set value: int, double, bool, date (ISO 8601) or string.")
    var type: Kind = .string

    @Option(help: "The application type to store with the --set value.")
    var applicationType: String?

    @Flag(help: "Delete what is at PATH (a table with everything in it).")
    var delete = false

    @Option(help: "Write the subtree at PATH as JSON to this file, or to standard output for -.")
    var export: String?

    @Option(name: .customLong("import"), help: "Replace the subtree at PATH with this JSON file's tables.")
    var importFile: String?

    @Flag(help: "Print listings as JSON.")
    var json = false

    func validate() throws {
        let actions = [set != nil, delete, export != nil, importFile != nil].filter { $0 }.count
        guard actions <= 1 else { throw ValidationError("use at most one of --set, --delete, --export, --import") }
    }

    func run() throws {
        let odbPath = try ODBPath(parsing: path)
        let changes = set != nil || delete || importFile != nil
        // --set and --import create the store when missing (as `import` does); --delete does not.
        let opened =
            changes
            ? try store.openWritable(createIfMissing: set != nil || importFile != nil) : try store.openReadOnly()
        defer { try? opened.close() }
        let odb = try ODB(store: opened)
        if let set {
            try odb.setValue(try parse(set), at: odbPath, applicationType: applicationType)
            print("set \(odbPath)")
        } else if delete {
            guard try odb.delete(odbPath) else { throw ToolError("nothing at \(odbPath)") }
            print("deleted \(odbPath)")
        } else if let importFile {
            let text = try String(contentsOfFile: importFile, encoding: .utf8)
            try odb.importJSON(text, at: odbPath)
            print("imported \(importFile) into \(odbPath)")
        } else if let export {
            let text = try odb.exportJSON(at: odbPath)
            if export == "-" {
                print(text, terminator: "")
            } else {
                try text.write(toFile: export, atomically: true, encoding: .utf8)
            }
        } else {
            try list(odb, odbPath)
        }
    }

    /// Prints the children of the table at `path`, or the value there.
    private func list(_ odb: ODB, _ path: ODBPath) throws {
        guard let object = try odb.object(at: path) else { throw ToolError("nothing at \(path)") }
        let rows: [(key: String, object: ODBObject)]
        switch object {
        case .table: rows = try odb.children(at: path).map { ($0.key, $0.object) }
        case .value: rows = [(path.lastKey ?? "root", object)]
        }
        if json {
            let items = rows.map { row -> String in
                var fields = ["\"key\": \(jsonString(row.key))"]
                switch row.object {
                case .table: fields.append("\"kind\": \"table\"")
                case .value(let value, let type):
                    fields.append("\"kind\": \"\(value.kindName)\"")
                    fields.append("\"value\": \(jsonValue(value))")
                    if let type { fields.append("\"applicationType\": \(jsonString(type))") }
                }
                return "{" + fields.joined(separator: ", ") + "}"
            }
            print("{\"path\": \(jsonString(path.description)), \"children\": [" + items.joined(separator: ", ") + "]}")
            return
        }
        let width = rows.map(\.key.count).max() ?? 0
        for row in rows {
            let padded = row.key + String(repeating: " ", count: max(0, width - row.key.count))
            switch row.object {
            case .table:
                let count = try odb.count(at: object == .table ? path.appending(row.key) : path)
                print("\(padded)  table   \(count) \(count == 1 ? "child" : "children")")
            case .value(let value, let type):
                let kind = value.kindName + String(repeating: " ", count: max(0, 6 - value.kindName.count))
                print("\(padded)  \(kind)  \(value.description)" + (type.map { "  (\($0))" } ?? ""))
            }
        }
    }

    /// `value` in a listing's JSON: an int or a finite double as a JSON number, a bool as `true` or
    /// `false`; a string, a date (ISO 8601), data (base64) and a double that is infinite or NaN
    /// (`"inf"`, `"-inf"`, `"nan"`) as a JSON string. "kind" says which it is.
    private func jsonValue(_ value: ODBValue) -> String {
        switch value {
        case .int(let number): return String(number)
        case .bool(let flag): return String(flag)
        case .double(let number) where number.isFinite: return String(number)
        case .double(let number): return number.isNaN ? "\"nan\"" : number < 0 ? "\"-inf\"" : "\"inf\""
        case .date, .string, .data: return jsonString(value.description)
        }
    }

    /// The `--set` text as a value of `--type`.
    private func parse(_ text: String) throws -> ODBValue {
        switch type {
        case .string: return .string(text)
        case .int:
            guard let number = Int(text) else { throw ToolError("\"\(text)\" is not an int") }
            return .int(number)
        case .double:
            guard let number = Double(text) else { throw ToolError("\"\(text)\" is not a double") }
            return .double(number)
        case .bool:
            guard let flag = Bool(text) else { throw ToolError("\"\(text)\" is not true or false") }
            return .bool(flag)
        case .date:
            guard
                let date = (try? Date.ISO8601FormatStyle(includingFractionalSeconds: true).parse(text))
                    ?? (try? Date.ISO8601FormatStyle().parse(text))
            else { throw ToolError("\"\(text)\" is not an ISO 8601 date") }
            return .date(date)
        }
    }
}
