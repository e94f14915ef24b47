/// How the payload coders treat values of a type, found once per type with dynamic casts and then looked
/// up by the type's identity.
struct ValueKinds {
    enum Kind {
        /// A persistent class: stored as a reference.
        case persistent
        /// A type with an encoding of its own (`SpecialFieldEncodable` / `SpecialFieldDecodable`).
        case special
        /// Anything else: through its `Codable` conformance.
        case plain
    }

    private var known: [ObjectIdentifier: Kind] = [:]

    mutating func kind<T>(of type: T.Type) -> Kind {
        let key = ObjectIdentifier(type)
        if let kind = known[key] { return kind }
        let kind: Kind
        if type is any PersistentObject.Type {
            kind = .persistent
        } else if type is any SpecialFieldEncodable.Type || type is any SpecialFieldDecodable.Type {
            kind = .special
        } else {
            kind = .plain
        }
        known[key] = kind
        return kind
    }
}
