/// How the payload coders treat values of a type, found once per type with dynamic casts and then looked
/// up by the type's identity.
struct ValueKinds {
    enum Kind {
        /// One of the standard library's integer, floating-point, `Bool` or `String` types.
        case primitive
        /// A persistent class: stored as a reference.
        case persistent
        /// A type with an encoding of its own (`SpecialFieldEncodable` / `SpecialFieldDecodable`).
        case special
        /// A ``FieldCodable`` value (not a persistent class): through `encodeFields(to:)` / `init(fields:)`.
        case fieldCoded
        /// Anything else: through its `Codable` conformance.
        case plain
    }

    private var known: [ObjectIdentifier: Kind] = [:]
    /// The last few types asked for, checked before the dictionary (a model's values cycle through a
    /// handful of types; hashing an identity costs more than comparing four).
    private var recentTypes: [ObjectIdentifier?] = Array(repeating: nil, count: 4)
    private var recentKinds: [Kind] = Array(repeating: .plain, count: 4)
    private var nextRecent = 0
    /// Whether the kinds are for decoding (`SpecialFieldDecodable`) or encoding (`SpecialFieldEncodable`):
    /// a type may have a special encoding only one way (`Set` decodes through its own `Decodable`).
    private let decoding: Bool
    /// Whether ``FieldCodable`` values take their direct path.
    private let fieldCoding: Bool

    init(decoding: Bool, fieldCoding: Bool) {
        self.decoding = decoding
        self.fieldCoding = fieldCoding
    }

    private static let primitives: Set<ObjectIdentifier> = [
        ObjectIdentifier(String.self), ObjectIdentifier(Bool.self), ObjectIdentifier(Double.self),
        ObjectIdentifier(Float.self), ObjectIdentifier(Int.self), ObjectIdentifier(Int8.self),
        ObjectIdentifier(Int16.self), ObjectIdentifier(Int32.self), ObjectIdentifier(Int64.self),
        ObjectIdentifier(UInt.self), ObjectIdentifier(UInt8.self), ObjectIdentifier(UInt16.self),
        ObjectIdentifier(UInt32.self), ObjectIdentifier(UInt64.self),
    ]

    mutating func kind<T>(of type: T.Type) -> Kind {
        let key = ObjectIdentifier(type)
        for index in 0..<4 where recentTypes[index] == key { return recentKinds[index] }
        let kind = lookUp(type, key)
        recentTypes[nextRecent] = key
        recentKinds[nextRecent] = kind
        nextRecent = (nextRecent + 1) & 3
        return kind
    }

    private mutating func lookUp<T>(_ type: T.Type, _ key: ObjectIdentifier) -> Kind {
        if let kind = known[key] { return kind }
        let kind: Kind
        if Self.primitives.contains(key) {
            kind = .primitive
        } else if type is any PersistentObject.Type {
            kind = .persistent
        } else if decoding ? type is any SpecialFieldDecodable.Type : type is any SpecialFieldEncodable.Type {
            kind = .special
        } else if fieldCoding && type is any FieldCodable.Type {
            kind = .fieldCoded
        } else {
            kind = .plain
        }
        known[key] = kind
        return kind
    }
}
