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
    /// The members `@Persistent` generates that the class declares itself (an error): not generated again.
    let declaredGeneratedMembers: Set<String>
    /// Whether something in the class is wrong (reported in the diagnostics).
    let hasErrors: Bool

    /// Members `@Persistent` generates: declaring one of them is an error.
    static let generatedProperties: Set<String> = [
        "persistenceSlot", "hasReportedChange", "typeName", "typeAliases", "fieldAliases", "declaredConformances",
        "storedFieldNames",
    ]

    /// Analyzes `declaration`, appending what is wrong with it to `diagnostics`. Returns nil when it is not
    /// a class; a class with errors keeps its valid persisted properties, so that `@Persistent` still makes
    /// it a `PersistentModel` and the errors reported are only those in `diagnostics`.
    static func analyze(_ declaration: some DeclGroupSyntax, diagnostics: inout [Diagnostic]) -> PersistentClass? {
        guard let classDeclaration = declaration.as(ClassDeclSyntax.self) else {
            diagnostics.append(.error(declaration.introducer, PersistentDiagnostic.classesOnly))
            return nil
        }
        let errorsBefore = diagnostics.count
        var properties: [PersistedProperty] = []
        var declaresInitializer = false
        var allHaveInitialValues = true
        var declaredGenerated: Set<String> = []
        for member in declaration.memberBlock.members {
            if let generated = generatedName(member.decl) {
                diagnostics.append(.error(member.decl, PersistentDiagnostic.generatedMember))
                declaredGenerated.insert(generated)
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
        let modifiers = classDeclaration.modifiers
        return PersistentClass(
            name: classDeclaration.name.text,
            isFinal: modifiers.contains(.final),
            access: MemberAccess(modifiers),
            inheritedTypes: classDeclaration.inheritanceClause?.inheritedTypes.map { $0.type.trimmed } ?? [],
            properties: properties,
            declaresInitializer: declaresInitializer,
            allPropertiesHaveInitialValues: allHaveInitialValues,
            declaredGeneratedMembers: declaredGenerated,
            hasErrors: diagnostics.count != errorsBefore)
    }

    /// The name of the generated member `declaration` declares (`typeName`, `encode`, `init(fields:)`…), or
    /// nil when it declares none.
    private static func generatedName(_ declaration: DeclSyntax) -> String? {
        if let variable = declaration.as(VariableDeclSyntax.self) {
            return variable.bindings.lazy.compactMap { $0.pattern.as(IdentifierPatternSyntax.self)?.identifier.text }
                .first { generatedProperties.contains($0) }
        }
        if let function = declaration.as(FunctionDeclSyntax.self) {
            let labels = function.signature.parameterClause.parameters.map(\.firstName.text)
            let name = function.name.text
            return labels == ["to"] && ["encodeFields", "encode"].contains(name) ? name : nil
        }
        if let initializer = declaration.as(InitializerDeclSyntax.self) {
            let labels = initializer.signature.parameterClause.parameters.map(\.firstName.text)
            return labels == ["fields"] || labels == ["from"] ? "init(\(labels[0]):)" : nil
        }
        return nil
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
