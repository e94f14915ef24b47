import LogStore

/// Decodes one stored object's payload (`Documentation/Objects.md`) for the context.
///
/// Values are read in place from the payload bytes; every read is bounds-checked and a bad byte is a
/// `corruptPayload` error naming the object. References are resolved through the ``LoadSession``.
///
/// It is also the `Decoder` of the values it decodes: ``current`` says which value, and is set around each
/// nested `init(from:)` (and restored after it), so decoding a struct field allocates no decoder.
/// One instance is reused for every object of a load (``reset(payload:references:objectID:type:)``).
final class PayloadDecoder: ContextConfined<PayloadDecoderState> {

    unowned let session: LoadSession
    /// Keyed containers reused from value to value.
    let containers = KeyedContainerPool()

    /// Where the value decoded at `offset` ends, when its decode found out without a walk.
    func end(ofValueDecodedAt offset: Int) -> Int? {
        state.lastValue.start == offset ? state.lastValue.end : nil
    }

    /// Forgets the last value's end: called before a decode whose end is then asked for, so that only
    /// that decode can answer (values of other kinds do not record theirs).
    func forgetLastValue() {
        state.lastValue = (-1, -1)
    }

    /// Reads the payload header; the root value starts at ``rootOffset``.
    init(
        payload: [UInt8], references: [ObjectID], objectID: ObjectID, type: RegisteredType, session: LoadSession
    ) throws(ObjectStoreError) {
        self.session = session
        super.init(
            state: PayloadDecoderState(
                reader: ByteReader(payload, objectID: objectID, typeName: type.name), references: references,
                objectID: objectID, type: type, keys: session.state.keys))
        try readHeader()
    }

    /// Points this decoder at another object.
    func reset(payload: [UInt8], references: [ObjectID], objectID: ObjectID, type: RegisteredType)
        throws(ObjectStoreError)
    {
        state.reader = ByteReader(payload, objectID: objectID, typeName: type.name)
        self.state.references = references
        self.state.objectID = objectID
        self.state.type = type
        state.lastValue = (-1, -1)
        try readHeader()
    }

    /// Lets go of the payload decoded last (so that the load session can write the next one into the
    /// same storage).
    func dropPayload() {
        state.reader = ByteReader([], objectID: state.objectID, typeName: nil)
    }

    private func readHeader() throws(ObjectStoreError) {
        let version = try state.reader.readByte()
        switch version {
        case ObjectFormat.versionAllEager, ObjectFormat.versionAllEagerCompactNumbers:
            state.eagerCount = state.references.count
        case ObjectFormat.versionWithLazy, ObjectFormat.versionWithLazyCompactNumbers:
            let count = try state.reader.readCount()
            guard count <= state.references.count else {
                throw state.reader.corrupt("eager reference count \(count)")
            }
            state.eagerCount = count
        default:
            throw ObjectStoreError(
                .corruptPayload, "unknown object payload version \(version)", typeName: state.type.name,
                objectID: state.objectID)
        }
        state.rootOffset = state.reader.offset
    }

    /// Decodes the object: calls its class's `init(from:)`.
    func decodeObject() throws(ObjectStoreError) -> any PersistentObject {
        state.isBusy = true
        defer { state.isBusy = false }
        state.current = ValuePosition(offset: state.rootOffset, basePath: [], key: nil, depth: 0)
        let mark = containers.mark
        defer { containers.release(downTo: mark) }
        do {
            if let coder = state.type.fieldCoder {
                let found = try tag(at: state.rootOffset)
                guard found == .keyed else {
                    throw mismatch(found, expected: "fields of \(state.type.type)", path: [])
                }
                let fields = keyedFields(
                    FieldName.self, entriesAt: state.rootOffset + 1, basePath: [], key: nil, depth: 0)
                return try coder.decode(FieldReader(fields.fields))
            }
            return try state.type.type.init(from: self)
        } catch {
            throw wrap(error, path: [])
        }
    }

