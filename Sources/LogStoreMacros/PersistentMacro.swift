import SwiftDiagnostics
import SwiftSyntax
import SwiftSyntaxMacros

/// `@Persistent`: makes a class a `PersistentModel` that codes its stored properties itself.
///
/// The member role generates the type's names, its field and `Codable` coding and (in a class with no
/// persistent superclass) `persistenceSlot`; the member-attribute role puts `@PersistentField` on each
/// persisted `var`; the extension role adds the conformances the class lacks.
///
/// A class with errors still gets its members and conformances (less the wrong properties), so that the
/// errors reported are those of `@Persistent` alone.
public struct PersistentMacro {}

extension PersistentMacro: MemberMacro {
    /// Generates the members of the class, and reports what is wrong with it (nothing for another kind of type).
    public static func expansion(
        of node: AttributeSyntax, providingMembersOf declaration: some DeclGroupSyntax,
        conformingTo protocols: [TypeSyntax], in context: some MacroExpansionContext
    ) throws -> [DeclSyntax] {
        var diagnostics: [Diagnostic] = []
        let arguments = PersistentArguments(node, diagnostics: &diagnostics)
        let target = PersistentClass.analyze(declaration, diagnostics: &diagnostics)
        for diagnostic in diagnostics { context.diagnose(diagnostic) }
        guard let target else { return [] }
        // `PersistentModel` is missing exactly when no superclass is a `@Persistent` class.
        let position: ClassPosition =
            if !protocols.contains(where: { $0.names("PersistentModel") }) {
                .subclass
            } else {
                target.isFinal ? .finalRoot : .root
            }
        return MemberGeneration(target: target, arguments: arguments, position: position).members
    }
}

extension PersistentMacro: MemberAttributeMacro {
    /// Adds `@PersistentField` to a persisted `var`.
    public static func expansion(
        of node: AttributeSyntax, attachedTo declaration: some DeclGroupSyntax,
        providingAttributesFor member: some DeclSyntaxProtocol, in context: some MacroExpansionContext
    ) throws -> [AttributeSyntax] {
        var ignored: [Diagnostic] = []
        guard declaration.is(ClassDeclSyntax.self), let variable = member.as(VariableDeclSyntax.self),
            !variable.attributes.contains(named: "PersistentField"),
            case .persisted(let property) = PropertyAnalysis.role(of: variable, diagnostics: &ignored),
            !property.isLet
        else { return [] }
        let observable = PersistentArguments(node, diagnostics: &ignored).observable
        return observable ? ["@PersistentField(observable: true)"] : ["@PersistentField"]
    }
}

extension PersistentMacro: ExtensionMacro {
    /// Adds the conformances to `PersistentModel` and `Observable` that the class lacks.
    public static func expansion(
        of node: AttributeSyntax, attachedTo declaration: some DeclGroupSyntax,
        providingExtensionsOf type: some TypeSyntaxProtocol, conformingTo protocols: [TypeSyntax],
        in context: some MacroExpansionContext
    ) throws -> [ExtensionDeclSyntax] {
        // Every conformance the macro may add is added to a class that lacks it, even one with errors and
        // `observable: false`: a compiler bug (swiftlang/swift#89151) crashes on a subclass of a class that
        // did not get a conformance its macro declares. So `Observable` is in the `conformances:` of the
        // `observable:` overload only.
        guard declaration.is(ClassDeclSyntax.self) else { return [] }
        var extensions: [ExtensionDeclSyntax] = []
        if protocols.contains(where: { $0.names("PersistentModel") }) {
            extensions.append(try ExtensionDeclSyntax("extension \(type.trimmed): LogStoreObjects.PersistentModel {}"))
        }
        if protocols.contains(where: { $0.names("Observable") }) {
            extensions.append(try ExtensionDeclSyntax("extension \(type.trimmed): Observation.Observable {}"))
        }
        return extensions
    }
}

extension TypeSyntax {
    /// Whether the type is `name`, qualified or not (`PersistentModel`, `LogStoreObjects.PersistentModel`).
    func names(_ name: String) -> Bool {
        if let member = self.as(MemberTypeSyntax.self) { return member.name.text == name }
        return trimmedDescription == name
    }
}
