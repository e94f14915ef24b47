import SwiftSyntax

/// Generates `FieldCodable`'s members: `encodeFields(to:)` and `init(fields:)`.
struct FieldCodingGeneration {
    let generation: MemberGeneration

    init(_ generation: MemberGeneration) {
        self.generation = generation
    }

    var members: [DeclSyntax] { [encodeFields, initFields] }

    /// Writes each persisted property's storage under its name, then (in a subclass) the superclass's fields.
    private var encodeFields: DeclSyntax {
        var lines = generation.target.properties.map { property in
            "try fields.write(\(property.storageName), for: \(property.fieldLiteral))"
        }
        if generation.position == .subclass { lines.append("try super.encodeFields(to: fields)") }
        let access = generation.target.access.overridable
        return FieldCodingGeneration.declaration(
            "\(access)\(generation.override)func encodeFields(to fields: LogStoreObjects.FieldWriter) throws", lines)
    }

    /// Reads each persisted property's storage, then (in a subclass) the superclass's fields.
    private var initFields: DeclSyntax {
        var lines = generation.target.properties.map { property in
            "\(property.storageName) = try \(read(property))"
        }
        if generation.position == .subclass { lines.append("try super.init(fields: fields)") }
        return FieldCodingGeneration.declaration(
            "\(generation.target.access.fixed)required init(fields: LogStoreObjects.FieldReader) throws", lines)
    }

    /// The read of `property`'s storage: the box type for references, `T?` for optionals (nil when absent),
    /// the initial value as the default of a field that old records lack.
    private func read(_ property: PersistedProperty) -> String {
        let field = property.fieldLiteral.description
        if let box = property.storage.boxType {
            return "fields.read(\(box).self, for: \(field))"
        }
        let type = Self.metatype(of: property.type)
        if property.isOptional {
            return "fields.read(\(type), for: \(field))"
        }
        if let initializer = property.initializer {
            return "fields.read(\(type), for: \(field), default: \(initializer))"
        }
        return "fields.read(\(type), for: \(field))"
    }

    /// The expression naming `type`'s metatype: `Double.self`, `Optional<T>.self` for `T!`, `(any P).self`.
    static func metatype(of type: TypeSyntax) -> String {
        if let unwrapped = type.as(ImplicitlyUnwrappedOptionalTypeSyntax.self) {
            return "Optional<\(unwrapped.wrappedType.trimmed)>.self"
        }
        if type.is(SomeOrAnyTypeSyntax.self) || type.is(CompositionTypeSyntax.self)
            || type.is(FunctionTypeSyntax.self)
        {
            return "(\(type.trimmed)).self"
        }
        return "\(type.trimmed).self"
    }

    /// A function or initializer declaration: `signature` and a body of `lines`.
    static func declaration(_ signature: String, _ lines: [String]) -> DeclSyntax {
        guard !lines.isEmpty else { return "\(raw: signature) {}" }
        return "\(raw: signature) {\n\(raw: lines.map { "    " + $0 }.joined(separator: "\n"))\n}"
    }
}
