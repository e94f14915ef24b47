import SwiftSyntax

/// A stored property that `@Persistent` writes and reads, under its name.
struct PersistedProperty {
    /// The property's name, which is also its field name.
    let name: String
    /// Its type, as declared or inferred from a literal initializer.
    let type: TypeSyntax
    /// Its initial value: the value of the field in records stored before the field existed.
    let initializer: ExprSyntax?
    /// Whether it is a `let` (stored and read back through the property itself, which has no accessors).
    let isLet: Bool
    /// How its value is kept in the backing storage.
    let storage: FieldStorage
    /// Earlier field names (`@Renamed(from:)`) as string literals, in the order they are tried.
    let oldNames: [ExprSyntax]

    /// The backing storage's name: `_name` (the property itself for a `let`).
    var storageName: String { isLet ? name : "_\(name)" }

    /// The backing storage's type.
    var storageType: TypeSyntax { storage.boxType ?? type.trimmed }

    /// Whether the property's type is optional (read with `decodeIfPresent`; nil is written as nothing).
    var isOptional: Bool { FieldType.optionalWrapped(type) != nil }

    /// The field name as a string literal.
    var fieldLiteral: ExprSyntax { ExprSyntax(StringLiteralExprSyntax(content: name)) }
}

/// What a member variable declaration is to `@Persistent`.
enum PropertyRole {
    /// Not a persisted stored property: computed, static, or not a property.
    case ignored
    /// Marked `@Transient`: kept in memory only.
    case transient
    /// Written and read back.
    case persisted(PersistedProperty)
    /// Persisted but wrongly declared; the reason is in the diagnostics.
    case invalid
}
