import SwiftDiagnostics
import SwiftSyntax
import SwiftSyntaxMacros

/// `@PersistentField`: turns a persisted `var` into accessors over private backing storage `_name`, which
/// note each change in the object's `persistenceSlot` (and, with `observable: true`, tell Observation).
public struct PersistentFieldMacro {}

extension PersistentFieldMacro: AccessorMacro {
    /// Generates the `init`, `get` and `set` accessors over the backing storage.
    public static func expansion(
        of node: AttributeSyntax, providingAccessorsOf declaration: some DeclSyntaxProtocol,
        in context: some MacroExpansionContext
    ) throws -> [AccessorDeclSyntax] {
        guard let property = persistedVar(declaration) else { return [] }
        let registrar =
            isObservable(node) ? enclosingClassName(context).map(MemberGeneration.registrarName(of:)) : nil
        return AccessorGeneration(property: property, registrar: registrar).accessors
    }
}

extension PersistentFieldMacro: PeerMacro {
    /// Generates the backing storage `_name`.
    public static func expansion(
        of node: AttributeSyntax, providingPeersOf declaration: some DeclSyntaxProtocol,
        in context: some MacroExpansionContext
    ) throws -> [DeclSyntax] {
        guard let property = persistedVar(declaration) else { return [] }
        return [AccessorGeneration(property: property, registrar: nil).storage]
    }
}

extension PersistentFieldMacro {
    /// The persisted `var` `declaration` declares, or nil (`@Persistent` reports what is wrong with it).
    private static func persistedVar(_ declaration: some DeclSyntaxProtocol) -> PersistedProperty? {
        var ignored: [Diagnostic] = []
        guard let variable = declaration.as(VariableDeclSyntax.self),
            case .persisted(let property) = PropertyAnalysis.role(of: variable, diagnostics: &ignored),
            !property.isLet
        else { return nil }
        return property
    }

    private static func isObservable(_ node: AttributeSyntax) -> Bool {
        node.argument(labelled: "observable")?.as(BooleanLiteralExprSyntax.self)?.literal.tokenKind == .keyword(.true)
    }

    /// The name of the class the property is declared in.
    private static func enclosingClassName(_ context: some MacroExpansionContext) -> String? {
        context.lexicalContext.lazy.compactMap { $0.as(ClassDeclSyntax.self) }.first?.name.text
    }
}