    func wrap(_ error: any Error, path: [any CodingKey]) -> ObjectStoreError {
        if let error = error as? ObjectStoreError { return error }
        if let error = error as? LogStoreError { return ObjectStoreError(error) }
        var field = CodingPath.describe(path)
        if let error = error as? DecodingError {
            switch error {
            case .keyNotFound(let key, let context):
                field = CodingPath.describe(context.codingPath + [key])
                return ObjectStoreError(
                    .missingField, "stored object has no field \"\(key.stringValue)\"", typeName: state.type.name,
                    field: field, objectID: state.objectID)
            case .typeMismatch(_, let context), .valueNotFound(_, let context), .dataCorrupted(let context):
                field = CodingPath.describe(context.codingPath)
                return ObjectStoreError(
                    .typeMismatch, context.debugDescription, typeName: state.type.name, field: field,
                    objectID: state.objectID)
            @unknown default:
                break
            }
        }
        return ObjectStoreError(
            .typeMismatch, "\(error)", typeName: state.type.name, field: field, objectID: state.objectID,
            underlying: SendableDescription(error))
    }

    /// The number of a field name, looking again in the catalog when this snapshot predates it.
    func number(of name: String) -> Int? {
        if let number = state.keys.numbers[name] { return number }
        state.keys = session.refreshKeys()
        return state.keys.numbers[name]
    }

    @inline(__always)
    func name(of number: Int) -> String? {
        if number < state.keys.names.count { return state.keys.names[number] }
        state.keys = session.refreshKeys()
        return number < state.keys.names.count ? state.keys.names[number] : nil
    }

    // MARK: Reading values

    @inline(__always)
    func tag(at offset: Int) throws(ObjectStoreError) -> ObjectFormat.Tag {
        state.reader.offset = offset
        let raw = try state.reader.readByte()
        guard let tag = ObjectFormat.Tag(rawValue: raw) else {
            throw state.reader.corrupt("unknown value tag \(raw)")
        }
        return tag
    }

    /// The offset just past the value at `offset`.
    func end(ofValueAt offset: Int) throws(ObjectStoreError) -> Int {
        state.reader.offset = offset
        try state.reader.skipValue()
        return state.reader.offset
    }

    func mismatch(_ found: ObjectFormat.Tag, expected: String, path: @autoclosure () -> [any CodingKey])
        -> ObjectStoreError
    {
        ObjectStoreError(
            .typeMismatch, "stored value is \(found), expected \(expected)", typeName: state.type.name,
            field: CodingPath.describe(path()), objectID: state.objectID)
    }

    func decodeNil(at offset: Int) throws(ObjectStoreError) -> Bool {
        try tag(at: offset) == .null
    }

    func decodeBool(at offset: Int, path: @autoclosure () -> [any CodingKey]) throws(ObjectStoreError) -> Bool {
        switch try tag(at: offset) {
        case .trueValue: return true
        case .falseValue: return false
        case let other: throw mismatch(other, expected: "Bool", path: path())
        }
    }

    func decodeInteger<T: FixedWidthInteger>(
        _: T.Type, at offset: Int, path: @autoclosure () -> [any CodingKey]
    ) throws(ObjectStoreError) -> T {
        let found = try tag(at: offset)
        let value: T?
        switch found {
        case .signed: value = T(exactly: try state.reader.readSigned())
        case .unsigned: value = T(exactly: try state.reader.readVarint())
        default: throw mismatch(found, expected: "\(T.self)", path: path())
        }
        guard let value else {
            throw ObjectStoreError(
                .typeMismatch, "stored integer does not fit in \(T.self)", typeName: state.type.name,
                field: CodingPath.describe(path()), objectID: state.objectID)
        }
        return value
    }

    func decodeDouble(at offset: Int, path: @autoclosure () -> [any CodingKey]) throws(ObjectStoreError) -> Double {
        let found = try tag(at: offset)
        switch found {
        case .double: return Double(bitPattern: try state.reader.readFixed64())
        case .integralDouble: return Double(try state.reader.readIntegralDouble())
        case .singleDouble, .float: return Double(Float(bitPattern: try state.reader.readFixed32()))
        case .signed: return Double(try state.reader.readSigned())
        case .unsigned: return Double(try state.reader.readVarint())
        default: throw mismatch(found, expected: "Double", path: path())
        }
    }

