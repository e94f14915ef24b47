import Foundation

// Foundation values and dictionaries get compact encodings of their own instead of going through
// their `Codable` conformances (which would store `Data` as a list of numbers and `UUID` as a string).

extension Data: SpecialFieldEncodable, SpecialFieldDecodable {
    func encodeField(into encoder: PayloadEncoder, parent: Int, path: [any CodingKey]) throws {
        encoder.writeBytes(self)
    }

    static func decodeField(from decoder: PayloadDecoder, at offset: Int, path: [any CodingKey], depth: Int) throws
        -> Data
    {
        let found = try decoder.tag(at: offset)
        guard found == .bytes else { throw decoder.mismatch(found, expected: "Data", path: path) }
        return Data(try decoder.state.reader.readBytes(try decoder.state.reader.readCount()))
    }
}

extension UUID: SpecialFieldEncodable, SpecialFieldDecodable {
    func encodeField(into encoder: PayloadEncoder, parent: Int, path: [any CodingKey]) throws {
        encoder.writeUUIDBytes(withUnsafeBytes(of: uuid) { Array($0) })
    }

    static func decodeField(from decoder: PayloadDecoder, at offset: Int, path: [any CodingKey], depth: Int) throws
        -> UUID
    {
        let found = try decoder.tag(at: offset)
        switch found {
        case .uuid:
            let bytes = Array(try decoder.state.reader.readBytes(16))
            return UUID(
                uuid: (
                    bytes[0], bytes[1], bytes[2], bytes[3], bytes[4], bytes[5], bytes[6], bytes[7], bytes[8], bytes[9],
                    bytes[10], bytes[11], bytes[12], bytes[13], bytes[14], bytes[15]
                ))
        case .string:
            guard let uuid = UUID(uuidString: try decoder.state.reader.readString()) else {
                throw decoder.mismatch(found, expected: "a UUID", path: path)
            }
            return uuid
        default:
            throw decoder.mismatch(found, expected: "UUID", path: path)
        }
    }
}

extension URL: SpecialFieldEncodable, SpecialFieldDecodable {
    func encodeField(into encoder: PayloadEncoder, parent: Int, path: [any CodingKey]) throws {
        encoder.writeString(absoluteString)
    }

    static func decodeField(from decoder: PayloadDecoder, at offset: Int, path: [any CodingKey], depth: Int) throws
        -> URL
    {
        let text = try decoder.decodeString(at: offset, path: path)
        guard let url = URL(string: text) else {
            throw ObjectStoreError(
                .typeMismatch, "stored string \"\(text)\" is not a URL", typeName: decoder.state.type.name,
                field: CodingPath.describe(path), objectID: decoder.state.objectID)
        }
        return url
    }
}

extension Dictionary: SpecialFieldEncodable where Key: Encodable, Value: Encodable {
    /// A map container: key, value, key, value…, in canonical order (`UnorderedEntries.swift`), so equal
    /// dictionaries encode to equal bytes (the context compares encodings to find changed objects).
    func encodeField(into encoder: PayloadEncoder, parent: Int, path: [any CodingKey]) throws {
        let frame = encoder.pushFrame(.map)
        try encoder.encodeUnordered(map { (key: $0.key, value: Optional($0.value)) }, frame: frame, path: path)
    }
}

extension Set: SpecialFieldEncodable where Element: Encodable {
    /// A list container of the elements in canonical order (see `Dictionary`); it decodes through `Set`'s
    /// own `Decodable` conformance.
    func encodeField(into encoder: PayloadEncoder, parent: Int, path: [any CodingKey]) throws {
        let frame = encoder.pushFrame(.unkeyed)
        try encoder.encodeUnordered(map { (key: $0, value: Bool?.none) }, frame: frame, path: path)
    }
}

extension Dictionary: SpecialFieldDecodable where Key: Decodable, Value: Decodable {
    static func decodeField(from decoder: PayloadDecoder, at offset: Int, path: [any CodingKey], depth: Int) throws
        -> [Key: Value]
    {
        let found = try decoder.tag(at: offset)
        guard found == .map else { throw decoder.mismatch(found, expected: "a dictionary", path: path) }
        var result: [Key: Value] = [:]
        var position = offset + 1
        var index = 0
        while try decoder.tag(at: position) != .end {
            let key = try decoder.decodeValue(
                Key.self, at: position, basePath: path, key: IndexKey(index), depth: depth)
            position = try decoder.end(ofValueAt: position)
            guard try decoder.tag(at: position) != .end else {
                throw decoder.state.reader.corrupt("dictionary key without a value")
            }
            let value = try decoder.decodeValue(
                Value.self, at: position, basePath: path, key: IndexKey(index + 1), depth: depth)
            position = try decoder.end(ofValueAt: position)
            result[key] = value
            index += 2
        }
        return result
    }
}
