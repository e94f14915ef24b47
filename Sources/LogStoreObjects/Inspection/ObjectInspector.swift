import Foundation
import LogStore

/// Reads object-layer records without their classes: type names, and field values by name.
///
/// For tools and debugging. For example:
///
/// ```swift
/// let inspector = try ObjectInspector(store)
/// inspector.describe(record)   // "Circle {center: {x: 1.0, y: 2.0}, radius: 3.0}"
/// ```
public struct ObjectInspector: Sendable {
    /// The type names the store's field-name records remember, by engine type tag (the field-name records'
    /// own tag included).
    public let typeNames: [UInt32: String]
    private let fieldNames: [String]

    /// Reads the store's field-name records once.
    /// - throws: ``ObjectStoreError`` `corruptPayload` or `store` when they cannot be read.
    public init(_ store: Store) throws(ObjectStoreError) {
        let snapshot = try KeyCatalog(loadingFrom: store).snapshot()
        var names: [UInt32: String] = [
            TypeNames.keyRecordTag: TypeNames.keyRecordTypeName, IndexCatalog.tag: IndexCatalog.typeName,
            ODBFormat.tableTag: "logstore.odb.table", ODBFormat.bucketTag: "logstore.odb.bucket",
            SalvageReport.placeholderTypeTag: "logstore.lost",
        ]
        for name in snapshot.names where name.hasPrefix(TypeNames.catalogTypePrefix) {
            let typeName = String(name.dropFirst(TypeNames.catalogTypePrefix.count))
            names[TypeNames.tag(for: typeName)] = typeName
        }
        typeNames = names
        fieldNames = snapshot.names
    }

    /// `record` rendered with field names: `Type {field: value, …}`, references as `→ #id`; nil when its
    /// payload is not object-layer encoding (a record written through the engine API).
    public func describe(_ record: Record) -> String? {
        let typeName = typeNames[record.typeTag] ?? "type \(record.typeTag)"
        var printer = ValuePrinter(record: record, names: fieldNames)
        guard let body = try? printer.render() else { return nil }
        return "\(typeName) \(body)"
    }
}

/// Renders a payload as text, following the format's tags (no classes needed).
private struct ValuePrinter {
    var reader: ByteReader
    let references: [ObjectID]
    let names: [String]

    init(record: Record, names: [String]) {
        reader = ByteReader(record.payload, objectID: record.id, typeName: nil)
        references = record.references
        self.names = names
    }

    /// The whole payload; throws when it is not object encoding (or has bytes left over).
    mutating func render() throws(ObjectStoreError) -> String {
        let version = try reader.readByte()
        switch version {
        case ObjectFormat.versionAllEager, ObjectFormat.versionAllEagerCompactNumbers: break
        case ObjectFormat.versionWithLazy, ObjectFormat.versionWithLazyCompactNumbers: _ = try reader.readCount()
        default: throw reader.corrupt("not an object payload")
        }
        let text = try value(depth: 0)
        guard reader.isAtEnd else { throw reader.corrupt("bytes after the object") }
        return text
    }

    private mutating func value(depth: Int) throws(ObjectStoreError) -> String {
        guard depth < ObjectFormat.maximumDepth else { throw reader.corrupt("nested too deeply") }
        let raw = try reader.readByte()
        guard let tag = ObjectFormat.Tag(rawValue: raw) else { throw reader.corrupt("unknown tag \(raw)") }
        switch tag {
        case .end: throw reader.corrupt("unexpected end")
        case .null: return "nil"
        case .falseValue: return "false"
        case .trueValue: return "true"
        case .signed: return String(try reader.readSigned())
        case .unsigned: return String(try reader.readVarint())
        case .double: return String(Double(bitPattern: try reader.readFixed64()))
        case .float: return String(Float(bitPattern: try reader.readFixed32()))
        case .integralDouble: return String(Double(try reader.readIntegralDouble()))
        case .singleDouble: return String(Double(Float(bitPattern: try reader.readFixed32())))
        case .string: return quoted(try reader.readString())
        case .bytes:
            let count = try reader.readCount()
            let bytes = try reader.readBytes(count)
            return "<\(count) bytes: " + bytes.prefix(16).map { String(format: "%02x", $0) }.joined()
                + (count > 16 ? "…>" : ">")
        case .uuid:
            let bytes = Array(try reader.readBytes(16))
            let hex = bytes.map { String(format: "%02X", $0) }.joined()
            let parts = [0..<8, 8..<12, 12..<16, 16..<20, 20..<32].map { range in
                String(
                    hex[
                        hex.index(
                            hex.startIndex, offsetBy: range.lowerBound)..<hex.index(
                                hex.startIndex, offsetBy: range.upperBound)])
            }
            return parts.joined(separator: "-")
        case .reference:
            let index = try reader.readVarint()
            guard index < UInt64(references.count) else { throw reader.corrupt("reference index \(index)") }
            return "→ #\(references[Int(index)])"
        case .lazyReference:
            return "→ #\(try reader.readVarint()) (lazy)"
        case .keyed:
            var fields: [String] = []
            while try reader.peekByte() != 0 {
                let number = try reader.readVarint()
                let name =
                    number < UInt64(names.count) && !names[Int(number)].isEmpty ? names[Int(number)] : "#\(number)"
                fields.append("\(name): \(try value(depth: depth + 1))")
            }
            reader.offset += 1
            return "{" + fields.joined(separator: ", ") + "}"
        case .unkeyed:
            var elements: [String] = []
            while try reader.peekByte() != 0 { elements.append(try value(depth: depth + 1)) }
            reader.offset += 1
            return "[" + elements.joined(separator: ", ") + "]"
        case .map:
            var entries: [String] = []
            while try reader.peekByte() != 0 {
                let key = try value(depth: depth + 1)
                entries.append("\(key): \(try value(depth: depth + 1))")
            }
            reader.offset += 1
            return entries.isEmpty ? "[:]" : "[" + entries.joined(separator: ", ") + "]"
        }
    }

    private func quoted(_ text: String) -> String {
        var result = "\""
        for character in text {
            switch character {
            case "\"": result += "\\\""
            case "\\": result += "\\\\"
            case "\n": result += "\\n"
            case "\t": result += "\\t"
            default: result.append(character)
            }
        }
        return result + "\""
    }
}
