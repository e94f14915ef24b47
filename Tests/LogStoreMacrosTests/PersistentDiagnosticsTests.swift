import LogStoreMacros
import SwiftSyntaxMacrosGenericTestSupport
import Testing

/// One test per error `@Persistent` reports. A class with errors still gets its members and conformances,
/// less the wrong properties: a subclass of a class without them would crash the compiler
/// (swiftlang/swift#89151), and the errors reported are then those of `@Persistent` alone.
@Suite struct PersistentDiagnosticsTests {
    @Test(arguments: ["struct", "enum", "actor", "protocol", "extension"])
    func appliesToClassesOnly(keyword: String) {
        assertExpansion(
            "@Persistent \(keyword) Thing {}",
            expandedSource: "\(keyword) Thing {}",
            diagnostics: [DiagnosticSpec(message: "@Persistent applies to classes only", line: 1, column: 13)])
    }

    @Test func storedPropertyWithoutTypeAnnotationOrLiteral() {
        assertExpansion(
            """
            @Persistent final class Event {
                var date = Date()
            }
            """,
            expandedSource: """
                final class Event {
                    var date = Date()

                    var persistenceSlot: LogStoreObjects.ObjectSlot? = nil

                    var hasReportedChange: Bool = false

                    static let typeName: String = "Event"

                    static let typeAliases: [String] = []

                    static let fieldAliases: [String: [String]] = [:]

                    static var declaredConformances: [Any.Type] {
                        []
                    }

                    static var storedFieldNames: [AnyKeyPath: String] {
                        [:]
                    }

                    func encodeFields(to fields: LogStoreObjects.FieldWriter) throws {
                    }

                    required init(fields: LogStoreObjects.FieldReader) throws {
                    }

                    func encode(to encoder: any Encoder) throws {
                    }

                    required init(from decoder: any Decoder) throws {
                    }
                }

                extension Event: LogStoreObjects.PersistentModel {
                }
                """,
            diagnostics: [DiagnosticSpec(message: "add a type annotation to 'date'", line: 2, column: 9)])
    }

    @Test func objectListAndObjectRefAreNotNeeded() {
        assertExpansion(
            """
            @Persistent final class Layer {
                @ObjectList var shapes: [any Shape]
                @ObjectRef var focus: (any Shape)?
            }
            """,
            expandedSource: """
                final class Layer {
                    @ObjectList var shapes: [any Shape]
                    @ObjectRef var focus: (any Shape)?

                    var persistenceSlot: LogStoreObjects.ObjectSlot? = nil

                    var hasReportedChange: Bool = false

                    static let typeName: String = "Layer"

                    static let typeAliases: [String] = []

                    static let fieldAliases: [String: [String]] = [:]

                    static var declaredConformances: [Any.Type] {
                        []
                    }

                    static var storedFieldNames: [AnyKeyPath: String] {
                        [:]
                    }

                    func encodeFields(to fields: LogStoreObjects.FieldWriter) throws {
                    }

                    required init(fields: LogStoreObjects.FieldReader) throws {
                    }

                    func encode(to encoder: any Encoder) throws {
                    }

                    required init(from decoder: any Decoder) throws {
                    }
                }

                extension Layer: LogStoreObjects.PersistentModel {
                }
                """,
            diagnostics: [
                DiagnosticSpec(
                    message: "@ObjectList is not needed with @Persistent: write `var shapes: [any Shape]`", line: 2,
                    column: 5, fixIts: [FixItSpec(message: "remove @ObjectList")]),
                DiagnosticSpec(
                    message: "@ObjectRef is not needed with @Persistent: write `var focus: (any Shape)?`", line: 3,
                    column: 5, fixIts: [FixItSpec(message: "remove @ObjectRef")]),
            ],
            applyFixIts: ["remove @ObjectList", "remove @ObjectRef"],
            fixedSource: """
                @Persistent final class Layer {
                    var shapes: [any Shape]
                    var focus: (any Shape)?
                }
                """)
    }

