/// The keyed container of the payload decoder: finds fields by number, under their old names too.
///
/// Fields are usually asked for in the order they were written, so a cursor is tried first; otherwise
/// the container indexes all its entries once.
final class KeyedFieldDecoder<Key: CodingKey>: ContextConfined<KeyedFieldDecoderState>, KeyedDecodingContainerProtocol {
    private let payload: PayloadDecoder

    init(_ payload: PayloadDecoder, entriesAt start: Int, basePath: [any CodingKey], key: (any CodingKey)?, depth: Int)
    {
        self.payload = payload
        super.init(
            state: KeyedFieldDecoderState(start: start, basePath: basePath, key: key, depth: depth, cursor: start))
    }

    /// Points this (pooled) container at the entries of another value of the same payload decoder.
    func reuse(entriesAt start: Int, basePath: [any CodingKey], key: (any CodingKey)?, depth: Int) {
        self.state.start = start
        self.state.cursor = start
        self.state.basePath = basePath
        self.state.key = key
        self.state.depth = depth
        self.state.builtCodingPath = nil
        self.state.entries = nil
        self.state.unskipped = nil
    }

    /// The value at `offset`, found at the cursor, ends at `end`: the cursor moves past it.
    @inline(__always)
    private func valueEnded(at end: Int, for offset: Int) {
        if state.unskipped == offset {
            state.cursor = end
            state.unskipped = nil
        }
    }

    /// Where this container's value ends, when its fields were read in order up to the last one (the
    /// cursor stands at the end marker); nil when that is not known without a walk.
    func completedValueEnd() -> Int? {
        guard state.entries == nil, state.unskipped == nil, let position = state.cursor else {
            return nil
        }
        payload.state.reader.offset = position
        guard (try? payload.state.reader.peekByte()) == 0 else { return nil }
        return position + 1
    }

    var codingPath: [any CodingKey] {
        if let builtCodingPath = state.builtCodingPath { return builtCodingPath }
        let path = state.key.map { state.basePath + [$0] } ?? state.basePath
        state.builtCodingPath = path
        return path
    }

    var allKeys: [Key] {
        guard let entries = try? allEntries() else { return [] }
        return entries.keys.sorted().compactMap { payload.name(of: $0).flatMap { Key(stringValue: $0) } }
    }

    private func allEntries() throws(ObjectStoreError) -> [Int: Int] {
        if let entries = state.entries { return entries }
        var found: [Int: Int] = [:]
        var reader = payload.state.reader
        reader.offset = state.start
        while try reader.peekByte() != 0 {
            let number = try reader.readVarint()
            guard number < UInt64(ObjectFormat.maximumFieldNumber) else {
                throw reader.corrupt("field number \(number)")
            }
            found[Int(number)] = reader.offset
            try reader.skipValue()
        }
        state.entries = found
        return found
    }

    /// The value offset of the field `number`, or nil when absent (from the index of all entries).
    private func offset(ofField number: Int) throws(ObjectStoreError) -> Int? {
        try allEntries()[number]
    }

    /// The value offset of the entry at the cursor when it is the field `name` (fields are usually read in
    /// the order they were written); moves the cursor past it. Compares names, so no hashing is needed.
    @inline(__always)
    private func offsetAtCursor(named name: String) throws(ObjectStoreError) -> Int? {
        guard state.entries == nil, var position = state.cursor else { return nil }
        // The payload decoder's own reader is used in place (no copy of it per field): every read here
        // and elsewhere sets the offset it starts from.
        if let value = state.unskipped {
            payload.state.reader.offset = value
            try payload.state.reader.skipValue()
            position = payload.state.reader.offset
            state.cursor = position
            state.unskipped = nil
        }
        payload.state.reader.offset = position
        if try payload.state.reader.peekByte() == 0 {
            state.cursor = nil
            return nil
        }
        let number = try payload.state.reader.readVarint()
        guard number < UInt64(ObjectFormat.maximumFieldNumber), payload.name(of: Int(number)) == name else {
            return nil
        }
        let valueOffset = payload.state.reader.offset
        state.unskipped = valueOffset
        return valueOffset
    }

    /// The value offset of `key`'s field (or of one of its old names), or nil when absent.
    @inline(__always)
    private func valueOffset(_ key: Key) throws(ObjectStoreError) -> Int? {
        if let offset = try offsetAtCursor(named: key.stringValue) { return offset }
        return try valueOffsetOutOfOrder(key)
    }

