import SwiftSyntax

extension AttributeListSyntax {
    /// The attributes (not `#if` clauses) in the list.
    var attributes: [AttributeSyntax] {
        compactMap { element in
            guard case .attribute(let attribute) = element else { return nil }
            return attribute
        }
    }

    /// The attribute named `name` (`@name` or `@Module.name`), if any.
    func attribute(named name: String) -> AttributeSyntax? {
        attributes.first { $0.simpleName == name }
    }

    /// Whether the list holds an attribute named `name`.
    func contains(named name: String) -> Bool {
        attribute(named: name) != nil
    }
}

extension AttributeSyntax {
    /// The attribute's name without its module: `Transient` for `@LogStorePersistent.Transient`.
    var simpleName: String {
        if let member = attributeName.as(MemberTypeSyntax.self) { return member.name.text }
        return attributeName.trimmedDescription
    }

    /// The argument labelled `label` (nil: the first unlabelled one).
    func argument(labelled label: String?) -> ExprSyntax? {
        guard case .argumentList(let arguments) = self.arguments else { return nil }
        return arguments.first { $0.label?.text == label }?.expression
    }

    /// The string literals among the arguments, in order (`@Renamed(from: "a", "b")` → `"a"`, `"b"`).
    var stringLiteralArguments: [ExprSyntax] {
        guard case .argumentList(let arguments) = self.arguments else { return [] }
        return arguments.map { $0.expression.trimmed }.filter { $0.is(StringLiteralExprSyntax.self) }
    }
}

extension DeclModifierListSyntax {
    /// Whether the list holds `keyword`.
    func contains(_ keyword: Keyword) -> Bool {
        contains { $0.name.tokenKind == .keyword(keyword) }
    }
}

extension VariableDeclSyntax {
    /// The declaration with `@Transient` added in front of its attributes.
    var markedTransient: VariableDeclSyntax {
        let transient = AttributeSyntax(
            atSign: .atSignToken(leadingTrivia: leadingTrivia),
            attributeName: IdentifierTypeSyntax(name: .identifier("Transient")),
            trailingTrivia: .space)
        let rest = with(\.leadingTrivia, [])
        return rest.with(\.attributes, [.attribute(transient)] + rest.attributes)
    }

    /// The declaration without `attribute`, keeping the declaration's leading trivia.
    func removing(_ attribute: AttributeSyntax) -> VariableDeclSyntax {
        let kept = attributes.filter { element in
            guard case .attribute(let candidate) = element else { return true }
            return candidate.id != attribute.id
        }
        return with(\.attributes, kept).with(\.leadingTrivia, leadingTrivia)
    }
}