    @Test func otherPropertyWrapper() {
        assertExpansion(
            """
            @Persistent final class Gauge {
                @Clamped var level: Int = 0
            }
            """,
            expandedSource: """
                final class Gauge {
                    @Clamped var level: Int = 0

                    var persistenceSlot: LogStoreObjects.ObjectSlot? = nil

                    var hasReportedChange: Bool = false

                    static let typeName: String = "Gauge"

                    static let typeAliases: [String] = []

                    static let fieldAliases: [String: [String]] = [:]

                    static var declaredConformances: [Any.Type] {
                        []
                    }

                    static var storedFieldNames: [AnyKeyPath: String] {
                        [:]
                    }

                    func encodeFields(to fields: LogStoreObjects.FieldWriter) throws {
                    }

                    required init(fields: LogStoreObjects.FieldReader) throws {
                    }

                    func encode(to encoder: any Encoder) throws {
                    }

                    required init(from decoder: any Decoder) throws {
                    }
                }

                extension Gauge: LogStoreObjects.PersistentModel {
                }
                """,
            diagnostics: [
                DiagnosticSpec(
                    message: "property wrappers are not supported on persisted properties; mark it @Transient",
                    line: 2, column: 5, fixIts: [FixItSpec(message: "mark it @Transient")])
            ],
            applyFixIts: ["mark it @Transient"],
            fixedSource: """
                @Persistent final class Gauge {
                    @Transient @Clamped var level: Int = 0
                }
                """)
    }

    @Test func transientWithoutInitialValue() {
        assertExpansion(
            """
            @Persistent final class Cache {
                @Transient var entries: [String: Int]
                @Transient var note: String?
            }
            """,
            expandedSource: """
                final class Cache {
                    var entries: [String: Int]
                    var note: String?

                    var persistenceSlot: LogStoreObjects.ObjectSlot? = nil

                    var hasReportedChange: Bool = false

                    static let typeName: String = "Cache"

                    static let typeAliases: [String] = []

                    static let fieldAliases: [String: [String]] = [:]

                    static var declaredConformances: [Any.Type] {
                        []
                    }

                    static var storedFieldNames: [AnyKeyPath: String] {
                        [:]
                    }

                    func encodeFields(to fields: LogStoreObjects.FieldWriter) throws {
                    }

                    required init(fields: LogStoreObjects.FieldReader) throws {
                    }

                    func encode(to encoder: any Encoder) throws {
                    }

                    required init(from decoder: any Decoder) throws {
                    }
                }

                extension Cache: LogStoreObjects.PersistentModel {
                }
                """,
            diagnostics: [
                DiagnosticSpec(message: "@Transient property 'entries' needs an initial value", line: 2, column: 5)
            ])
    }

    @Test func letWithInitialValue() {
        assertExpansion(
            """
            @Persistent final class Circle {
                let kind: String = "circle"
            }
            """,
            expandedSource: """
                final class Circle {
                    let kind: String = "circle"

                    var persistenceSlot: LogStoreObjects.ObjectSlot? = nil

                    var hasReportedChange: Bool = false

                    static let typeName: String = "Circle"

                    static let typeAliases: [String] = []

                    static let fieldAliases: [String: [String]] = [:]

                    static var declaredConformances: [Any.Type] {
                        []
                    }

                    static var storedFieldNames: [AnyKeyPath: String] {
                        [:]
                    }

                    func encodeFields(to fields: LogStoreObjects.FieldWriter) throws {
                    }

                    required init(fields: LogStoreObjects.FieldReader) throws {
                    }

                    func encode(to encoder: any Encoder) throws {
                    }

                    required init(from decoder: any Decoder) throws {
                    }
                }

                extension Circle: LogStoreObjects.PersistentModel {
                }
                """,
            diagnostics: [
                DiagnosticSpec(
                    message: "a stored 'let' with an initial value cannot be read back; use 'var' or @Transient",
                    line: 2, column: 5, fixIts: [FixItSpec(message: "use 'var'")])
            ],
            applyFixIts: ["use 'var'"],
            fixedSource: """
                @Persistent final class Circle {
                    var kind: String = "circle"
                }
                """)
    }

