import SwiftSyntax

/// Generates `Codable`'s members, `encode(to:)` and `init(from:)`, under the same field names as
/// `FieldCodable`'s, for coders other than the object context's.
struct CodableGeneration {
    let generation: MemberGeneration

    init(_ generation: MemberGeneration) {
        self.generation = generation
    }

    var members: [DeclSyntax] { [encode, initFrom] }

    /// The coding key of `property`.
    private func key(_ property: PersistedProperty) -> String {
        "LogStoreObjects.FieldKey(\(property.fieldLiteral))"
    }

    /// Encodes each persisted property's storage (optionals with `encodeIfPresent`), then the superclass's.
    private var encode: DeclSyntax {
        let properties = generation.target.properties
        var lines: [String] = []
        if !properties.isEmpty {
            lines.append("var container = encoder.container(keyedBy: LogStoreObjects.FieldKey.self)")
        }
        for property in properties {
            let method = property.isOptional && property.storage.boxType == nil ? "encodeIfPresent" : "encode"
            lines.append("try container.\(method)(\(property.storageName), forKey: \(key(property)))")
        }
        if generation.position == .subclass { lines.append("try super.encode(to: encoder)") }
        let access = generation.target.access.overridable
        return FieldCodingGeneration.declaration(
            "\(access)\(generation.override)func encode(to encoder: any Encoder) throws", lines)
    }

    /// Decodes each persisted property's storage, then the superclass's.
    private var initFrom: DeclSyntax {
        let properties = generation.target.properties
        var lines: [String] = []
        if !properties.isEmpty {
            lines.append("let container = try decoder.container(keyedBy: LogStoreObjects.FieldKey.self)")
        }
        for property in properties {
            lines.append("\(property.storageName) = try \(decode(property))")
        }
        if generation.position == .subclass { lines.append("try super.init(from: decoder)") }
        return FieldCodingGeneration.declaration(
            "\(generation.target.access.fixed)required init(from decoder: any Decoder) throws", lines)
    }

    /// The decoding of `property`'s storage: an absent optional is nil, an absent value with an initial
    /// value takes it (and the object context decodes an absent box as an empty one).
    private func decode(_ property: PersistedProperty) -> String {
        let key = key(property)
        if let box = property.storage.boxType {
            return "container.decode(\(box).self, forKey: \(key))"
        }
        if let wrapped = FieldType.optionalWrapped(property.type) {
            return "container.decodeIfPresent(\(FieldCodingGeneration.metatype(of: wrapped)), forKey: \(key))"
        }
        let type = FieldCodingGeneration.metatype(of: property.type)
        if let initializer = property.initializer {
            return "container.decodeIfPresent(\(type), forKey: \(key)) ?? \(initializer)"
        }
        return "container.decode(\(type), forKey: \(key))"
    }
}