    /// A stored `Float` is read as it is (through a `Double`, a signalling NaN would come back quiet).
    func decodeFloat(at offset: Int, path: @autoclosure () -> [any CodingKey]) throws(ObjectStoreError) -> Float {
        if try tag(at: offset) == .float { return Float(bitPattern: try state.reader.readFixed32()) }
        return Float(try decodeDouble(at: offset, path: path()))
    }

    func decodeString(at offset: Int, path: @autoclosure () -> [any CodingKey]) throws(ObjectStoreError) -> String {
        let found = try tag(at: offset)
        guard found == .string else { throw mismatch(found, expected: "String", path: path()) }
        return try state.reader.readString()
    }

    /// The object id of the (eager or lazy) reference at `offset`.
    func decodeReferenceID(at offset: Int, path: @autoclosure () -> [any CodingKey]) throws(ObjectStoreError)
        -> ObjectID
    {
        let found = try tag(at: offset)
        switch found {
        case .reference:
            let index = try state.reader.readVarint()
            guard index < UInt64(state.references.count) else {
                throw state.reader.corrupt("reference index \(index) of \(state.references.count)")
            }
            return state.references[Int(index)]
        case .lazyReference:
            return ObjectID(try state.reader.readVarint())
        default:
            throw mismatch(found, expected: "a reference", path: path())
        }
    }

    /// The object referenced at `offset`, decoded as `T`.
    func decodeReference<T>(_: T.Type, at offset: Int, path: @autoclosure () -> [any CodingKey])
        throws(ObjectStoreError) -> T
    {
        let id = try decodeReferenceID(at: offset, path: path())
        guard let object = try session.resolve(id, referencedBy: self, path: path()) else {
            throw ObjectStoreError(
                .cyclicReference,
                "object \(id) is part of a reference cycle through a plain field; declare the field "
                    + "@ObjectRef, @ObjectList or LazyRef",
                typeName: state.type.name, field: CodingPath.describe(path()), objectID: state.objectID)
        }
        guard let typed = object as? T else {
            throw ObjectStoreError(
                .typeMismatch,
                "object \(id) is a \(Swift.type(of: object).typeName), expected \(T.self)",
                typeName: state.type.name, field: CodingPath.describe(path()), objectID: state.objectID)
        }
        return typed
    }

    /// Decodes a value of any `Decodable` type at `offset`.
    func decodeValue<T: Decodable>(
        _: T.Type, at offset: Int, basePath: [any CodingKey], key: (any CodingKey)?, depth: Int
    ) throws -> T {
        func path() -> [any CodingKey] { key.map { basePath + [$0] } ?? basePath }
        switch session.state.kinds.kind(of: T.self) {
        case .primitive:
            let value = try decodePrimitive(T.self, at: offset, path: path())
            state.lastValue = (offset, state.reader.offset)
            return value
        case .persistent:
            return try decodeReference(T.self, at: offset, path: path())
        case .special:
            return try decodeSpecial(T.self, at: offset, path: path(), depth: depth)
        case .fieldCoded:
            return try decodeFieldCodedValue(T.self, at: offset, basePath: basePath, key: key, depth: depth)
        case .plain:
            break
        }
        guard depth < ObjectFormat.maximumDepth else { throw state.reader.corrupt("values nest too deeply") }
        let saved = state.current
        state.current = ValuePosition(offset: offset, basePath: basePath, key: key, depth: depth + 1)
        let mark = containers.mark
        defer {
            state.current = saved
            containers.release(downTo: mark)
        }
        let value = try T(from: self)
        // A struct read through one pooled keyed container, field after field: its end is known.
        if let end = containers.firstLease(since: mark)?.completedValueEnd() { state.lastValue = (offset, end) }
        return value
    }