    @Test func nonOptionalExistential() {
        assertExpansion(
            """
            @Persistent final class Frame {
                var content: any Shape
            }
            """,
            expandedSource: """
                final class Frame {
                    var content: any Shape

                    var persistenceSlot: LogStoreObjects.ObjectSlot? = nil

                    var hasReportedChange: Bool = false

                    static let typeName: String = "Frame"

                    static let typeAliases: [String] = []

                    static let fieldAliases: [String: [String]] = [:]

                    static var declaredConformances: [Any.Type] {
                        []
                    }

                    static var storedFieldNames: [AnyKeyPath: String] {
                        [:]
                    }

                    func encodeFields(to fields: LogStoreObjects.FieldWriter) throws {
                    }

                    required init(fields: LogStoreObjects.FieldReader) throws {
                    }

                    func encode(to encoder: any Encoder) throws {
                    }

                    required init(from decoder: any Decoder) throws {
                    }
                }

                extension Frame: LogStoreObjects.PersistentModel {
                }
                """,
            diagnostics: [
                DiagnosticSpec(
                    message: "a reference of protocol type must be optional or an array", line: 2, column: 18,
                    fixIts: [FixItSpec(message: "make it optional")])
            ],
            applyFixIts: ["make it optional"],
            fixedSource: """
                @Persistent final class Frame {
                    var content: (any Shape)?
                }
                """)
    }

    @Test func lazyProperty() {
        assertExpansion(
            """
            @Persistent final class Index {
                lazy var entries: [String: Int] = [:]
            }
            """,
            expandedSource: """
                final class Index {
                    lazy var entries: [String: Int] = [:]

                    var persistenceSlot: LogStoreObjects.ObjectSlot? = nil

                    var hasReportedChange: Bool = false

                    static let typeName: String = "Index"

                    static let typeAliases: [String] = []

                    static let fieldAliases: [String: [String]] = [:]

                    static var declaredConformances: [Any.Type] {
                        []
                    }

                    static var storedFieldNames: [AnyKeyPath: String] {
                        [:]
                    }

                    func encodeFields(to fields: LogStoreObjects.FieldWriter) throws {
                    }

                    required init(fields: LogStoreObjects.FieldReader) throws {
                    }

                    func encode(to encoder: any Encoder) throws {
                    }

                    required init(from decoder: any Decoder) throws {
                    }
                }

                extension Index: LogStoreObjects.PersistentModel {
                }
                """,
            diagnostics: [
                DiagnosticSpec(
                    message: "a lazy property cannot be persisted; mark 'entries' @Transient", line: 2, column: 5,
                    fixIts: [FixItSpec(message: "mark it @Transient")])
            ],
            applyFixIts: ["mark it @Transient"],
            fixedSource: """
                @Persistent final class Index {
                    @Transient lazy var entries: [String: Int] = [:]
                }
                """)
    }

    @Test func generatedMembersDeclared() {
        assertExpansion(
            """
            @Persistent final class Circle {
                static let typeName = "Circle"
                init(fields: FieldReader) throws {}
                func encodeFields(to fields: FieldWriter) throws {}
            }
            """,
            expandedSource: """
                final class Circle {
                    static let typeName = "Circle"
                    init(fields: FieldReader) throws {}
                    func encodeFields(to fields: FieldWriter) throws {}

                    var persistenceSlot: LogStoreObjects.ObjectSlot? = nil

                    var hasReportedChange: Bool = false

                    static let typeAliases: [String] = []

                    static let fieldAliases: [String: [String]] = [:]

                    static var declaredConformances: [Any.Type] {
                        []
                    }

                    static var storedFieldNames: [AnyKeyPath: String] {
                        [:]
                    }

                    func encode(to encoder: any Encoder) throws {
                    }

                    required init(from decoder: any Decoder) throws {
                    }
                }

                extension Circle: LogStoreObjects.PersistentModel {
                }
                """,
            diagnostics: [
                DiagnosticSpec(message: "remove it: @Persistent generates it", line: 2, column: 5),
                DiagnosticSpec(message: "remove it: @Persistent generates it", line: 3, column: 5),
                DiagnosticSpec(message: "remove it: @Persistent generates it", line: 4, column: 5),
            ])
    }

