/// The `Encoder` for one value position: the object itself, a field, an element or a super-encoder.
///
/// The value's tag is written when it asks for its first container (or writes a single value), so a
/// super-encoder that is never used writes nothing.
final class SlotEncoder: Encoder {
    private let encoder: PayloadEncoder
    /// The frame this value belongs to.
    private let parent: Int
    /// For a super-encoder: the field number to write before the value.
    private let pendingKey: (any CodingKey)?
    private let basePath: [any CodingKey]
    private let key: (any CodingKey)?
    var codingPath: [any CodingKey] { key.map { basePath + [$0] } ?? basePath }
    var userInfo: [CodingUserInfoKey: Any] { [:] }

    private enum State {
        case empty
        case keyed(Int)
        case unkeyed(Int)
        case single
    }
    private var state = State.empty

    var hasValue: Bool {
        if case .empty = state { return false }
        return true
    }

    init(
        _ encoder: PayloadEncoder, parent: Int, basePath: [any CodingKey], key: (any CodingKey)?,
        pendingKey: (any CodingKey)? = nil
    ) {
        self.encoder = encoder
        self.parent = parent
        self.basePath = basePath
        self.key = key
        self.pendingKey = pendingKey
    }

    /// Starts this slot's value: makes the parent frame current and writes the pending key.
    private func begin() throws(ObjectStoreError) {
        try encoder.prepareWrite(into: parent, path: self.codingPath)
        if let pendingKey { encoder.writeKey(pendingKey) }
    }

    private func fail(_ message: String) {
        if encoder.state.deferredError == nil {
            encoder.state.deferredError = ObjectStoreError(
                .encodingFailed, message, typeName: encoder.state.typeName, field: CodingPath.describe(codingPath)
            )
        }
    }

    func container<Key: CodingKey>(keyedBy type: Key.Type) -> KeyedEncodingContainer<Key> {
        switch state {
        case .keyed(let serial):
            return encoder.keyedContainer(Key.self, frame: serial, basePath: basePath, key: key)
        case .empty:
            do {
                try begin()
                let serial = encoder.pushFrame(.keyed)
                state = .keyed(serial)
                return encoder.keyedContainer(Key.self, frame: serial, basePath: basePath, key: key)
            } catch {
                encoder.state.deferredError = encoder.state.deferredError ?? error
            }
        case .unkeyed, .single:
            fail("a value asked for a keyed container after writing another kind of value")
        }
        return KeyedEncodingContainer(KeyedFieldEncoder<Key>(encoder, frame: -1, basePath: basePath, key: key))
    }

    func unkeyedContainer() -> any UnkeyedEncodingContainer {
        switch state {
        case .unkeyed(let serial):
            return UnkeyedElementEncoder(encoder, frame: serial, codingPath: codingPath)
        case .empty:
            do {
                try begin()
                let serial = encoder.pushFrame(.unkeyed)
                state = .unkeyed(serial)
                return UnkeyedElementEncoder(encoder, frame: serial, codingPath: codingPath)
            } catch {
                encoder.state.deferredError = encoder.state.deferredError ?? error
            }
        case .keyed, .single:
            fail("a value asked for an unkeyed container after writing another kind of value")
        }
        return UnkeyedElementEncoder(encoder, frame: -1, codingPath: codingPath)
    }

    func singleValueContainer() -> any SingleValueEncodingContainer {
        SingleValueSlotEncoder(self)
    }

    /// Called by the single-value container before it writes.
    fileprivate func beginSingleValue() throws(ObjectStoreError) {
        guard case .empty = state else {
            throw ObjectStoreError(
                .encodingFailed, "a single value container was written twice", typeName: encoder.state.typeName,
                field: CodingPath.describe(codingPath))
        }
        try begin()
        state = .single
    }

    fileprivate var payloadEncoder: PayloadEncoder { encoder }
    fileprivate var parentFrame: Int { parent }
}

/// The single-value container of a ``SlotEncoder``.
private struct SingleValueSlotEncoder: SingleValueEncodingContainer {
    let slot: SlotEncoder
    var codingPath: [any CodingKey] { slot.codingPath }

    init(_ slot: SlotEncoder) { self.slot = slot }

    mutating func encodeNil() throws {
        try slot.beginSingleValue()
        slot.payloadEncoder.writeNil()
    }
    mutating func encode(_ value: Bool) throws {
        try slot.beginSingleValue()
        slot.payloadEncoder.writeBool(value)
    }
    mutating func encode(_ value: String) throws {
        try slot.beginSingleValue()
        slot.payloadEncoder.writeString(value)
    }
    mutating func encode(_ value: Double) throws {
        try slot.beginSingleValue()
        slot.payloadEncoder.writeDouble(value)
    }
    mutating func encode(_ value: Float) throws {
        try slot.beginSingleValue()
        slot.payloadEncoder.writeFloat(value)
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
        try slot.beginSingleValue()
        try slot.payloadEncoder.encodeValue(value, parent: slot.parentFrame, basePath: codingPath, key: nil)
    }

    private func encodeSigned(_ value: Int64) throws {
        try slot.beginSingleValue()
        slot.payloadEncoder.writeSigned(value)
    }
    private func encodeUnsigned(_ value: UInt64) throws {
        try slot.beginSingleValue()
        slot.payloadEncoder.writeUnsigned(value)
    }
}
