import LogStore

/// A class whose instances an ``ObjectContext`` stores and loads.
///
/// A persistent class is `Codable` and names itself with a stable ``typeName``; the context encodes
/// its fields in LogStore's compact binary format (see `Documentation/Objects.md`). Fields holding
/// other persistent objects are stored as references (object ids), not copies. For example:
///
/// ```swift
/// final class Circle: PersistentObject {
///     static let typeName = "Circle"
///     var center: Point
///     var radius: Double
///     init(center: Point, radius: Double) { self.center = center; self.radius = radius }
/// }
/// ```
///
/// Subclasses override ``typeName`` with `override class var typeName`, and their `encode(to:)` and
/// `init(from:)` call `super` with the same encoder or decoder.
public protocol PersistentObject: AnyObject, Codable, SendableMetatype {
    /// The name the type is stored under. Never change it once objects are stored; register the old
    /// name in ``typeAliases`` when renaming the class.
    static var typeName: String { get }

    /// Earlier type names whose stored objects decode as this type (for a renamed type).
    static var typeAliases: [String] { get }

    /// Earlier field names, by current field name: a field missing from a stored object is read under
    /// its old names, in order. For example `["firstName": ["name"]]`.
    static var fieldAliases: [String: [String]] { get }

    /// The indexes kept on this class's fields (see ``IndexDefinition``); subclasses inherit them. None by
    /// default.
    static var indexes: [IndexDefinition] { get }

    /// The relationships of this class's fields to other persistent objects: their inverse fields, kept
    /// consistent on save, and what deleting an object does to the objects they hold (see
    /// ``Relationship``); subclasses inherit them. None by default.
    static var relationships: [Relationship] { get }
}

extension PersistentObject {
    /// Whether `type` is a subclass of this class (and not this class itself).
    static func isStrictSuperclass(of type: any PersistentObject.Type) -> Bool {
        type is Self.Type && ObjectIdentifier(type) != ObjectIdentifier(Self.self)
    }

    /// No earlier type names.
    public static var typeAliases: [String] { [] }

    /// No renamed fields.
    public static var fieldAliases: [String: [String]] { [:] }

    /// No indexes.
    public static var indexes: [IndexDefinition] { [] }

    /// No relationships.
    public static var relationships: [Relationship] { [] }
}

/// Stable type tags for persistent type names.
public enum TypeNames {
    /// The 32-bit FNV-1a hash of `name`'s UTF-8 bytes: the engine type tag for that type name.
    ///
    /// For example, `TypeNames.tag(for: "Circle")` is the same number on every run.
    public static func tag(for name: String) -> UInt32 {
        var hash: UInt32 = 2_166_136_261
        for byte in name.utf8 {
            hash ^= UInt32(byte)
            hash = hash &* 16_777_619
        }
        return hash
    }

    /// The type name under which the object layer stores its field-name records.
    public static let keyRecordTypeName = "logstore.keys"

    /// The engine type tag of the field-name records (pinned records holding the store's field names).
    public static let keyRecordTag = tag(for: keyRecordTypeName)

    /// The type name of the record listing the indexes the classes declare (for tools).
    public static let indexCatalogTypeName = "logstore.indexes"

    /// The engine type tag of the index catalog record.
    public static let indexCatalogTag = tag(for: indexCatalogTypeName)

    /// Type names are remembered in the field-name catalog as `@type:` + name, so an error about an
    /// unregistered tag can name the type.
    static let catalogTypePrefix = "@type:"
}