    @Test func propertyObservers() {
        assertExpansion(
            """
            @Persistent final class Label {
                var text: String = "" { didSet { print(text) } }
            }
            """,
            expandedSource: """
                final class Label {
                    var text: String = "" { didSet { print(text) } }

                    var persistenceSlot: LogStoreObjects.ObjectSlot? = nil

                    var hasReportedChange: Bool = false

                    static let typeName: String = "Label"

                    static let typeAliases: [String] = []

                    static let fieldAliases: [String: [String]] = [:]

                    static var declaredConformances: [Any.Type] {
                        []
                    }

                    static var storedFieldNames: [AnyKeyPath: String] {
                        [:]
                    }

                    func encodeFields(to fields: LogStoreObjects.FieldWriter) throws {
                    }

                    required init(fields: LogStoreObjects.FieldReader) throws {
                    }

                    func encode(to encoder: any Encoder) throws {
                    }

                    required init(from decoder: any Decoder) throws {
                    }
                }

                extension Label: LogStoreObjects.PersistentModel {
                }
                """,
            diagnostics: [
                DiagnosticSpec(
                    message: "property observers are not supported on persisted properties; mark 'text' @Transient",
                    line: 2, column: 5, fixIts: [FixItSpec(message: "mark it @Transient")])
            ])
    }

    @Test func severalPropertiesInOneDeclaration() {
        assertExpansion(
            """
            @Persistent final class Point {
                var x = 0.0, y = 0.0
            }
            """,
            expandedSource: """
                final class Point {
                    var x = 0.0, y = 0.0

                    var persistenceSlot: LogStoreObjects.ObjectSlot? = nil

                    var hasReportedChange: Bool = false

                    static let typeName: String = "Point"

                    static let typeAliases: [String] = []

                    static let fieldAliases: [String: [String]] = [:]

                    static var declaredConformances: [Any.Type] {
                        []
                    }

                    static var storedFieldNames: [AnyKeyPath: String] {
                        [:]
                    }

                    func encodeFields(to fields: LogStoreObjects.FieldWriter) throws {
                    }

                    required init(fields: LogStoreObjects.FieldReader) throws {
                    }

                    func encode(to encoder: any Encoder) throws {
                    }

                    required init(from decoder: any Decoder) throws {
                    }
                }

                extension Point: LogStoreObjects.PersistentModel {
                }
                """,
            diagnostics: [
                DiagnosticSpec(
                    message: "declare each persisted property in a declaration of its own", line: 2, column: 5)
            ])
    }

    @Test func referenceOnANonOptionalValue() {
        assertExpansion(
            """
            @Persistent final class Task {
                @Reference var owner: Person
            }
            """,
            expandedSource: """
                final class Task {
                    var owner: Person

                    var persistenceSlot: LogStoreObjects.ObjectSlot? = nil

                    var hasReportedChange: Bool = false

                    static let typeName: String = "Task"

                    static let typeAliases: [String] = []

                    static let fieldAliases: [String: [String]] = [:]

                    static var declaredConformances: [Any.Type] {
                        []
                    }

                    static var storedFieldNames: [AnyKeyPath: String] {
                        [:]
                    }

                    func encodeFields(to fields: LogStoreObjects.FieldWriter) throws {
                    }

                    required init(fields: LogStoreObjects.FieldReader) throws {
                    }

                    func encode(to encoder: any Encoder) throws {
                    }

                    required init(from decoder: any Decoder) throws {
                    }
                }

                extension Task: LogStoreObjects.PersistentModel {
                }
                """,
            diagnostics: [
                DiagnosticSpec(
                    message: "@Reference applies to an optional or an array of persistent objects", line: 2, column: 5)
            ])
    }

