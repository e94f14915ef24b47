/// The unkeyed container of the payload decoder: reads elements in order.
struct UnkeyedElementDecoder: UnkeyedDecodingContainer {
    private let payload: PayloadDecoder
    let codingPath: [any CodingKey]
    private let depth: Int
    /// The offset of the next element.
    private var position: Int
    private(set) var currentIndex = 0

    init(_ payload: PayloadDecoder, elementsAt start: Int, basePath: [any CodingKey], key: (any CodingKey)?, depth: Int)
    {
        self.payload = payload
        self.position = start
        self.codingPath = key.map { basePath + [$0] } ?? basePath
        self.depth = depth
    }

    var count: Int? {
        var reader = payload.state.reader
        reader.offset = position
        var remaining = 0
        while (try? reader.peekByte()) ?? 0 != 0 {
            guard (try? reader.skipValue()) != nil else { return nil }
            remaining += 1
        }
        return currentIndex + remaining
    }

    var isAtEnd: Bool { ((try? payload.tag(at: position)) ?? .end) == .end }

    private var path: [any CodingKey] { codingPath + [IndexKey(currentIndex)] }

    /// The offset of the next element, advancing past it.
    private mutating func next() throws -> Int {
        let found = try payload.tag(at: position)
        guard found != .end else {
            throw ObjectStoreError(
                .typeMismatch, "list has only \(currentIndex) elements", typeName: payload.state.type.name,
                field: CodingPath.describe(path), objectID: payload.state.objectID)
        }
        let offset = position
        position = try payload.end(ofValueAt: position)
        currentIndex += 1
        return offset
    }

    mutating func decodeNil() throws -> Bool {
        guard try payload.decodeNil(at: position) else { return false }
        _ = try next()
        return true
    }

    mutating func decode(_ type: Bool.Type) throws -> Bool { try payload.decodeBool(at: try next(), path: path) }
    mutating func decode(_ type: String.Type) throws -> String {
        try payload.decodeString(at: try next(), path: path)
    }
    mutating func decode(_ type: Double.Type) throws -> Double {
        try payload.decodeDouble(at: try next(), path: path)
    }
    mutating func decode(_ type: Float.Type) throws -> Float { try payload.decodeFloat(at: try next(), path: path) }
    mutating func decode(_ type: Int.Type) throws -> Int { try integer(type) }
    mutating func decode(_ type: Int8.Type) throws -> Int8 { try integer(type) }
    mutating func decode(_ type: Int16.Type) throws -> Int16 { try integer(type) }
    mutating func decode(_ type: Int32.Type) throws -> Int32 { try integer(type) }
    mutating func decode(_ type: Int64.Type) throws -> Int64 { try integer(type) }
    mutating func decode(_ type: UInt.Type) throws -> UInt { try integer(type) }
    mutating func decode(_ type: UInt8.Type) throws -> UInt8 { try integer(type) }
    mutating func decode(_ type: UInt16.Type) throws -> UInt16 { try integer(type) }
    mutating func decode(_ type: UInt32.Type) throws -> UInt32 { try integer(type) }
    mutating func decode(_ type: UInt64.Type) throws -> UInt64 { try integer(type) }

    private mutating func integer<T: FixedWidthInteger>(_ type: T.Type) throws -> T {
        let offset = try next()
        return try payload.decodeInteger(type, at: offset, path: codingPath + [IndexKey(currentIndex - 1)])
    }

    mutating func decode<T: Decodable>(_ type: T.Type) throws -> T {
        let index = IndexKey(currentIndex)
        let offset = try next()
        return try payload.decodeValue(type, at: offset, basePath: codingPath, key: index, depth: depth)
    }

    mutating func nestedContainer<NestedKey: CodingKey>(keyedBy type: NestedKey.Type) throws
        -> KeyedDecodingContainer<NestedKey>
    {
        let index = IndexKey(currentIndex)
        let offset = try next()
        return try ValueDecoder(payload, offset: offset, basePath: codingPath, key: index, depth: depth + 1)
            .container(keyedBy: type)
    }

    mutating func nestedUnkeyedContainer() throws -> any UnkeyedDecodingContainer {
        let index = IndexKey(currentIndex)
        let offset = try next()
        return try ValueDecoder(payload, offset: offset, basePath: codingPath, key: index, depth: depth + 1)
            .unkeyedContainer()
    }

    mutating func superDecoder() throws -> any Decoder {
        let index = IndexKey(currentIndex)
        let offset = try next()
        return ValueDecoder(payload, offset: offset, basePath: codingPath, key: index, depth: depth + 1)
    }
}
