import SwiftSyntax
import SwiftSyntaxMacros

/// `@Transient`, `@Renamed(from:)` and `@Reference`: markers that `@Persistent` reads; they expand to nothing.
public struct MarkerMacro: PeerMacro {
    /// Generates nothing: the attribute only marks the property for `@Persistent`.
    public static func expansion(
        of node: AttributeSyntax, providingPeersOf declaration: some DeclSyntaxProtocol,
        in context: some MacroExpansionContext
    ) throws -> [DeclSyntax] {
        []
    }
}
