/// The keyed container of the payload encoder: writes `fieldNumber value` pairs into one frame.
struct KeyedFieldEncoder<Key: CodingKey>: KeyedEncodingContainerProtocol {
    /// Where the fields go; a pooled container (``PooledKeyedEncoder``) is pointed at another value by
    /// changing it.
    let target: KeyedFieldTarget
    private var encoder: PayloadEncoder { target.encoder }
    private var frame: Int { target.state.frame }
    /// Built when needed only (errors, nested values), to keep encoding free of allocations.
    var codingPath: [any CodingKey] { target.codingPath }

    init(_ encoder: PayloadEncoder, frame: Int, basePath: [any CodingKey], key: (any CodingKey)?) {
        self.target = KeyedFieldTarget(encoder, frame: frame, basePath: basePath, key: key)
    }

    /// Makes the frame current and writes the key; returns the encoder for the value (fetched once: the
    /// reference is `unowned`, each read of it costs a check).
    private func begin(_ key: Key) throws -> PayloadEncoder {
        let encoder = target.encoder
        try encoder.prepareWrite(into: target.state.frame, path: codingPath + [key])
        encoder.writeKey(key)
        return encoder
    }

    mutating func encodeNil(forKey key: Key) throws {
        let encoder = try begin(key)
        encoder.writeNil()
    }
    mutating func encode(_ value: Bool, forKey key: Key) throws {
        let encoder = try begin(key)
        encoder.writeBool(value)
    }
    mutating func encode(_ value: String, forKey key: Key) throws {
        let encoder = try begin(key)
        encoder.writeString(value)
    }
    mutating func encode(_ value: Double, forKey key: Key) throws {
        let encoder = try begin(key)
        encoder.writeDouble(value)
    }
    mutating func encode(_ value: Float, forKey key: Key) throws {
        let encoder = try begin(key)
        encoder.writeFloat(value)
    }
    mutating func encode(_ value: Int, forKey key: Key) throws { try encodeSigned(Int64(value), key) }
    mutating func encode(_ value: Int8, forKey key: Key) throws { try encodeSigned(Int64(value), key) }
    mutating func encode(_ value: Int16, forKey key: Key) throws { try encodeSigned(Int64(value), key) }
    mutating func encode(_ value: Int32, forKey key: Key) throws { try encodeSigned(Int64(value), key) }
    mutating func encode(_ value: Int64, forKey key: Key) throws { try encodeSigned(value, key) }
    mutating func encode(_ value: UInt, forKey key: Key) throws { try encodeUnsigned(UInt64(value), key) }
    mutating func encode(_ value: UInt8, forKey key: Key) throws { try encodeUnsigned(UInt64(value), key) }
    mutating func encode(_ value: UInt16, forKey key: Key) throws { try encodeUnsigned(UInt64(value), key) }
    mutating func encode(_ value: UInt32, forKey key: Key) throws { try encodeUnsigned(UInt64(value), key) }
    mutating func encode(_ value: UInt64, forKey key: Key) throws { try encodeUnsigned(value, key) }

    mutating func encode<T: Encodable>(_ value: T, forKey key: Key) throws {
        let encoder = try begin(key)
        do {
            try encoder.encodeValue(value, parent: frame, basePath: codingPath, key: key)
        } catch {
            // The key is written and its value is not: the object must not be saved even if the caller
            // goes on (`try?`), so the error is also kept for the end of the object's encoding.
            let wrapped = encoder.wrap(error, path: codingPath + [key])
            encoder.state.deferredError = encoder.state.deferredError ?? wrapped
            throw wrapped
        }
    }

    private func encodeSigned(_ value: Int64, _ key: Key) throws {
        let encoder = try begin(key)
        encoder.writeSigned(value)
    }
    private func encodeUnsigned(_ value: UInt64, _ key: Key) throws {
        let encoder = try begin(key)
        encoder.writeUnsigned(value)
    }

    mutating func nestedContainer<NestedKey: CodingKey>(
        keyedBy keyType: NestedKey.Type, forKey key: Key
    ) -> KeyedEncodingContainer<NestedKey> {
        do {
            _ = try begin(key)
            let serial = encoder.pushFrame(.keyed)
            return KeyedEncodingContainer(
                KeyedFieldEncoder<NestedKey>(encoder, frame: serial, basePath: codingPath, key: key))
        } catch {
            encoder.state.deferredError =
                encoder.state.deferredError ?? encoder.wrap(error, path: codingPath + [key])
            return KeyedEncodingContainer(
                KeyedFieldEncoder<NestedKey>(encoder, frame: -1, basePath: codingPath, key: nil))
        }
    }

    mutating func nestedUnkeyedContainer(forKey key: Key) -> any UnkeyedEncodingContainer {
        do {
            _ = try begin(key)
            let serial = encoder.pushFrame(.unkeyed)
            return UnkeyedElementEncoder(encoder, frame: serial, codingPath: codingPath + [key])
        } catch {
            encoder.state.deferredError =
                encoder.state.deferredError ?? encoder.wrap(error, path: codingPath + [key])
            return UnkeyedElementEncoder(encoder, frame: -1, codingPath: codingPath)
        }
    }

    mutating func superEncoder() -> any Encoder {
        SlotEncoder(encoder, parent: frame, basePath: codingPath, key: SuperKey(), pendingKey: SuperKey())
    }

    mutating func superEncoder(forKey key: Key) -> any Encoder {
        SlotEncoder(encoder, parent: frame, basePath: codingPath, key: key, pendingKey: key)
    }
}

/// The frame a keyed encoding container writes into, and its coding path.
///
/// It refers to its encoder `unowned`: pooled containers are kept by the encoder (a strong reference back
/// would be a cycle). Using a container after the encoder is gone (it never is during an `encode(to:)`
/// call) traps.
final class KeyedFieldTarget: ContextConfined<KeyedFieldTargetState> {
    unowned let encoder: PayloadEncoder
    var codingPath: [any CodingKey] { state.key.map { state.basePath + [$0] } ?? state.basePath }

    init(_ encoder: PayloadEncoder, frame: Int, basePath: [any CodingKey], key: (any CodingKey)?) {
        self.encoder = encoder
        super.init(state: KeyedFieldTargetState(frame: frame, basePath: basePath, key: key))
    }
}

/// The working state of a ``KeyedFieldTarget``, kept without dynamic exclusivity checks (see
/// ``ContextConfined``).
struct KeyedFieldTargetState {
    var frame: Int
    var basePath: [any CodingKey]
    var key: (any CodingKey)?
}

/// The key `super`, used by `superEncoder()` and `superDecoder()`.
struct SuperKey: CodingKey {
    var stringValue: String { "super" }
    var intValue: Int? { nil }
    init() {}
    init?(stringValue: String) { if stringValue != "super" { return nil } }
    init?(intValue: Int) { nil }
}

/// A position in an array, for coding paths.
struct IndexKey: CodingKey {
    let intValue: Int?
    var stringValue: String { "\(intValue ?? 0)" }
    init(_ index: Int) { intValue = index }
    init?(stringValue: String) { nil }
    init?(intValue: Int) { self.intValue = intValue }
}
