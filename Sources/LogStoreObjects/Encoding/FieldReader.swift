import Foundation

/// Reads the fields of a ``FieldCodable`` value or object by name.
///
/// Fields are found in the stored order first (reading them in the order they were written costs no
/// lookup), otherwise by name, then under their old names (``PersistentObject/fieldAliases``). A field
/// the stored value lacks takes the type's own default where it has one (`nil` for ``ObjectRef``, empty
/// for ``ObjectList``; `read(_:for:default:)` and `readIfPresent(_:for:)` give your own) and is otherwise a
/// `missingField` error; a stored value of another kind is a `typeMismatch` error. Both name the type,
/// the field and the object. Valid only during the `init(fields:)` call it is passed to.
public struct FieldReader {
    let fields: KeyedFieldDecoder<FieldName>

    init(_ fields: KeyedFieldDecoder<FieldName>) {
        self.fields = fields
    }

    /// Runs a read of the keyed container, turning its errors into ``ObjectStoreError``s.
    private func reading<T>(_ name: String, _ read: (FieldName) throws -> T) throws(ObjectStoreError) -> T {
        do {
            return try read(FieldName(name))
        } catch {
            throw fields.wrap(error, name)
        }
    }

    /// Reads a `Bool` field.
    public func read(_ type: Bool.Type, for name: String) throws(ObjectStoreError) -> Bool {
        try reading(name) { try fields.decode(type, forKey: $0) }
    }

    /// Reads an `Int` field.
    public func read(_ type: Int.Type, for name: String) throws(ObjectStoreError) -> Int {
        try reading(name) { try fields.decode(type, forKey: $0) }
    }

    /// Reads an `Int64` field.
    public func read(_ type: Int64.Type, for name: String) throws(ObjectStoreError) -> Int64 {
        try reading(name) { try fields.decode(type, forKey: $0) }
    }

    /// Reads a `UInt64` field.
    public func read(_ type: UInt64.Type, for name: String) throws(ObjectStoreError) -> UInt64 {
        try reading(name) { try fields.decode(type, forKey: $0) }
    }

    /// Reads a `Double` field.
    public func read(_ type: Double.Type, for name: String) throws(ObjectStoreError) -> Double {
        try reading(name) { try fields.decode(type, forKey: $0) }
    }

    /// Reads a `Float` field.
    public func read(_ type: Float.Type, for name: String) throws(ObjectStoreError) -> Float {
        try reading(name) { try fields.decode(type, forKey: $0) }
    }

    /// Reads a `String` field.
    public func read(_ type: String.Type, for name: String) throws(ObjectStoreError) -> String {
        try reading(name) { try fields.decode(type, forKey: $0) }
    }

    /// Reads a `Date` field: its `Codable` form (seconds since 2001-01-01 as a `Double`), read without
    /// going through `Date(from:)`.
    public func read(_ type: Date.Type, for name: String) throws(ObjectStoreError) -> Date {
        try reading(name) { Date(timeIntervalSinceReferenceDate: try fields.decode(Double.self, forKey: $0)) }
    }

    /// Reads a field holding a nested ``FieldCodable`` value, or a reference when `T` is a persistent class.
    public func read<T: FieldCodable>(_ type: T.Type, for name: String) throws(ObjectStoreError) -> T {
        try reading(name) { try fields.decodeFieldCoded(type, forKey: $0) }
    }

    /// Reads a field holding any other `Decodable` value, exactly as `Codable` would (references resolve
    /// to the context's instances).
    public func read<T: Decodable>(_ type: T.Type, for name: String) throws(ObjectStoreError) -> T {
        try reading(name) { try fields.decode(type, forKey: $0) }
    }

    /// Reads an optional field, as synthesized `Codable` does (`decodeIfPresent`): nil when the stored
    /// value lacks it or holds nil.
    public func read<T: Decodable>(_ type: T?.Type, for name: String) throws(ObjectStoreError) -> T? {
        try readIfPresent(T.self, for: name)
    }

    /// Reads a field, or returns nil when the stored value lacks it or holds nil.
    public func readIfPresent<T: Decodable>(_ type: T.Type, for name: String) throws(ObjectStoreError) -> T? {
        try reading(name) { try fields.decodeIfPresent(type, forKey: $0) }
    }

    /// Reads a field, or returns `defaultValue` when the stored value lacks it (it was stored before the
    /// field was added) or holds nil.
    public func read<T: Decodable>(_ type: T.Type, for name: String, default defaultValue: @autoclosure () -> T)
        throws(ObjectStoreError) -> T
    {
        try readIfPresent(type, for: name) ?? defaultValue()
    }

    /// Whether the stored value has the field `name` (under its name or an old one).
    public func contains(_ name: String) -> Bool {
        fields.contains(FieldName(name))
    }
}
