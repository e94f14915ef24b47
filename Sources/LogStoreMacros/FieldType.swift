import SwiftSyntax

/// How a persisted property's value is kept in its backing storage.
enum FieldStorage {
    /// The value itself.
    case plain
    /// An `ObjectRef<Element>` box: an optional reference of protocol type, or an optional `@Reference`.
    case reference(element: TypeSyntax)
    /// An `ObjectList<Element>` box: an array of a protocol type, or an array marked `@Reference`.
    case list(element: TypeSyntax)

    /// The box type, or nil for plain storage.
    var boxType: TypeSyntax? {
        switch self {
        case .plain: nil
        case .reference(let element): "LogStoreObjects.ObjectRef<\(element.trimmed)>"
        case .list(let element): "LogStoreObjects.ObjectList<\(element.trimmed)>"
        }
    }

    /// The expression boxing `value`, or `value` itself for plain storage.
    func boxing(_ value: ExprSyntax) -> ExprSyntax {
        switch self {
        case .plain: value
        case .reference: "LogStoreObjects.ObjectRef(wrappedValue: \(value))"
        case .list: "LogStoreObjects.ObjectList(wrappedValue: \(value))"
        }
    }
}

/// What `@Persistent` reads from a property's type: optionality, array elements, existentials.
enum FieldType {
    /// The type an optional type wraps (`T?`, `T!`, `Optional<T>`), or nil.
    static func optionalWrapped(_ type: TypeSyntax) -> TypeSyntax? {
        if let optional = type.as(OptionalTypeSyntax.self) { return optional.wrappedType }
        if let unwrapped = type.as(ImplicitlyUnwrappedOptionalTypeSyntax.self) { return unwrapped.wrappedType }
        return genericArgument(of: type, named: "Optional")
    }

    /// The element type of an array type (`[T]`, `Array<T>`), or nil.
    static func arrayElement(_ type: TypeSyntax) -> TypeSyntax? {
        if let array = type.as(ArrayTypeSyntax.self) { return array.element }
        return genericArgument(of: type, named: "Array")
    }

    /// Whether `type` is an existential (`any P`, `(any P & Q)`).
    static func isExistential(_ type: TypeSyntax) -> Bool {
        guard let bare = unparenthesized(type).as(SomeOrAnyTypeSyntax.self) else { return false }
        return bare.someOrAnySpecifier.tokenKind == .keyword(.any)
    }

    /// `type` without enclosing parentheses: `any P` for `(any P)`.
    static func unparenthesized(_ type: TypeSyntax) -> TypeSyntax {
        if let tuple = type.as(TupleTypeSyntax.self), tuple.elements.count == 1, let only = tuple.elements.first,
            only.firstName == nil
        {
            return unparenthesized(only.type)
        }
        return type
    }

    /// The storage of a property of type `type`: boxed when it holds references of protocol type, or when
    /// the property is marked `@Reference`. Nil when the type cannot be stored that way (a non-optional
    /// existential, or `@Reference` on a type that is neither optional nor an array).
    static func storage(of type: TypeSyntax, markedReference: Bool) -> FieldStorage? {
        if let wrapped = optionalWrapped(type) {
            let element = unparenthesized(wrapped)
            return markedReference || isExistential(element) ? .reference(element: element) : .plain
        }
        if let element = arrayElement(type) {
            let element = unparenthesized(element)
            return markedReference || isExistential(element) ? .list(element: element) : .plain
        }
        return markedReference || isExistential(type) ? nil : .plain
    }

    /// The type of a literal initializer (`Bool`, `Int`, `Double`, `String`), or nil.
    static func literalType(of expression: ExprSyntax) -> TypeSyntax? {
        if expression.is(BooleanLiteralExprSyntax.self) { return "Bool" }
        if expression.is(IntegerLiteralExprSyntax.self) { return "Int" }
        if expression.is(FloatLiteralExprSyntax.self) { return "Double" }
        if expression.is(StringLiteralExprSyntax.self) { return "String" }
        if let prefix = expression.as(PrefixOperatorExprSyntax.self), prefix.operator.text == "-",
            prefix.expression.is(IntegerLiteralExprSyntax.self) || prefix.expression.is(FloatLiteralExprSyntax.self)
        {
            return literalType(of: prefix.expression)
        }
        return nil
    }

    /// The only generic argument of `type` when it is `name<Argument>` (or `Swift.name<Argument>`).
    private static func genericArgument(of type: TypeSyntax, named name: String) -> TypeSyntax? {
        let generic: GenericArgumentClauseSyntax?
        if let identifier = type.as(IdentifierTypeSyntax.self), identifier.name.text == name {
            generic = identifier.genericArgumentClause
        } else if let member = type.as(MemberTypeSyntax.self), member.name.text == name,
            member.baseType.trimmedDescription == "Swift"
        {
            generic = member.genericArgumentClause
        } else {
            return nil
        }
        guard let arguments = generic?.arguments, arguments.count == 1,
            case .type(let argument) = arguments.first?.argument
        else { return nil }
        return argument.trimmed
    }
}
