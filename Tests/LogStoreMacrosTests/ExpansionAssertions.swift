import LogStoreMacros
import SwiftSyntax
import SwiftSyntaxMacroExpansion
import SwiftSyntaxMacrosGenericTestSupport
import Testing

/// The macros of a class with no persistent superclass: `PersistentModel` is among the missing conformances.
let rootMacros = macros(missing: ["PersistentModel"])

/// The macros of a subclass of a `@Persistent` class: it conforms to `PersistentModel` already.
let subclassMacros = macros(missing: [])

/// The macros, `@Persistent` stating `missing` as the conformances the class lacks.
func macros(missing: [TypeSyntax]) -> [String: MacroSpec] {
    [
        "Persistent": MacroSpec(type: PersistentMacro.self, conformances: missing),
        "PersistentField": MacroSpec(type: PersistentFieldMacro.self),
        "Transient": MacroSpec(type: MarkerMacro.self),
        "Renamed": MacroSpec(type: MarkerMacro.self),
        "Reference": MacroSpec(type: MarkerMacro.self),
    ]
}

/// Expands the macros in `source` and checks the result, the diagnostics and the source after `applyFixIts`,
/// recording a Swift Testing issue for each difference.
func assertExpansion(
    _ source: String, expandedSource: String, diagnostics: [DiagnosticSpec] = [],
    macros: [String: MacroSpec] = rootMacros, applyFixIts: [String]? = nil, fixedSource: String? = nil,
    sourceLocation: Testing.SourceLocation = #_sourceLocation
) {
    assertMacroExpansion(
        source, expandedSource: expandedSource, diagnostics: diagnostics, macroSpecs: macros,
        applyFixIts: applyFixIts, fixedSource: fixedSource, indentationWidth: .spaces(4),
        failureHandler: { failure in Issue.record(Comment(rawValue: failure.message), sourceLocation: sourceLocation) })
}
