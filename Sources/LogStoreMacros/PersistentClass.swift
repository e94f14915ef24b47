import SwiftDiagnostics
import SwiftSyntax

/// A class declaration as `@Persistent` sees it: its name, access, inheritance and persisted properties.
struct PersistentClass {
    /// The class's name.
    let name: String
    /// Whether the class is `final`.
    let isFinal: Bool
    /// The access of the members that witness protocol requirements, mirroring the class's.
    let access: MemberAccess
    /// The types named in the inheritance clause.
    let inheritedTypes: [TypeSyntax]
    /// The persisted properties, in declaration order.
    let properties: [PersistedProperty]
    /// Whether the class declares an initializer of its own.
    let declaresInitializer: Bool
    /// Whether every stored property has an initial value (so `init()` can initialize them all).
    let allPropertiesHaveInitialValues: Bool

    /// Members `@Persistent` generates: declaring one of them is an error.
    static let generatedProperties: Set<String> = [
        "persistenceSlot", "typeName", "typeAliases", "fieldAliases", "declaredConformances",
    ]

    /// Analyzes `declaration`. Returns nil, with the reasons in `diagnostics`, when it is not a class or
    /// something in it keeps `@Persistent` from generating its members.
    static func analyze(_ declaration: some DeclGroupSyntax, diagnostics: inout [Diagnostic]) -> PersistentClass? {
        guard let classDeclaration = declaration.as(ClassDeclSyntax.self) else {
            diagnostics.append(.error(declaration.introducer, PersistentDiagnostic.classesOnly))
            return nil
        }
        let errorsBefore = diagnostics.count
        var properties: [PersistedProperty] = []
        var declaresInitializer = false
        var allHaveInitialValues = true
        for member in declaration.memberBlock.members {
            if isGenerated(member.decl) {
                diagnostics.append(.error(member.decl, PersistentDiagnostic.generatedMember))
                continue
            }
            if member.decl.is(InitializerDeclSyntax.self) { declaresInitializer = true }
            guard let variable = member.decl.as(VariableDeclSyntax.self) else { continue }
            switch PropertyAnalysis.role(of: variable, diagnostics: &diagnostics) {
            case .persisted(let property):
                properties.append(property)
                allHaveInitialValues =
                    allHaveInitialValues && (property.initializer != nil || (property.isOptional && !property.isLet))
            case .ignored, .transient, .invalid:
                break
            }
        }
        guard diagnostics.count == errorsBefore else { return nil }
        let modifiers = classDeclaration.modifiers
        return PersistentClass(
            name: classDeclaration.name.text,
            isFinal: modifiers.contains(.final),
            access: MemberAccess(modifiers),
            inheritedTypes: classDeclaration.inheritanceClause?.inheritedTypes.map { $0.type.trimmed } ?? [],
            properties: properties,
            declaresInitializer: declaresInitializer,
            allPropertiesHaveInitialValues: allHaveInitialValues)
    }

    /// Whether `declaration` is one that `@Persistent` generates.
    private static func isGenerated(_ declaration: DeclSyntax) -> Bool {
        if let variable = declaration.as(VariableDeclSyntax.self) {
            return variable.bindings.contains { binding in
                guard let name = binding.pattern.as(IdentifierPatternSyntax.self)?.identifier.text else { return false }
                return generatedProperties.contains(name)
            }
        }
        if let function = declaration.as(FunctionDeclSyntax.self) {
            let labels = function.signature.parameterClause.parameters.map(\.firstName.text)
            return labels == ["to"] && ["encodeFields", "encode"].contains(function.name.text)
        }
        if let initializer = declaration.as(InitializerDeclSyntax.self) {
            let labels = initializer.signature.parameterClause.parameters.map(\.firstName.text)
            return labels == ["fields"] || labels == ["from"]
        }
        return false
    }
}

/// The access modifiers of generated members, mirroring the class's access level.
struct MemberAccess {
    /// For members a subclass may override (`open` in an open class).
    let overridable: String
    /// For everything else (`public` in an open or public class).
    let fixed: String

    init(_ classModifiers: DeclModifierListSyntax) {
        if classModifiers.contains(.open) {
            (overridable, fixed) = ("open ", "public ")
        } else if classModifiers.contains(.public) {
            (overridable, fixed) = ("public ", "public ")
        } else if classModifiers.contains(.package) {
            (overridable, fixed) = ("package ", "package ")
        } else {
            (overridable, fixed) = ("", "")
        }
    }
}
