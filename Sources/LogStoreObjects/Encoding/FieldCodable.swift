/// A value or persistent class that writes and reads its fields itself, without `Codable`'s containers.
///
/// `Codable` is all a persistent class needs; conforming to `FieldCodable` as well makes its objects
/// encode and decode faster (1.1–1.4× on the benchmark drawing, whose objects are small), because the
/// coders then skip the standard library's container boxes, coding keys and generic dispatch. The bytes are exactly those `Codable` writes (the
/// same keyed container, the same field names, stored once per store), so a type can adopt or drop
/// `FieldCodable` at any time, old records read either way, and schema evolution works the same: a
/// field is looked up by name, absent fields take their defaults, unknown ones are skipped and
/// ``PersistentObject/fieldAliases`` apply.
///
/// Write the fields with ``FieldWriter/write(_:for:)-(Double,_)`` and read them back under the same
/// names with ``FieldReader/read(_:for:)-(Double.Type,_)``, in the same order (any order works; the
/// written order is the fast one):
///
/// ```swift
/// struct Point: FieldCodable {
///     var x: Double
///     var y: Double
///     func encodeFields(to fields: FieldWriter) throws {
///         try fields.write(x, for: "x")
///         try fields.write(y, for: "y")
///     }
///     init(fields: FieldReader) throws {
///         x = try fields.read(Double.self, for: "x")
///         y = try fields.read(Double.self, for: "y")
///     }
/// }
///
/// final class Layer: PersistentObject, FieldCodable {
///     static let typeName = "Layer"
///     var name: String
///     @ObjectList var shapes: [any Shape]
///     func encodeFields(to fields: FieldWriter) throws {
///         try fields.write(name, for: "name")
///         try fields.write(_shapes, for: "shapes")        // references, as with Codable
///     }
///     init(fields: FieldReader) throws {
///         name = try fields.read(String.self, for: "name")
///         _shapes = try fields.read(ObjectList<any Shape>.self, for: "shapes")
///     }
/// }
/// ```
///
/// The type stays `Codable` (usually synthesized), for coders other than the object context's; inside
/// a context, a `FieldCodable` value takes the direct path wherever it appears, in `Codable` values too.
/// Keep the two consistent: the same field names, the same value types, optionals written with
/// `write(_:for:)` (which, like `encodeIfPresent`, writes nothing for nil). A subclass of a
/// `FieldCodable` class must override *both* members (the compiler only insists on the initializer) and
/// call `super` with the same writer or reader (its fields and its superclass's share one container).
///
/// The writer and the reader are valid only during the call they are passed to.
public protocol FieldCodable: Codable {
    /// Writes the value's fields.
    func encodeFields(to fields: FieldWriter) throws

    /// Reads the value's fields.
    init(fields: FieldReader) throws
}

/// A field name as a coding key, for coding paths and the shared keyed-container code.
struct FieldName: CodingKey {
    let stringValue: String
    var intValue: Int? { nil }

    init(_ name: String) { stringValue = name }
    init?(stringValue: String) { self.stringValue = stringValue }
    init?(intValue: Int) { nil }
}

/// How the coders call a registered `FieldCodable` class, captured once at registration (so no dynamic
/// cast is needed per object).
struct FieldCoder: Sendable {
    /// Writes `object`'s fields; `object` is an instance of exactly the registered class.
    let encode: @Sendable (any PersistentObject, FieldWriter) throws -> Void
    /// Makes an instance of the registered class from its fields.
    let decode: @Sendable (FieldReader) throws -> any PersistentObject

    /// The coder of `type`, or nil when it does not conform to ``FieldCodable``.
    static func of(_ type: any PersistentObject.Type) -> FieldCoder? {
        guard let coded = type as? any (PersistentObject & FieldCodable).Type else { return nil }
        return make(coded)
    }

    private static func make<T: PersistentObject & FieldCodable>(_: T.Type) -> FieldCoder {
        FieldCoder(
            encode: { object, fields in
                // The registry finds a coder by the object's exact class, so `object` is a `T`; checked
                // anyway (a pointer comparison), since a wrong cast would be undefined behaviour.
                guard ObjectIdentifier(type(of: object)) == ObjectIdentifier(T.self) else {
                    throw ObjectStoreError(
                        .encodingFailed, "\(type(of: object)) was encoded with the coder of \(T.self)",
                        typeName: T.typeName)
                }
                try unsafeDowncast(object, to: T.self).encodeFields(to: fields)
            },
            decode: { fields in try T(fields: fields) })
    }
}
