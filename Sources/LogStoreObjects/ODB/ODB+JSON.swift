import Foundation

/// Export and import of a subtree as JSON, so a user can look at and back up their data.
///
/// A table is a JSON object of its children. A value is its plain JSON form when JSON tells its kind:
/// a bool is `true`/`false`, an int an integer, a double a number with a fraction (`1.5`), a string a
/// string. Any other value — a date, data, a double without a fraction (`2.0`), infinity or NaN, and
/// any value with an application type — is an object `{"$type": KIND, "$value": …}` (plus
/// `"$applicationType": …`): a date as ISO 8601 text with milliseconds, data as base64, a double as a
/// number or `"inf"`, `"-inf"`, `"nan"`. A key that starts with `$` is written with one more `$` in
/// front (`$$price` for the key `$price`), so no table is taken for a value.
extension ODB {
    /// The subtree at `path` as JSON (pretty-printed, keys sorted case-insensitively); a value alone is
    /// exported as its JSON form.
    /// - throws: ``ODBError`` `notFound` when nothing is at `path`.
    public func exportJSON(at path: ODBPath) throws(ODBError) -> String {
        try reading { work throws(ODBError) in
            guard let object = try work.object(at: path.keys) else {
                throw ODBError(.notFound, "nothing at \(path)", path: path.keys)
            }
            var output = ""
            switch object {
            case .table: try Self.writeTable(at: path.keys, work, indent: "", to: &output)
            case .value(let value, let type): Self.writeValue(value, type, to: &output)
            }
            output += "\n"
            return output
        }
    }

    /// Replaces whatever is at `path` (at the root: its children) with the tables and values of the JSON
    /// object `json`, in one transaction; missing tables on the way are created.
    /// - throws: ``ODBError`` `invalidJSON` naming the JSON path of the first problem (nothing is
    ///   changed then), and what ``setValue(_:at:applicationType:)-(ODBValue,_,_)`` throws.
    public func importJSON(_ json: String, at path: ODBPath) throws(ODBError) {
        let parsed: JSONValue
        do {
            parsed = try JSONDecoder().decode(JSONValue.self, from: Data(json.utf8))
        } catch {
            throw ODBError(.invalidJSON, "not valid JSON: \(error)", path: path.keys)
        }
        guard case .object(let members) = parsed else {
            throw ODBError(.invalidJSON, "the document must be a JSON object (a table)", path: path.keys)
        }
        try changing { work throws(ODBError) in
            if path.isRoot {
                try work.removeAll(in: work.rootForWriting())
            } else {
                _ = try work.ensureTable(path.parent.keys)
                try work.createTable(path.keys)
            }
            try Self.importMembers(members, at: path.keys, work)
        }
    }

    // MARK: - Export

    private static func writeTable(at keys: [String], _ work: ODBWork, indent: String, to output: inout String)
        throws(ODBError)
    {
        let children = try work.children(at: keys)
        guard !children.isEmpty else {
            output += "{}"
            return
        }
        output += "{\n"
        let inner = indent + "  "
        for (index, child) in children.enumerated() {
            output += inner
            writeString(child.key.hasPrefix("$") ? "$" + child.key : child.key, to: &output)
            output += ": "
            switch child.object {
            case .table: try writeTable(at: keys + [child.key], work, indent: inner, to: &output)
            case .value(let value, let type): writeValue(value, type, to: &output)
            }
            output += index == children.count - 1 ? "\n" : ",\n"
        }
        output += indent + "}"
    }

    private static func writeValue(_ value: ODBValue, _ applicationType: String?, to output: inout String) {
        var wrapped: (kind: String, value: String)?
        switch value {
        case .bool(let flag):
            if applicationType == nil {
                output += flag ? "true" : "false"
            } else {
                wrapped = ("bool", flag ? "true" : "false")
            }
        case .int(let number):
            if applicationType == nil { output += String(number) } else { wrapped = ("int", String(number)) }
        case .double(let number):
            let text: String
            if number.isNaN {
                text = "\"nan\""
            } else if number.isInfinite {
                text = number > 0 ? "\"inf\"" : "\"-inf\""
            } else {
                text = String(number)
            }
            if applicationType == nil, number.isFinite, number.rounded() != number {
                output += text
            } else {
                wrapped = ("double", text)
            }
        case .string(let string):
            if applicationType == nil {
                writeString(string, to: &output)
            } else {
                var text = ""
                writeString(string, to: &text)
                wrapped = ("string", text)
            }
        case .date(let date):
            var text = ""
            writeString(ODBValue.formatDate(date), to: &text)
            wrapped = ("date", text)
        case .data(let data):
            var text = ""
            writeString(data.base64EncodedString(), to: &text)
            wrapped = ("data", text)
        }
        guard let wrapped else { return }
        output += "{\"$type\": \"\(wrapped.kind)\", \"$value\": \(wrapped.value)"
        if let applicationType {
            output += ", \"$applicationType\": "
            writeString(applicationType, to: &output)
        }
        output += "}"
    }