    @Test func boxedReferencesInALet() {
        assertExpansion(
            """
            @Persistent final class Group {
                let members: [any Member]
            }
            """,
            expandedSource: """
                final class Group {
                    let members: [any Member]

                    var persistenceSlot: LogStoreObjects.ObjectSlot? = nil

                    var hasReportedChange: Bool = false

                    static let typeName: String = "Group"

                    static let typeAliases: [String] = []

                    static let fieldAliases: [String: [String]] = [:]

                    static var declaredConformances: [Any.Type] {
                        []
                    }

                    static var storedFieldNames: [AnyKeyPath: String] {
                        [:]
                    }

                    func encodeFields(to fields: LogStoreObjects.FieldWriter) throws {
                    }

                    required init(fields: LogStoreObjects.FieldReader) throws {
                    }

                    func encode(to encoder: any Encoder) throws {
                    }

                    required init(from decoder: any Decoder) throws {
                    }
                }

                extension Group: LogStoreObjects.PersistentModel {
                }
                """,
            diagnostics: [
                DiagnosticSpec(
                    message: "a reference of protocol type or @Reference must be a 'var': write 'var members'", line: 2,
                    column: 5)
            ])
    }

    @Test func observableArgumentOtherThanTrue() {
        assertExpansion(
            """
            @Persistent(observable: false) final class Plain {
                var text: String = ""
            }
            """,
            expandedSource: """
                final class Plain {
                    var text: String {
                        @storageRestrictions(initializes: _text)
                        init(initialValue) {
                            _text = initialValue
                        }
                        get {
                            _text
                        }
                        set {
                            _text = newValue
                            if !hasReportedChange {
                                hasReportedChange = persistenceSlot?.noteChange(of: self) ?? false
                            }
                        }
                    }

                    private var _text: String = ""

                    var persistenceSlot: LogStoreObjects.ObjectSlot? = nil

                    var hasReportedChange: Bool = false

                    static let typeName: String = "Plain"

                    static let typeAliases: [String] = []

                    static let fieldAliases: [String: [String]] = [:]

                    static var declaredConformances: [Any.Type] {
                        []
                    }

                    static var storedFieldNames: [AnyKeyPath: String] {
                        [\\Plain.text: "text"]
                    }

                    func encodeFields(to fields: LogStoreObjects.FieldWriter) throws {
                        try fields.write(_text, for: "text")
                    }

                    required init(fields: LogStoreObjects.FieldReader) throws {
                        _text = try fields.read(String.self, for: "text", default: "")
                    }

                    func encode(to encoder: any Encoder) throws {
                        var container = encoder.container(keyedBy: LogStoreObjects.FieldKey.self)
                        try container.encode(_text, forKey: LogStoreObjects.FieldKey("text"))
                    }

                    required init(from decoder: any Decoder) throws {
                        let container = try decoder.container(keyedBy: LogStoreObjects.FieldKey.self)
                        _text = try container.decodeIfPresent(String.self, forKey: LogStoreObjects.FieldKey("text")) ?? ""
                    }

                    init() {
                    }
                }

                extension Plain: LogStoreObjects.PersistentModel {
                }

                extension Plain: Observation.Observable {
                }
                """,
            diagnostics: [
                DiagnosticSpec(
                    message: "'observable:' takes the literal 'true'; leave it out for a class that is not observable",
                    line: 1, column: 25)
            ],
            macros: macros(missing: ["PersistentModel", "Observable"]))
    }
}
