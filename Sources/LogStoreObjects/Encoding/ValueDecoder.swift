/// The `Decoder` for one stored value (the object itself, a field, an element).
final class ValueDecoder: Decoder {
    let payload: PayloadDecoder
    let offset: Int
    private let basePath: [any CodingKey]
    private let key: (any CodingKey)?
    let depth: Int
    var codingPath: [any CodingKey] { key.map { basePath + [$0] } ?? basePath }
    var userInfo: [CodingUserInfoKey: Any] { [:] }

    init(_ payload: PayloadDecoder, offset: Int, basePath: [any CodingKey], key: (any CodingKey)?, depth: Int) {
        self.payload = payload
        self.offset = offset
        self.basePath = basePath
        self.key = key
        self.depth = depth
    }

    func container<Key: CodingKey>(keyedBy type: Key.Type) throws -> KeyedDecodingContainer<Key> {
        let found = try payload.tag(at: offset)
        guard found == .keyed else {
            throw payload.mismatch(found, expected: "fields of \(Key.self)", path: codingPath)
        }
        return KeyedDecodingContainer(
            KeyedFieldDecoder<Key>(payload, entriesAt: offset + 1, basePath: basePath, key: key, depth: depth))
    }

    func unkeyedContainer() throws -> any UnkeyedDecodingContainer {
        let found = try payload.tag(at: offset)
        guard found == .unkeyed else { throw payload.mismatch(found, expected: "a list", path: codingPath) }
        return UnkeyedElementDecoder(payload, elementsAt: offset + 1, basePath: basePath, key: key, depth: depth)
    }

    func singleValueContainer() throws -> any SingleValueDecodingContainer {
        SingleValueDecoder(self)
    }
}

/// The single-value container of a ``ValueDecoder``.
private struct SingleValueDecoder: SingleValueDecodingContainer {
    let decoder: ValueDecoder
    var codingPath: [any CodingKey] { decoder.codingPath }

    init(_ decoder: ValueDecoder) { self.decoder = decoder }

    private var payload: PayloadDecoder { decoder.payload }
    private var offset: Int { decoder.offset }

    func decodeNil() -> Bool { (try? payload.decodeNil(at: offset)) ?? false }
    func decode(_ type: Bool.Type) throws -> Bool { try payload.decodeBool(at: offset, path: codingPath) }
    func decode(_ type: String.Type) throws -> String { try payload.decodeString(at: offset, path: codingPath) }
    func decode(_ type: Double.Type) throws -> Double { try payload.decodeDouble(at: offset, path: codingPath) }
    func decode(_ type: Float.Type) throws -> Float { try payload.decodeFloat(at: offset, path: codingPath) }
    func decode(_ type: Int.Type) throws -> Int { try payload.decodeInteger(type, at: offset, path: codingPath) }
    func decode(_ type: Int8.Type) throws -> Int8 { try payload.decodeInteger(type, at: offset, path: codingPath) }
    func decode(_ type: Int16.Type) throws -> Int16 { try payload.decodeInteger(type, at: offset, path: codingPath) }
    func decode(_ type: Int32.Type) throws -> Int32 { try payload.decodeInteger(type, at: offset, path: codingPath) }
    func decode(_ type: Int64.Type) throws -> Int64 { try payload.decodeInteger(type, at: offset, path: codingPath) }
    func decode(_ type: UInt.Type) throws -> UInt { try payload.decodeInteger(type, at: offset, path: codingPath) }
    func decode(_ type: UInt8.Type) throws -> UInt8 { try payload.decodeInteger(type, at: offset, path: codingPath) }
    func decode(_ type: UInt16.Type) throws -> UInt16 { try payload.decodeInteger(type, at: offset, path: codingPath) }
    func decode(_ type: UInt32.Type) throws -> UInt32 { try payload.decodeInteger(type, at: offset, path: codingPath) }
    func decode(_ type: UInt64.Type) throws -> UInt64 { try payload.decodeInteger(type, at: offset, path: codingPath) }
    func decode<T: Decodable>(_ type: T.Type) throws -> T {
        try payload.decodeValue(type, at: offset, basePath: codingPath, key: nil, depth: decoder.depth)
    }
}