    /// A keyed container over the entries at `start`: a pooled one (``KeyedContainerPool``) when free,
    /// leased until the caller's mark is released.
    func keyedFields<Key: CodingKey>(
        _: Key.Type, entriesAt start: Int, basePath: [any CodingKey], key: (any CodingKey)?, depth: Int
    ) -> PooledKeyedDecoder<Key> {
        if let entry = containers.lease(ObjectIdentifier(Key.self)) {
            // The pool hands out an entry only for the key type it was made for.
            let pooled = unsafeDowncast(entry, to: PooledKeyedDecoder<Key>.self)
            pooled.fields.reuse(entriesAt: start, basePath: basePath, key: key, depth: depth)
            return pooled
        }
        let pooled = PooledKeyedDecoder(
            KeyedFieldDecoder<Key>(self, entriesAt: start, basePath: basePath, key: key, depth: depth))
        containers.adopt(pooled)
        return pooled
    }

    /// Decodes a ``FieldCodable`` value at `offset` (a keyed container) through its `init(fields:)`.
    func decodeFieldCoded<T: FieldCodable>(
        _: T.Type, at offset: Int, basePath: [any CodingKey], key: (any CodingKey)?, depth: Int
    ) throws -> T {
        guard depth < ObjectFormat.maximumDepth else { throw state.reader.corrupt("values nest too deeply") }
        let found = try tag(at: offset)
        guard found == .keyed else {
            throw mismatch(found, expected: "fields of \(T.self)", path: key.map { basePath + [$0] } ?? basePath)
        }
        let mark = containers.mark
        defer { containers.release(downTo: mark) }
        let fields = keyedFields(FieldName.self, entriesAt: offset + 1, basePath: basePath, key: key, depth: depth + 1)
        let value = try T(fields: FieldReader(fields.fields))
        if let end = fields.completedValueEnd() { state.lastValue = (offset, end) }
        return value
    }

    /// Decodes a value whose type `T` is ``FieldCodable`` (``ValueKinds/Kind/fieldCoded``).
    @inline(never)
    private func decodeFieldCodedValue<T>(
        _: T.Type, at offset: Int, basePath: [any CodingKey], key: (any CodingKey)?, depth: Int
    ) throws -> T {
        func decode<Coded: FieldCodable>(_ type: Coded.Type) throws -> T? {
            try decodeFieldCoded(type, at: offset, basePath: basePath, key: key, depth: depth) as? T
        }
        guard let coded = T.self as? any FieldCodable.Type, let value = try decode(coded) else {
            throw mismatch(try tag(at: offset), expected: "\(T.self)", path: key.map { basePath + [$0] } ?? basePath)
        }
        return value
    }

    /// Decodes a ``SpecialFieldDecodable`` value. (Out of line, like every use of `T?` here.)
    @inline(never)
    private func decodeSpecial<T>(_: T.Type, at offset: Int, path: [any CodingKey], depth: Int) throws -> T {
        guard let special = T.self as? any SpecialFieldDecodable.Type,
            let typed = try special.decodeField(from: self, at: offset, path: path, depth: depth + 1) as? T
        else { throw mismatch(try tag(at: offset), expected: "\(T.self)", path: path) }
        return typed
    }