    /// ``valueOffset(_:)`` for a field not at the cursor (out of line: the in-order path stays small).
    @inline(never)
    private func valueOffsetOutOfOrder(_ key: Key) throws(ObjectStoreError) -> Int? {
        let name = key.stringValue
        if let number = payload.number(of: name), let offset = try offset(ofField: number) {
            return offset
        }
        if state.depth <= 1, let aliases = payload.state.type.fieldAliases[key.stringValue] {
            for alias in aliases {
                if let number = payload.number(of: alias), let offset = try offset(ofField: number) { return offset }
            }
        }
        return nil
    }

    @inline(__always)
    private func require(_ key: Key) throws(ObjectStoreError) -> Int {
        guard let offset = try valueOffset(key) else { throw missingField(key) }
        return offset
    }

    @inline(never)
    private func missingField(_ key: Key) -> ObjectStoreError {
        ObjectStoreError(
            .missingField, "stored object has no field \"\(key.stringValue)\" and the field has no default",
            typeName: payload.state.type.name, field: CodingPath.describe(codingPath + [key]),
            objectID: payload.state.objectID)
    }

    func contains(_ key: Key) -> Bool { (try? valueOffset(key)) != nil }

    func decodeNil(forKey key: Key) throws -> Bool {
        guard let offset = try valueOffset(key) else { return true }
        return try payload.decodeNil(at: offset)
    }

    // Scalars are read whole: the reader then stands at the value's end.
    func decode(_ type: Bool.Type, forKey key: Key) throws -> Bool {
        let offset = try require(key)
        let value = try payload.decodeBool(at: offset, path: codingPath + [key])
        valueEnded(at: payload.state.reader.offset, for: offset)
        return value
    }
    func decode(_ type: String.Type, forKey key: Key) throws -> String {
        let offset = try require(key)
        let value = try payload.decodeString(at: offset, path: codingPath + [key])
        valueEnded(at: payload.state.reader.offset, for: offset)
        return value
    }
    func decode(_ type: Double.Type, forKey key: Key) throws -> Double {
        let offset = try require(key)
        let value = try payload.decodeDouble(at: offset, path: codingPath + [key])
        valueEnded(at: payload.state.reader.offset, for: offset)
        return value
    }
    func decode(_ type: Float.Type, forKey key: Key) throws -> Float {
        let offset = try require(key)
        let value = try payload.decodeFloat(at: offset, path: codingPath + [key])
        valueEnded(at: payload.state.reader.offset, for: offset)
        return value
    }
    func decode(_ type: Int.Type, forKey key: Key) throws -> Int { try integer(type, key) }
    func decode(_ type: Int8.Type, forKey key: Key) throws -> Int8 { try integer(type, key) }
    func decode(_ type: Int16.Type, forKey key: Key) throws -> Int16 { try integer(type, key) }
    func decode(_ type: Int32.Type, forKey key: Key) throws -> Int32 { try integer(type, key) }
    func decode(_ type: Int64.Type, forKey key: Key) throws -> Int64 { try integer(type, key) }
    func decode(_ type: UInt.Type, forKey key: Key) throws -> UInt { try integer(type, key) }
    func decode(_ type: UInt8.Type, forKey key: Key) throws -> UInt8 { try integer(type, key) }
    func decode(_ type: UInt16.Type, forKey key: Key) throws -> UInt16 { try integer(type, key) }
    func decode(_ type: UInt32.Type, forKey key: Key) throws -> UInt32 { try integer(type, key) }
    func decode(_ type: UInt64.Type, forKey key: Key) throws -> UInt64 { try integer(type, key) }

    private func integer<T: FixedWidthInteger>(_ type: T.Type, _ key: Key) throws -> T {
        let offset = try require(key)
        let value = try payload.decodeInteger(type, at: offset, path: codingPath + [key])
        valueEnded(at: payload.state.reader.offset, for: offset)
        return value
    }

    func decode<T: Decodable>(_ type: T.Type, forKey key: Key) throws -> T {
        guard let offset = try valueOffset(key) else { return try absentValue(type, key) }
        payload.forgetLastValue()
        let value = try payload.decodeValue(type, at: offset, basePath: codingPath, key: key, depth: state.depth)
        if let end = payload.end(ofValueDecodedAt: offset) { valueEnded(at: end, for: offset) }
        return value
    }

