import LogStoreMacros
import Testing

/// What `@Persistent` generates for a subclass of a `@Persistent` class (`PersistentModel` is not missing).
@Suite struct SubclassExpansionTests {
    @Test func subclassOverridesAndCallsSuper() {
        assertExpansion(
            """
            @Persistent class RecurringTask: TaskItem, Schedulable {
                var every: Int = 7
                @Renamed(from: "period") var unit: String = "day"
                init(title: String, every: Int) {
                    self.every = every
                    super.init(title: title)
                }
            }
            """,
            expandedSource: """
                class RecurringTask: TaskItem, Schedulable {
                    var every: Int {
                        @storageRestrictions(initializes: _every)
                        init(initialValue) {
                            _every = initialValue
                        }
                        get {
                            _every
                        }
                        set {
                            _every = newValue
                            if !hasReportedChange {
                                hasReportedChange = persistenceSlot?.noteChange(of: self) ?? false
                            }
                        }
                    }

                    private var _every: Int = 7
                    var unit: String {
                        @storageRestrictions(initializes: _unit)
                        init(initialValue) {
                            _unit = initialValue
                        }
                        get {
                            _unit
                        }
                        set {
                            _unit = newValue
                            if !hasReportedChange {
                                hasReportedChange = persistenceSlot?.noteChange(of: self) ?? false
                            }
                        }
                    }

                    private var _unit: String = "day"
                    init(title: String, every: Int) {
                        self.every = every
                        super.init(title: title)
                    }

                    override class var typeName: String {
                        "RecurringTask"
                    }

                    override class var typeAliases: [String] {
                        []
                    }

                    override class var fieldAliases: [String: [String]] {
                        super.fieldAliases.merging(["unit": ["period"]]) { _, own in
                            own
                        }
                    }

                    override class var declaredConformances: [Any.Type] {
                        super.declaredConformances + [TaskItem.self, Schedulable.self]
                    }

                    override class var storedFieldNames: [AnyKeyPath: String] {
                        super.storedFieldNames.merging([\\RecurringTask.every: "every", \\RecurringTask.unit: "unit"]) { _, own in
                            own
                        }
                    }

                    override func encodeFields(to fields: LogStoreObjects.FieldWriter) throws {
                        try fields.write(_every, for: "every")
                        try fields.write(_unit, for: "unit")
                        try super.encodeFields(to: fields)
                    }

                    required init(fields: LogStoreObjects.FieldReader) throws {
                        _every = try fields.read(Int.self, for: "every", default: 7)
                        _unit = try fields.read(String.self, for: "unit", default: "day")
                        try super.init(fields: fields)
                    }

                    override func encode(to encoder: any Encoder) throws {
                        var container = encoder.container(keyedBy: LogStoreObjects.FieldKey.self)
                        try container.encode(_every, forKey: LogStoreObjects.FieldKey("every"))
                        try container.encode(_unit, forKey: LogStoreObjects.FieldKey("unit"))
                        try super.encode(to: encoder)
                    }

                    required init(from decoder: any Decoder) throws {
                        let container = try decoder.container(keyedBy: LogStoreObjects.FieldKey.self)
                        _every = try container.decodeIfPresent(Int.self, forKey: LogStoreObjects.FieldKey("every")) ?? 7
                        _unit = try container.decodeIfPresent(String.self, forKey: LogStoreObjects.FieldKey("unit")) ?? "day"
                        try super.init(from: decoder)
                    }
                }
                """,
            macros: subclassMacros)
    }

    @Test func subclassWithoutFieldsOrRenames() {
        assertExpansion(
            """
            @Persistent final class Milestone: TaskItem {
                var label: String { "milestone" }
            }
            """,
            expandedSource: """
                final class Milestone: TaskItem {
                    var label: String { "milestone" }

                    override class var typeName: String {
                        "Milestone"
                    }

                    override class var typeAliases: [String] {
                        []
                    }

                    override class var fieldAliases: [String: [String]] {
                        super.fieldAliases
                    }

                    override class var declaredConformances: [Any.Type] {
                        super.declaredConformances + [TaskItem.self]
                    }

                    override class var storedFieldNames: [AnyKeyPath: String] {
                        super.storedFieldNames.merging([:]) { _, own in
                            own
                        }
                    }

                    override func encodeFields(to fields: LogStoreObjects.FieldWriter) throws {
                        try super.encodeFields(to: fields)
                    }

                    required init(fields: LogStoreObjects.FieldReader) throws {
                        try super.init(fields: fields)
                    }

                    override func encode(to encoder: any Encoder) throws {
                        try super.encode(to: encoder)
                    }

                    required init(from decoder: any Decoder) throws {
                        try super.init(from: decoder)
                    }
                }
                """,
            macros: subclassMacros)
    }

    @Test func observableSubclassOfAnObservableClass() {
        assertExpansion(
            """
            @Persistent(observable: true) final class Checklist: Note {
                var items: [String] = []
            }
            """,
            expandedSource: #"""
                final class Checklist: Note {
                    var items: [String] {
                        @storageRestrictions(initializes: _items)
                        init(initialValue) {
                            _items = initialValue
                        }
                        get {
                            _$observationRegistrar_Checklist.access(self, keyPath: \.items)
                            return _items
                        }
                        set {
                            _$observationRegistrar_Checklist.withMutation(of: self, keyPath: \.items) {
                                _items = newValue
                            }
                            if !hasReportedChange {
                                hasReportedChange = persistenceSlot?.noteChange(of: self) ?? false
                            }
                        }
                    }

                    private var _items: [String] = []

                    private let _$observationRegistrar_Checklist = Observation.ObservationRegistrar()

                    override class var typeName: String {
                        "Checklist"
                    }

                    override class var typeAliases: [String] {
                        []
                    }

                    override class var fieldAliases: [String: [String]] {
                        super.fieldAliases
                    }

                    override class var declaredConformances: [Any.Type] {
                        super.declaredConformances + [Note.self]
                    }

                    override class var storedFieldNames: [AnyKeyPath: String] {
                        super.storedFieldNames.merging([\Checklist.items: "items"]) { _, own in
                            own
                        }
                    }

                    override func encodeFields(to fields: LogStoreObjects.FieldWriter) throws {
                        try fields.write(_items, for: "items")
                        try super.encodeFields(to: fields)
                    }

                    required init(fields: LogStoreObjects.FieldReader) throws {
                        _items = try fields.read([String].self, for: "items", default: [])
                        try super.init(fields: fields)
                    }

                    override func encode(to encoder: any Encoder) throws {
                        var container = encoder.container(keyedBy: LogStoreObjects.FieldKey.self)
                        try container.encode(_items, forKey: LogStoreObjects.FieldKey("items"))
                        try super.encode(to: encoder)
                    }

                    required init(from decoder: any Decoder) throws {
                        let container = try decoder.container(keyedBy: LogStoreObjects.FieldKey.self)
                        _items = try container.decodeIfPresent([String].self, forKey: LogStoreObjects.FieldKey("items")) ?? []
                        try super.init(from: decoder)
                    }
                }
                """#,
            macros: subclassMacros)
    }
}
