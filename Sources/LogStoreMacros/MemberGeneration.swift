import SwiftSyntax

/// Where a class stands in a hierarchy of `@Persistent` classes, which decides how members are declared.
enum ClassPosition {
    /// A final class with no persistent superclass: `static let`.
    case finalRoot
    /// A non-final class with no persistent superclass: `class var`.
    case root
    /// A subclass of a `@Persistent` class: `override class var`, calls to `super`.
    case subclass
}

/// Everything the member generators need: the class, the macro's arguments and the class's position.
struct MemberGeneration {
    let target: PersistentClass
    let arguments: PersistentArguments
    let position: ClassPosition

    /// Protocols whose conformance says nothing useful to a query by protocol.
    static let unlistedConformances: Set<String> = [
        "AnyObject", "Codable", "Decodable", "Encodable", "Sendable", "SendableMetatype", "Equatable", "Hashable",
        "Identifiable", "Comparable", "CustomStringConvertible", "CustomDebugStringConvertible", "Observable",
        "PersistentObject", "PersistentModel", "FieldCodable",
    ]

    /// The `override` keyword for members that override in a subclass.
    var override: String { position == .subclass ? "override " : "" }

    /// The name of the Observation registrar (suffixed with the class name so subclasses don't collide).
    var registrarName: String { Self.registrarName(of: target.name) }

    static func registrarName(of className: String) -> String { "_$observationRegistrar_\(className)" }

    /// All generated members, in order, less those the class declares itself.
    var members: [DeclSyntax] {
        allMembers.filter { !target.declaredGeneratedMembers.contains(Self.name(of: $0)) }
    }

    private var allMembers: [DeclSyntax] {
        var members: [DeclSyntax] = []
        if position != .subclass {
            let final = target.isFinal ? "" : "final "
            members.append(
                "\(raw: target.access.fixed)\(raw: final)var persistenceSlot: LogStoreObjects.ObjectSlot? = nil")
            members.append("\(raw: target.access.fixed)\(raw: final)var hasReportedChange: Bool = false")
        }
        if arguments.observable {
            members.append("private let \(raw: registrarName) = Observation.ObservationRegistrar()")
        }
        members += typeMembers
        members += FieldCodingGeneration(self).members
        members += CodableGeneration(self).members
        if position != .subclass && !target.declaresInitializer && target.allPropertiesHaveInitialValues
            && !target.hasErrors
        {
            members.append("init() {}")
        }
        return members
    }

    /// `typeName`, `typeAliases`, `fieldAliases`, `declaredConformances` and `storedFieldNames`.
    private var typeMembers: [DeclSyntax] {
        let typeName = arguments.typeName ?? ExprSyntax(StringLiteralExprSyntax(content: target.name))
        let renamed = target.properties.filter { !$0.oldNames.isEmpty }.map { property in
            "\(property.fieldLiteral): [\(property.oldNames.map(\.description).joined(separator: ", "))]"
        }
        let ownAliases: ExprSyntax = renamed.isEmpty ? "[:]" : "[\(raw: renamed.joined(separator: ", "))]"
        let fieldAliases: ExprSyntax =
            switch (position, renamed.isEmpty) {
            case (.subclass, true): "super.fieldAliases"
            case (.subclass, false): "super.fieldAliases.merging(\(ownAliases)) { _, own in own }"
            default: ownAliases
            }
        let conformances = target.inheritedTypes.filter { type in
            !type.is(SuppressedTypeSyntax.self) && !Self.unlistedConformances.contains(Self.simpleName(type))
        }
        let listed: ExprSyntax = "[\(raw: conformances.map { "\($0).self" }.joined(separator: ", "))]"
        let names = target.properties.map { "\\\(target.name).\($0.name): \($0.fieldLiteral)" }
        let ownNames: ExprSyntax = names.isEmpty ? "[:]" : "[\(raw: names.joined(separator: ", "))]"
        let fieldNames: ExprSyntax =
            position == .subclass ? "super.storedFieldNames.merging(\(ownNames)) { _, own in own }" : ownNames
        return [
            typeProperty("typeName", "String", typeName, stored: true),
            typeProperty("typeAliases", "[String]", arguments.aliases ?? "[]", stored: true),
            typeProperty("fieldAliases", "[String: [String]]", fieldAliases, stored: true),
            typeProperty(
                "declaredConformances", "[Any.Type]",
                position == .subclass ? "super.declaredConformances + \(listed)" : listed, stored: false),
            typeProperty("storedFieldNames", "[AnyKeyPath: String]", fieldNames, stored: false),
        ]
    }

    /// A type property: `static let` in a final root (`static var` when not `stored`), `class var` in a
    /// root, `override class var` in a subclass.
    private func typeProperty(_ name: String, _ type: TypeSyntax, _ value: ExprSyntax, stored: Bool) -> DeclSyntax {
        switch position {
        case .finalRoot where stored:
            "\(raw: target.access.fixed)static let \(raw: name): \(type) = \(value)"
        case .finalRoot:
            "\(raw: target.access.fixed)static var \(raw: name): \(type) { \(value) }"
        case .root, .subclass:
            "\(raw: target.access.overridable)\(raw: override)class var \(raw: name): \(type) { \(value) }"
        }
    }

    /// The name of a generated member, as ``PersistentClass/declaredGeneratedMembers`` has it.
    private static func name(of member: DeclSyntax) -> String {
        if let variable = member.as(VariableDeclSyntax.self) {
            return variable.bindings.first?.pattern.trimmedDescription ?? ""
        }
        if let function = member.as(FunctionDeclSyntax.self) { return function.name.text }
        if let initializer = member.as(InitializerDeclSyntax.self) {
            let label = initializer.signature.parameterClause.parameters.first?.firstName.text
            return label.map { "init(\($0):)" } ?? "init()"
        }
        return ""
    }

    /// The last component of a type's name: `Codable` for `Swift.Codable`, `Sendable` for `@unchecked Sendable`.
    private static func simpleName(_ type: TypeSyntax) -> String {
        if let attributed = type.as(AttributedTypeSyntax.self) { return simpleName(attributed.baseType) }
        if let member = type.as(MemberTypeSyntax.self) { return member.name.text }
        if let identifier = type.as(IdentifierTypeSyntax.self) { return identifier.name.text }
        return type.trimmedDescription
    }
}