    private static func writeString(_ string: String, to output: inout String) {
        output += "\""
        for scalar in string.unicodeScalars {
            switch scalar {
            case "\"": output += "\\\""
            case "\\": output += "\\\\"
            case "\n": output += "\\n"
            case "\r": output += "\\r"
            case "\t": output += "\\t"
            default:
                if scalar.value < 0x20 {
                    let hex = String(scalar.value, radix: 16)
                    output += "\\u" + String(repeating: "0", count: 4 - hex.count) + hex
                } else {
                    output.unicodeScalars.append(scalar)
                }
            }
        }
        output += "\""
    }

    // MARK: - Import

    private static func importMembers(_ members: [String: JSONValue], at keys: [String], _ work: ODBWork)
        throws(ODBError)
    {
        for (jsonKey, member) in members {
            let key = jsonKey.hasPrefix("$$") ? String(jsonKey.dropFirst()) : jsonKey
            let path = keys + [key]
            guard !jsonKey.hasPrefix("$") || jsonKey.hasPrefix("$$"), !key.isEmpty else {
                throw ODBError(
                    .invalidJSON, "key \"\(jsonKey)\" in a table: keys may not be empty or start with a single $",
                    path: path)
            }
            switch member {
            case .object(let object) where object["$type"] != nil:
                let (value, type) = try wrappedValue(object, path)
                try work.setValue(value, applicationType: type, at: path)
            case .object(let object):
                try work.createTable(path)
                try importMembers(object, at: path, work)
            case .bool(let flag): try work.setValue(.bool(flag), applicationType: nil, at: path)
            case .int(let number): try work.setValue(.int(number), applicationType: nil, at: path)
            case .double(let number): try work.setValue(.double(number), applicationType: nil, at: path)
            case .string(let string): try work.setValue(.string(string), applicationType: nil, at: path)
            case .null, .array:
                throw ODBError(.invalidJSON, "null and arrays have no ODB form", path: path)
            }
        }
    }

    private static func wrappedValue(_ object: [String: JSONValue], _ path: [String]) throws(ODBError) -> (
        ODBValue, String?
    ) {
        let invalid = ODBError(
            .invalidJSON, "a {\"$type\": …} value needs a known $type and a matching $value", path: path)
        guard case .string(let kind) = object["$type"], let raw = object["$value"] else { throw invalid }
        var type: String?
        if let applicationType = object["$applicationType"] {
            guard case .string(let name) = applicationType else { throw invalid }
            type = name
        }
        guard Set(object.keys).isSubset(of: ["$type", "$value", "$applicationType"]) else { throw invalid }
        switch (kind, raw) {
        case ("bool", .bool(let flag)): return (.bool(flag), type)
        case ("int", .int(let number)): return (.int(number), type)
        case ("double", .int(let number)): return (.double(Double(number)), type)
        case ("double", .double(let number)): return (.double(number), type)
        case ("double", .string(let text)):
            switch text {
            case "nan": return (.double(.nan), type)
            case "inf": return (.double(.infinity), type)
            case "-inf": return (.double(-.infinity), type)
            default: throw invalid
            }
        case ("string", .string(let string)): return (.string(string), type)
        case ("date", .string(let text)):
            guard let date = ODBValue.parseDate(text) else { throw invalid }
            return (.date(date), type)
        case ("data", .string(let text)):
            guard let data = Data(base64Encoded: text) else { throw invalid }
            return (.data(data), type)
        default: throw invalid
        }
    }
}

/// A parsed JSON value, telling integers from other numbers.
enum JSONValue: Decodable {
    case null
    case bool(Bool)
    case int(Int)
    case double(Double)
    case string(String)
    case array([JSONValue])
    case object([String: JSONValue])

    init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        if container.decodeNil() {
            self = .null
        } else if let flag = try? container.decode(Bool.self) {
            self = .bool(flag)
        } else if let number = try? container.decode(Int.self) {
            self = .int(number)
        } else if let number = try? container.decode(Double.self) {
            self = .double(number)
        } else if let string = try? container.decode(String.self) {
            self = .string(string)
        } else if let array = try? container.decode([JSONValue].self) {
            self = .array(array)
        } else {
            self = .object(try container.decode([String: JSONValue].self))
        }
    }
}