    /// Decodes a nested ``FieldCodable`` value through its `init(fields:)`.
    func decodeFieldCoded<T: FieldCodable>(_ type: T.Type, forKey key: Key) throws -> T {
        // A persistent class that is also FieldCodable is a reference here, like any persistent object.
        if payload.session.state.kinds.kind(of: T.self) == .persistent { return try decode(type, forKey: key) }
        guard let offset = try valueOffset(key) else { return try absentValue(type, key) }
        payload.forgetLastValue()
        let value = try payload.decodeFieldCoded(
            type, at: offset, basePath: codingPath, key: key, depth: state.depth)
        if let end = payload.end(ofValueDecodedAt: offset) { valueEnded(at: end, for: offset) }
        return value
    }

    /// `error`, thrown reading the field `name`, as an ``ObjectStoreError``.
    func wrap(_ error: any Error, _ name: String) -> ObjectStoreError {
        payload.wrap(error, path: codingPath + [FieldName(name)])
    }

    /// The value of a field the stored object lacks: the field type's own default, or `missingField`.
    /// (Out of line: it needs `T?`, whose metadata would otherwise be looked up on every decode.)
    @inline(never)
    private func absentValue<T: Decodable>(_ type: T.Type, _ key: Key) throws -> T {
        if let defaulting = T.self as? any AbsentFieldDefaulting.Type, let value = defaulting.absentFieldValue as? T {
            return value
        }
        return try payload.decodeValue(
            type, at: try require(key), basePath: codingPath, key: key, depth: state.depth)
    }

    func decodeIfPresent<T: Decodable>(_ type: T.Type, forKey key: Key) throws -> T? {
        guard let offset = try valueOffset(key), try !payload.decodeNil(at: offset) else { return nil }
        return try payload.decodeValue(type, at: offset, basePath: codingPath, key: key, depth: state.depth)
    }

    func nestedContainer<NestedKey: CodingKey>(keyedBy type: NestedKey.Type, forKey key: Key) throws
        -> KeyedDecodingContainer<NestedKey>
    {
        try ValueDecoder(
            payload, offset: try require(key), basePath: codingPath, key: key, depth: state.depth + 1
        )
        .container(keyedBy: type)
    }

    func nestedUnkeyedContainer(forKey key: Key) throws -> any UnkeyedDecodingContainer {
        try ValueDecoder(
            payload, offset: try require(key), basePath: codingPath, key: key, depth: state.depth + 1
        )
        .unkeyedContainer()
    }

    func superDecoder() throws -> any Decoder {
        try superDecoder(key: SuperKey())
    }

    func superDecoder(forKey key: Key) throws -> any Decoder {
        try superDecoder(key: key)
    }

    private func superDecoder(key: any CodingKey) throws -> any Decoder {
        guard let number = payload.number(of: key.stringValue), let offset = try offset(ofField: number) else {
            throw ObjectStoreError(
                .missingField, "stored object has no field \"\(key.stringValue)\"",
                typeName: payload.state.type.name,
                field: CodingPath.describe(codingPath + [key]), objectID: payload.state.objectID)
        }
        return ValueDecoder(payload, offset: offset, basePath: codingPath, key: key, depth: state.depth + 1)
    }
}

/// The fields of a ``KeyedFieldDecoder`` that its lookups use, kept without dynamic exclusivity checks (see
/// ``ContextConfined``); outside the generic class, so that its layout does not depend on the key type.
struct KeyedFieldDecoderState {
    var start: Int
    var basePath: [any CodingKey]
    var key: (any CodingKey)?
    /// Built on first use only: most containers never need it.
    var builtCodingPath: [any CodingKey]?
    var depth: Int
    /// The offset of the next entry for the in-order fast path (nil once the end was reached).
    var cursor: Int?
    /// Field number → value offset, built on the first out-of-order lookup.
    var entries: [Int: Int]?
    /// When set, the cursor stands at this value (of the field found last), not yet skipped: a decode
    /// that learns where the value ends moves the cursor there (``KeyedFieldDecoder/valueEnded(at:for:)``), otherwise the
    /// next lookup skips it. Skipping a nested value walks all of it, which the decode just did.
    var unskipped: Int?
}
