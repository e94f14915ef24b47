import SwiftCompilerPlugin
import SwiftSyntaxMacros

/// The compiler plug-in that provides LogStore's macros.
@main
struct LogStoreMacrosPlugin: CompilerPlugin {
    let providingMacros: [any Macro.Type] = [PersistentMacro.self, PersistentFieldMacro.self, MarkerMacro.self]
}
