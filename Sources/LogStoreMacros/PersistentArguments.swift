import SwiftSyntax

/// The arguments of `@Persistent(_ typeName:aliases:observable:)`.
struct PersistentArguments {
    /// The stored type name expression (the argument, else the class name as a literal).
    let typeName: ExprSyntax?
    /// Earlier type names, as written (`["TaskItem"]`).
    let aliases: ExprSyntax?
    /// Whether the class is also Observation-tracked.
    let observable: Bool

    init(_ attribute: AttributeSyntax) {
        typeName = attribute.argument(labelled: nil)?.trimmed
        aliases = attribute.argument(labelled: "aliases")?.trimmed
        observable =
            attribute.argument(labelled: "observable")?.as(BooleanLiteralExprSyntax.self)?.literal.tokenKind
            == .keyword(.true)
    }
}
