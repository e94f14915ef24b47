import Foundation

/// Writes the fields of a ``FieldCodable`` value or object: one call per field, each under its name.
///
/// Scalars (`Bool`, `Int`, `Int64`, `UInt64`, `Double`, `Float`, `String`) and nested ``FieldCodable``
/// values are written directly; any other `Encodable` value (arrays, optionals, dictionaries, `Date`,
/// references to persistent objects, ``ObjectRef``, ``ObjectList``, ``LazyRef``…) goes through the same
/// code as under `Codable`. Write each field once. Valid only during the `encodeFields(to:)` call it is
/// passed to: a write after that call returned is an `encodingFailed` error.
public struct FieldWriter {
    let encoder: PayloadEncoder
    /// The keyed container (frame) the fields go into.
    let frame: Int
    /// The coding path of the value, for error messages: `basePath` + `key`.
    let basePath: [any CodingKey]
    let key: (any CodingKey)?

    init(_ encoder: PayloadEncoder, frame: Int, basePath: [any CodingKey], key: (any CodingKey)?) {
        self.encoder = encoder
        self.frame = frame
        self.basePath = basePath
        self.key = key
    }

    /// The coding path of the value whose fields this writes.
    var codingPath: [any CodingKey] { key.map { basePath + [$0] } ?? basePath }

    /// Makes the frame current and writes the field's number.
    private func begin(_ name: String) throws(ObjectStoreError) {
        try encoder.prepareWrite(into: frame, path: codingPath + [FieldName(name)])
        encoder.writeKey(named: name)
    }

    /// Writes a `Bool` field.
    public func write(_ value: Bool, for name: String) throws(ObjectStoreError) {
        try begin(name)
        encoder.writeBool(value)
    }

    /// Writes an `Int` field.
    public func write(_ value: Int, for name: String) throws(ObjectStoreError) {
        try begin(name)
        encoder.writeSigned(Int64(value))
    }

    /// Writes an `Int64` field.
    public func write(_ value: Int64, for name: String) throws(ObjectStoreError) {
        try begin(name)
        encoder.writeSigned(value)
    }

    /// Writes a `UInt64` field.
    public func write(_ value: UInt64, for name: String) throws(ObjectStoreError) {
        try begin(name)
        encoder.writeUnsigned(value)
    }

    /// Writes a `Double` field.
    public func write(_ value: Double, for name: String) throws(ObjectStoreError) {
        try begin(name)
        encoder.writeDouble(value)
    }

    /// Writes a `Float` field.
    public func write(_ value: Float, for name: String) throws(ObjectStoreError) {
        try begin(name)
        encoder.writeFloat(value)
    }

    /// Writes a `Date` field as its `Codable` form does (seconds since 2001-01-01 as a `Double`): the same
    /// bytes, without going through `encode(to:)`.
    public func write(_ value: Date, for name: String) throws(ObjectStoreError) {
        try write(value.timeIntervalSinceReferenceDate, for: name)
    }

    /// Writes a `String` field.
    public func write(_ value: String, for name: String) throws(ObjectStoreError) {
        try begin(name)
        encoder.writeString(value)
    }

    /// Writes a field holding a nested ``FieldCodable`` value (stored inline, as a keyed container), or a
    /// reference when the value is a persistent object.
    public func write<T: FieldCodable>(_ value: T, for name: String) throws(ObjectStoreError) {
        try begin(name)
        if encoder.isPersistent(T.self) {
            try encodeValue(value, name)
        } else {
            do {
                try encoder.encodeFieldCoded(value, basePath: codingPath, key: FieldName(name))
            } catch {
                throw failed(error, name)
            }
        }
    }

    /// Writes a field holding any other `Encodable` value, exactly as `Codable` would.
    public func write<T: Encodable>(_ value: T, for name: String) throws(ObjectStoreError) {
        try begin(name)
        try encodeValue(value, name)
    }

    /// Writes an optional field, as synthesized `Codable` does (`encodeIfPresent`): nothing at all when
    /// `value` is nil (it then reads back as nil, or as the reader's default).
    public func write<T: Encodable>(_ value: T?, for name: String) throws(ObjectStoreError) {
        guard let value else { return }
        try begin(name)
        try encodeValue(value, name)
    }

    /// Writes an optional field: nothing at all when `value` is nil (the same as ``write(_:for:)-(T?,_)``).
    public func writeIfPresent<T: Encodable>(_ value: T?, for name: String) throws(ObjectStoreError) {
        try write(value, for: name)
    }

    /// Encodes the value of the field `name`, whose number is written already.
    private func encodeValue<T: Encodable>(_ value: T, _ name: String) throws(ObjectStoreError) {
        do {
            try encoder.encodeValue(value, parent: frame, basePath: codingPath, key: FieldName(name))
        } catch {
            throw failed(error, name)
        }
    }

    /// `error`, thrown after the field's number was written: the payload now lacks that field's value, so
    /// the object must not be saved even if the caller goes on (`try?`): the error is kept for the end of
    /// the object's encoding as well as thrown.
    private func failed(_ error: any Error, _ name: String) -> ObjectStoreError {
        let wrapped = encoder.wrap(error, path: codingPath + [FieldName(name)])
        encoder.state.deferredError = encoder.state.deferredError ?? wrapped
        return wrapped
    }
}
