import SwiftDiagnostics
import SwiftSyntax

/// Decides what a member variable declaration is to `@Persistent`, and what is wrong with it.
enum PropertyAnalysis {
    /// Attributes `@Persistent` understands on a persisted property (its own markers).
    static let markers: Set<String> = ["Renamed", "Reference", "PersistentField"]

    /// Property wrappers that `@Persistent` replaces.
    static let replacedWrappers: Set<String> = ["ObjectList", "ObjectRef"]

    /// The role of `declaration`, appending what is wrong with it to `diagnostics`.
    static func role(of declaration: VariableDeclSyntax, diagnostics: inout [Diagnostic]) -> PropertyRole {
        let modifiers = declaration.modifiers
        if modifiers.contains(.static) || modifiers.contains(.class) { return .ignored }
        if declaration.bindings.allSatisfy(\.isComputed) { return .ignored }
        let isTransient = declaration.attributes.contains(named: "Transient")
        guard declaration.bindings.count == 1, let binding = declaration.bindings.first,
            let identifier = binding.pattern.as(IdentifierPatternSyntax.self)
        else {
            if !isTransient { diagnostics.append(.error(declaration, PersistentDiagnostic.multipleBindings)) }
            return isTransient ? .transient : .invalid
        }
        let name = identifier.identifier.trimmedDescription
        if isTransient {
            return transientRole(declaration, binding, name, &diagnostics)
        }
        var valid = true
        if binding.accessorBlock != nil {
            diagnostics.append(
                .error(
                    declaration, NamedDiagnostic.propertyObservers(name),
                    fixIts: [transientFixIt(declaration)]))
            valid = false
        }
        if let lazy = modifiers.first(where: { $0.name.tokenKind == .keyword(.lazy) }) {
            diagnostics.append(.error(lazy, NamedDiagnostic.lazyProperty(name), fixIts: [transientFixIt(declaration)]))
            valid = false
        }
        valid = checkWrappers(declaration, binding, name, &diagnostics) && valid
        guard valid else { return .invalid }
        return persistedRole(declaration, binding, name, &diagnostics)
    }

    /// A `@Transient` property: it needs an initial value unless it is an optional `var`.
    private static func transientRole(
        _ declaration: VariableDeclSyntax, _ binding: PatternBindingSyntax, _ name: String,
        _ diagnostics: inout [Diagnostic]
    ) -> PropertyRole {
        let isOptionalVar =
            declaration.bindingSpecifier.tokenKind == .keyword(.var)
            && binding.typeAnnotation.map { FieldType.optionalWrapped($0.type) != nil } == true
        if binding.initializer == nil && binding.accessorBlock == nil && !isOptionalVar {
            diagnostics.append(.error(declaration, NamedDiagnostic.transientNeedsInitialValue(name)))
            return .invalid
        }
        return .transient
    }

    /// Reports property wrappers on a persisted property; false when there is one.
    private static func checkWrappers(
        _ declaration: VariableDeclSyntax, _ binding: PatternBindingSyntax, _ name: String,
        _ diagnostics: inout [Diagnostic]
    ) -> Bool {
        var valid = true
        for attribute in declaration.attributes.attributes where isWrapper(attribute) {
            valid = false
            let wrapper = attribute.simpleName
            if replacedWrappers.contains(wrapper) {
                let type = binding.typeAnnotation?.type.trimmedDescription ?? "…"
                let fixed = declaration.removing(attribute)
                diagnostics.append(
                    .error(
                        attribute, NamedDiagnostic.wrapperNotNeeded(wrapper, write: "var \(name): \(type)"),
                        fixIts: [
                            .replace(message: PersistentFixIt.remove(wrapper), oldNode: declaration, newNode: fixed)
                        ]
                    ))
            } else {
                diagnostics.append(
                    .error(attribute, PersistentDiagnostic.unsupportedWrapper, fixIts: [transientFixIt(declaration)]))
            }
        }
        return valid
    }

    /// Whether `attribute` is (probably) a property wrapper: a type name that is neither one of the markers
    /// nor a global actor.
    private static func isWrapper(_ attribute: AttributeSyntax) -> Bool {
        let name = attribute.simpleName
        guard let first = name.first, first.isUppercase else { return false }
        return !markers.contains(name) && !name.hasSuffix("Actor")
    }

    /// A persisted property that passed the checks of its declaration: its type and storage.
    private static func persistedRole(
        _ declaration: VariableDeclSyntax, _ binding: PatternBindingSyntax, _ name: String,
        _ diagnostics: inout [Diagnostic]
    ) -> PropertyRole {
        let isLet = declaration.bindingSpecifier.tokenKind == .keyword(.let)
        if isLet && binding.initializer != nil {
            let fixed = declaration.with(
                \.bindingSpecifier, declaration.bindingSpecifier.with(\.tokenKind, .keyword(.var)))
            diagnostics.append(
                .error(
                    declaration.bindingSpecifier, PersistentDiagnostic.letWithInitialValue,
                    fixIts: [.replace(message: PersistentFixIt.useVar, oldNode: declaration, newNode: fixed)]))
            return .invalid
        }
        let initializer = binding.initializer?.value
        guard let type = binding.typeAnnotation?.type ?? initializer.flatMap(FieldType.literalType(of:)) else {
            diagnostics.append(.error(binding.pattern, NamedDiagnostic.missingTypeAnnotation(name)))
            return .invalid
        }
        let reference = declaration.attributes.attribute(named: "Reference")
        guard let storage = FieldType.storage(of: type, markedReference: reference != nil) else {
            if let reference {
                diagnostics.append(.error(reference, PersistentDiagnostic.referenceNeedsOptionalOrArray))
            } else {
                let optional = TypeSyntax(OptionalTypeSyntax(wrappedType: TypeSyntax("(\(type.trimmed))")))
                diagnostics.append(
                    .error(
                        type, PersistentDiagnostic.nonOptionalExistential,
                        fixIts: [
                            .replace(
                                message: PersistentFixIt.makeOptional, oldNode: type,
                                newNode: optional.with(\.trailingTrivia, type.trailingTrivia))
                        ]))
            }
            return .invalid
        }
        if isLet, storage.boxType != nil {
            diagnostics.append(.error(declaration.bindingSpecifier, NamedDiagnostic.boxedLet(name)))
            return .invalid
        }
        let oldNames = declaration.attributes.attribute(named: "Renamed")?.stringLiteralArguments ?? []
        return .persisted(
            PersistedProperty(
                name: name, type: type.trimmed, initializer: initializer?.trimmed, isLet: isLet, storage: storage,
                oldNames: oldNames))
    }

    /// The fix-it marking `declaration` `@Transient`.
    private static func transientFixIt(_ declaration: VariableDeclSyntax) -> FixIt {
        .replace(message: PersistentFixIt.markTransient, oldNode: declaration, newNode: declaration.markedTransient)
    }
}

extension PatternBindingSyntax {
    /// Whether the binding is a computed property (a getter, or accessors other than observers).
    var isComputed: Bool {
        switch accessorBlock?.accessors {
        case .none: false
        case .getter: true
        case .accessors(let accessors):
            accessors.contains { accessor in
                let kind = accessor.accessorSpecifier.tokenKind
                return kind != .keyword(.willSet) && kind != .keyword(.didSet)
            }
        }
    }
}