    /// Reads one of the standard library's scalar types (``ValueKinds/Kind/primitive``) directly.
    ///
    /// Each branch compares metatypes first, so `unsafeBitCast` only reinterprets a value as its own type.
    /// (It returns `T`, not `T?`: an optional of an unspecialized `T` costs a metadata lookup per call.)
    private func decodePrimitive<T>(_: T.Type, at offset: Int, path: @autoclosure () -> [any CodingKey])
        throws(ObjectStoreError) -> T
    {
        let type = ObjectIdentifier(T.self)
        if type == ObjectIdentifier(String.self) {
            return unsafeBitCast(try decodeString(at: offset, path: path()), to: T.self)
        } else if type == ObjectIdentifier(Int.self) {
            return unsafeBitCast(try decodeInteger(Int.self, at: offset, path: path()), to: T.self)
        } else if type == ObjectIdentifier(Double.self) {
            return unsafeBitCast(try decodeDouble(at: offset, path: path()), to: T.self)
        } else if type == ObjectIdentifier(Bool.self) {
            return unsafeBitCast(try decodeBool(at: offset, path: path()), to: T.self)
        } else if type == ObjectIdentifier(Int64.self) {
            return unsafeBitCast(try decodeInteger(Int64.self, at: offset, path: path()), to: T.self)
        } else if type == ObjectIdentifier(Int32.self) {
            return unsafeBitCast(try decodeInteger(Int32.self, at: offset, path: path()), to: T.self)
        } else if type == ObjectIdentifier(Int16.self) {
            return unsafeBitCast(try decodeInteger(Int16.self, at: offset, path: path()), to: T.self)
        } else if type == ObjectIdentifier(Int8.self) {
            return unsafeBitCast(try decodeInteger(Int8.self, at: offset, path: path()), to: T.self)
        } else if type == ObjectIdentifier(UInt.self) {
            return unsafeBitCast(try decodeInteger(UInt.self, at: offset, path: path()), to: T.self)
        } else if type == ObjectIdentifier(UInt64.self) {
            return unsafeBitCast(try decodeInteger(UInt64.self, at: offset, path: path()), to: T.self)
        } else if type == ObjectIdentifier(UInt32.self) {
            return unsafeBitCast(try decodeInteger(UInt32.self, at: offset, path: path()), to: T.self)
        } else if type == ObjectIdentifier(UInt16.self) {
            return unsafeBitCast(try decodeInteger(UInt16.self, at: offset, path: path()), to: T.self)
        } else if type == ObjectIdentifier(UInt8.self) {
            return unsafeBitCast(try decodeInteger(UInt8.self, at: offset, path: path()), to: T.self)
        } else if type == ObjectIdentifier(Float.self) {
            return unsafeBitCast(try decodeFloat(at: offset, path: path()), to: T.self)
        }
        throw mismatch(try tag(at: offset), expected: "\(T.self)", path: path())
    }
}

/// The working state of a ``PayloadDecoder``, kept without dynamic exclusivity checks (see ``ContextConfined``).
struct PayloadDecoderState {
    var reader: ByteReader
    var references: [ObjectID]
    /// References at or past this index are lazy.
    var eagerCount = 0
    var objectID: ObjectID
    var type: RegisteredType
    var keys: KeyCatalog.Snapshot
    /// The value the `Decoder` API stands on.
    var current = ValuePosition(offset: 0, basePath: [], key: nil, depth: 0)
    /// Set while an object is being decoded (a nested load then needs a decoder of its own).
    var isBusy = false
    /// The start and end of the last value ``decodeValue(_:at:basePath:key:depth:)`` knew the end of.
    var lastValue: (start: Int, end: Int) = (-1, -1)
    /// Where the object's own value starts.
    var rootOffset = 0
}

extension PayloadDecoder: Decoder {
    var codingPath: [any CodingKey] { state.current.codingPath }
    var userInfo: [CodingUserInfoKey: Any] { [:] }

    /// The keyed container of the current value: a pooled one (``KeyedContainerPool``) when free.
    func container<Key: CodingKey>(keyedBy type: Key.Type) throws -> KeyedDecodingContainer<Key> {
        let position = state.current
        let found = try tag(at: position.offset)
        guard found == .keyed else {
            throw mismatch(found, expected: "fields of \(Key.self)", path: position.codingPath)
        }
        return keyedFields(
            Key.self, entriesAt: position.offset + 1, basePath: position.basePath, key: position.key,
            depth: position.depth
        ).container
    }

    func unkeyedContainer() throws -> any UnkeyedDecodingContainer {
        try unkeyedContainer(at: state.current)
    }

    func singleValueContainer() throws -> any SingleValueDecodingContainer {
        SingleValueDecoder(self, state.current)
    }
}

/// A value that decodes itself directly from the object format (references, dictionaries, `Data`,
/// `UUID`, `URL`).
protocol SpecialFieldDecodable {
    /// Reads the value at `offset` of `decoder`'s payload.
    static func decodeField(from decoder: PayloadDecoder, at offset: Int, path: [any CodingKey], depth: Int) throws
        -> Self
}
