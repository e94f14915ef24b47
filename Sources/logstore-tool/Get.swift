import ArgumentParser
import LogStore
import LogStoreObjects

/// `get DIR ID`: prints one record.
struct Get: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Print one object: id, type tag, whether it is pinned, references and payload.",
        usage: "logstore-tool get <directory> <id> [--hex]",
        discussion: """
            An object saved through LogStoreObjects is shown with its type name and its fields by name; \
            other payloads are printed as text when they are printable UTF-8, else as a hex dump.
            """
    )

    @OptionGroup var store: StoreDirectory

    // Every argument the parser does not recognise, so that `-1` reaches ``validate()`` (a dash would
    // otherwise make it an unknown option) and is refused with the range of ids.
    @Argument(
        parsing: .allUnrecognized,
        help: ArgumentHelp("The object id, 1 … \(LogStoreLimits.maxObjectID).", valueName: "id"))
    var idArguments: [String] = []

    @Flag(help: "Print the payload as hex even when it is text.")
    var hex = false

    /// The object id (checked by ``validate()``).
    private var id: UInt64 { UInt64(idArguments.first ?? "") ?? 0 }

    func validate() throws {
        let largest = LogStoreLimits.maxObjectID.rawValue
        guard idArguments.count == 1, let text = idArguments.first else {
            throw ValidationError(
                idArguments.isEmpty
                    ? "missing the object id (valid ids are 1 … \(largest))"
                    : "expected one object id, got \(idArguments.joined(separator: " "))")
        }
        guard let id = UInt64(text), id >= 1, id <= largest else {
            throw ValidationError("\(text) is not an object id: valid ids are 1 … \(largest)")
        }
    }

    func run() throws {
        let opened = try store.openReadOnly()
        defer { try? opened.close() }
        guard let record = try opened.get(ObjectID(id)) else {
            throw ToolError("object \(id) not found in \(store.directory)")
        }
        print("id: \(record.id)")
        let inspector = try? ObjectInspector(opened)
        let typeName = inspector?.typeNames[record.typeTag]
        print("type: \(record.typeTag)" + (typeName.map { " (\($0))" } ?? ""))
        print("pinned: \(record.isPinned ? "yes" : "no (lives while a live object or a named root refers to it)")")
        print(
            "references: "
                + (record.references.isEmpty ? "none" : record.references.map(\.description).joined(separator: " ")))
        let size = "\(record.payload.count) byte\(record.payload.count == 1 ? "" : "s")"
        if !hex, typeName != nil, let object = inspector?.describe(record) {
            print("payload: \(size), object:")
            print(object)
        } else if record.payload.isEmpty {
            print("payload: \(size)")
        } else if !hex, let text = printableText(record.payload) {
            print("payload: \(size), text:")
            print(text)
        } else {
            print("payload: \(size), hex:")
            printHexDump(record.payload)
        }
    }

    /// 16 bytes a line: offset, then the bytes in hex.
    private func printHexDump(_ payload: [UInt8]) {
        let digits = Array("0123456789abcdef".utf8)
        func hex(_ value: Int, width: Int) -> String {
            var bytes = [UInt8](repeating: UInt8(ascii: "0"), count: width)
            var rest = value
            for position in stride(from: width - 1, through: 0, by: -1) {
                bytes[position] = digits[rest & 15]
                rest >>= 4
            }
            return String(decoding: bytes, as: UTF8.self)
        }
        for start in stride(from: 0, to: payload.count, by: 16) {
            let line = payload[start..<min(start + 16, payload.count)].map { hex(Int($0), width: 2) }
            print(hex(start, width: 8) + "  " + line.joined(separator: " "))
        }
    }
}

/// The payload as a string when it is valid UTF-8 with no control characters but line breaks and tabs.
func printableText(_ payload: [UInt8]) -> String? {
    guard let text = String(validating: payload, as: UTF8.self) else { return nil }
    let printable = text.unicodeScalars.allSatisfy { scalar in
        switch scalar.properties.generalCategory {
        case .control: return scalar == "\n" || scalar == "\t" || scalar == "\r"
        case .format, .surrogate, .privateUse, .unassigned: return false
        default: return true
        }
    }
    return printable ? text : nil
}
