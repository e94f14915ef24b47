import SwiftDiagnostics
import SwiftSyntax

/// An error `@Persistent` reports about the class it is attached to.
enum PersistentDiagnostic: String, DiagnosticMessage {
    case classesOnly
    case missingTypeAnnotation
    case wrapperNotNeeded
    case unsupportedWrapper
    case transientNeedsInitialValue
    case letWithInitialValue
    case nonOptionalExistential
    case lazyProperty
    case generatedMember
    case propertyObservers
    case multipleBindings
    case referenceNeedsOptionalOrArray
    case boxedLet
    case observableNotTrue

    var diagnosticID: MessageID { MessageID(domain: "LogStoreMacros", id: rawValue) }
    var severity: DiagnosticSeverity { .error }

    /// The message, for diagnostics that name nothing.
    var message: String {
        switch self {
        case .classesOnly: "@Persistent applies to classes only"
        case .unsupportedWrapper:
            "property wrappers are not supported on persisted properties; mark it @Transient"
        case .letWithInitialValue:
            "a stored 'let' with an initial value cannot be read back; use 'var' or @Transient"
        case .nonOptionalExistential: "a reference of protocol type must be optional or an array"
        case .generatedMember: "remove it: @Persistent generates it"
        case .multipleBindings: "declare each persisted property in a declaration of its own"
        case .referenceNeedsOptionalOrArray: "@Reference applies to an optional or an array of persistent objects"
        case .observableNotTrue:
            "'observable:' takes the literal 'true'; leave it out for a class that is not observable"
        case .missingTypeAnnotation, .wrapperNotNeeded, .transientNeedsInitialValue, .lazyProperty,
            .propertyObservers, .boxedLet:
            "\(self)"
        }
    }
}

/// A diagnostic message that names a property or a wrapper.
struct NamedDiagnostic: DiagnosticMessage {
    let kind: PersistentDiagnostic
    let message: String

    var diagnosticID: MessageID { kind.diagnosticID }
    var severity: DiagnosticSeverity { .error }

    static func missingTypeAnnotation(_ name: String) -> NamedDiagnostic {
        NamedDiagnostic(kind: .missingTypeAnnotation, message: "add a type annotation to '\(name)'")
    }

    static func wrapperNotNeeded(_ wrapper: String, write declaration: String) -> NamedDiagnostic {
        NamedDiagnostic(
            kind: .wrapperNotNeeded, message: "@\(wrapper) is not needed with @Persistent: write `\(declaration)`")
    }

    static func transientNeedsInitialValue(_ name: String) -> NamedDiagnostic {
        NamedDiagnostic(
            kind: .transientNeedsInitialValue, message: "@Transient property '\(name)' needs an initial value")
    }

    static func lazyProperty(_ name: String) -> NamedDiagnostic {
        NamedDiagnostic(kind: .lazyProperty, message: "a lazy property cannot be persisted; mark '\(name)' @Transient")
    }

    static func propertyObservers(_ name: String) -> NamedDiagnostic {
        NamedDiagnostic(
            kind: .propertyObservers,
            message: "property observers are not supported on persisted properties; mark '\(name)' @Transient")
    }

    static func boxedLet(_ name: String) -> NamedDiagnostic {
        NamedDiagnostic(
            kind: .boxedLet, message: "a reference of protocol type or @Reference must be a 'var': write 'var \(name)'")
    }
}

/// A fix-it `@Persistent` offers.
struct PersistentFixIt: FixItMessage {
    let message: String
    var fixItID: MessageID { MessageID(domain: "LogStoreMacros", id: message) }

    static let markTransient = PersistentFixIt(message: "mark it @Transient")
    static let useVar = PersistentFixIt(message: "use 'var'")
    static let makeOptional = PersistentFixIt(message: "make it optional")

    static func remove(_ attribute: String) -> PersistentFixIt { PersistentFixIt(message: "remove @\(attribute)") }
}

extension Diagnostic {
    /// An error at `node`.
    static func error(_ node: some SyntaxProtocol, _ message: some DiagnosticMessage, fixIts: [FixIt] = [])
        -> Diagnostic
    {
        Diagnostic(node: Syntax(node), message: message, fixIts: fixIts)
    }
}
