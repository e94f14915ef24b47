/// The unkeyed container of the payload encoder: writes elements into one frame.
struct UnkeyedElementEncoder: UnkeyedEncodingContainer {
    private let encoder: PayloadEncoder
    private let frame: Int
    let codingPath: [any CodingKey]
    private(set) var count = 0

    init(_ encoder: PayloadEncoder, frame: Int, codingPath: [any CodingKey]) {
        self.encoder = encoder
        self.frame = frame
        self.codingPath = codingPath
    }

    private mutating func begin() throws {
        try encoder.prepareWrite(into: frame, path: codingPath + [IndexKey(count)])
        count += 1
    }

    mutating func encodeNil() throws {
        try begin()
        encoder.writeNil()
    }
    mutating func encode(_ value: Bool) throws {
        try begin()
        encoder.writeBool(value)
    }
    mutating func encode(_ value: String) throws {
        try begin()
        encoder.writeString(value)
    }
    mutating func encode(_ value: Double) throws {
        try begin()
        encoder.writeDouble(value)
    }
    mutating func encode(_ value: Float) throws {
        try begin()
        encoder.writeFloat(value)
    }
    mutating func encode(_ value: Int) throws { try encodeSigned(Int64(value)) }
    mutating func encode(_ value: Int8) throws { try encodeSigned(Int64(value)) }
    mutating func encode(_ value: Int16) throws { try encodeSigned(Int64(value)) }
    mutating func encode(_ value: Int32) throws { try encodeSigned(Int64(value)) }
    mutating func encode(_ value: Int64) throws { try encodeSigned(value) }
    mutating func encode(_ value: UInt) throws { try encodeUnsigned(UInt64(value)) }
    mutating func encode(_ value: UInt8) throws { try encodeUnsigned(UInt64(value)) }
    mutating func encode(_ value: UInt16) throws { try encodeUnsigned(UInt64(value)) }
    mutating func encode(_ value: UInt32) throws { try encodeUnsigned(UInt64(value)) }
    mutating func encode(_ value: UInt64) throws { try encodeUnsigned(value) }

    mutating func encode<T: Encodable>(_ value: T) throws {
        let index = IndexKey(count)
        try begin()
        try encoder.encodeValue(value, parent: frame, basePath: codingPath, key: index)
    }

    private mutating func encodeSigned(_ value: Int64) throws {
        try begin()
        encoder.writeSigned(value)
    }
    private mutating func encodeUnsigned(_ value: UInt64) throws {
        try begin()
        encoder.writeUnsigned(value)
    }

    mutating func nestedContainer<NestedKey: CodingKey>(keyedBy keyType: NestedKey.Type) -> KeyedEncodingContainer<
        NestedKey
    > {
        let path = codingPath + [IndexKey(count)]
        do {
            try begin()
            let serial = encoder.pushFrame(.keyed)
            return KeyedEncodingContainer(
                KeyedFieldEncoder<NestedKey>(encoder, frame: serial, basePath: path, key: nil))
        } catch {
            encoder.state.deferredError = encoder.state.deferredError ?? encoder.wrap(error, path: path)
            return KeyedEncodingContainer(KeyedFieldEncoder<NestedKey>(encoder, frame: -1, basePath: path, key: nil))
        }
    }

    mutating func nestedUnkeyedContainer() -> any UnkeyedEncodingContainer {
        let path = codingPath + [IndexKey(count)]
        do {
            try begin()
            let serial = encoder.pushFrame(.unkeyed)
            return UnkeyedElementEncoder(encoder, frame: serial, codingPath: path)
        } catch {
            encoder.state.deferredError = encoder.state.deferredError ?? encoder.wrap(error, path: path)
            return UnkeyedElementEncoder(encoder, frame: -1, codingPath: path)
        }
    }

    /// Not supported in lists: the element's place would be taken by whatever is encoded before the
    /// returned encoder is used. Fails the encoding with `encodingFailed` rather than store elements out of
    /// order.
    mutating func superEncoder() -> any Encoder {
        let index = IndexKey(count)
        if encoder.state.deferredError == nil {
            encoder.state.deferredError = ObjectStoreError(
                .encodingFailed, "superEncoder() of an unkeyed container is not supported",
                typeName: encoder.state.typeName, field: CodingPath.describe(codingPath + [index]))
        }
        return SlotEncoder(encoder, parent: -1, basePath: codingPath, key: index)
    }
}
