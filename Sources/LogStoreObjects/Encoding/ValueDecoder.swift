/// Where a value sits in a payload, and its coding path (`basePath` + `key`, built only when needed).
struct ValuePosition {
    var offset: Int
    var basePath: [any CodingKey]
    var key: (any CodingKey)?
    var depth: Int

    var codingPath: [any CodingKey] { key.map { basePath + [$0] } ?? basePath }
}

/// The `Decoder` for one stored value, for the rare paths that need a decoder of their own
/// (`superDecoder()`, nested containers). Plain values are decoded through the ``PayloadDecoder`` itself.
final class ValueDecoder: Decoder {
    let payload: PayloadDecoder
    let position: ValuePosition
    var codingPath: [any CodingKey] { position.codingPath }
    var userInfo: [CodingUserInfoKey: Any] { [:] }

    init(_ payload: PayloadDecoder, offset: Int, basePath: [any CodingKey], key: (any CodingKey)?, depth: Int) {
        self.payload = payload
        self.position = ValuePosition(offset: offset, basePath: basePath, key: key, depth: depth)
    }

    func container<Key: CodingKey>(keyedBy type: Key.Type) throws -> KeyedDecodingContainer<Key> {
        try payload.keyedContainer(Key.self, at: position)
    }

    func unkeyedContainer() throws -> any UnkeyedDecodingContainer {
        try payload.unkeyedContainer(at: position)
    }

    func singleValueContainer() throws -> any SingleValueDecodingContainer {
        SingleValueDecoder(payload, position)
    }
}

extension PayloadDecoder {
    func keyedContainer<Key: CodingKey>(_: Key.Type, at position: ValuePosition) throws -> KeyedDecodingContainer<Key> {
        let found = try tag(at: position.offset)
        guard found == .keyed else {
            throw mismatch(found, expected: "fields of \(Key.self)", path: position.codingPath)
        }
        return KeyedDecodingContainer(
            KeyedFieldDecoder<Key>(
                self, entriesAt: position.offset + 1, basePath: position.basePath, key: position.key,
                depth: position.depth))
    }

    func unkeyedContainer(at position: ValuePosition) throws -> any UnkeyedDecodingContainer {
        let found = try tag(at: position.offset)
        guard found == .unkeyed else { throw mismatch(found, expected: "a list", path: position.codingPath) }
        return UnkeyedElementDecoder(
            self, elementsAt: position.offset + 1, basePath: position.basePath, key: position.key,
            depth: position.depth)
    }
}

/// The single-value container of a value.
struct SingleValueDecoder: SingleValueDecodingContainer {
    private let payload: PayloadDecoder
    private let position: ValuePosition
    var codingPath: [any CodingKey] { position.codingPath }

    init(_ payload: PayloadDecoder, _ position: ValuePosition) {
        self.payload = payload
        self.position = position
    }

    private var offset: Int { position.offset }

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
        try payload.decodeValue(type, at: offset, basePath: codingPath, key: nil, depth: position.depth)
    }
}
