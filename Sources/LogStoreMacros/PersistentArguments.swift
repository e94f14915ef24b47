import SwiftDiagnostics
import SwiftSyntax

/// The arguments of `@Persistent(_ typeName:aliases:observable:)`.
struct PersistentArguments {
    /// The stored type name expression (the argument, else the class name as a literal).
    let typeName: ExprSyntax?
    /// Earlier type names, as written (`["TaskItem"]`).
    let aliases: ExprSyntax?
    /// Whether the class is also Observation-tracked.
    let observable: Bool

    /// The arguments of `attribute`; `observable:` must be the literal `true` when given (the overload with
    /// `observable:` always adds the `Observable` conformance).
    init(_ attribute: AttributeSyntax, diagnostics: inout [Diagnostic]) {
        typeName = attribute.argument(labelled: nil)?.trimmed
        aliases = attribute.argument(labelled: "aliases")?.trimmed
        let argument = attribute.argument(labelled: "observable")
        observable = argument?.as(BooleanLiteralExprSyntax.self)?.literal.tokenKind == .keyword(.true)
        if let argument, !observable {
            diagnostics.append(.error(argument, PersistentDiagnostic.observableNotTrue))
        }
    }
}
