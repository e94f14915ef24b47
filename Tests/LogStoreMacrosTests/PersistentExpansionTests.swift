import LogStoreMacros
import Testing

/// What `@Persistent` generates for classes with no persistent superclass.
@Suite struct PersistentExpansionTests {
    @Test func finalRootWithDefaultsRequiredFieldsAndLet() {
        assertExpansion(
            """
            @Persistent final class Circle: Shape {
                var radius: Double = 1
                var center: Point
                let created: Date
                var area: Double { .pi * radius * radius }
                static var unit: Double = 1
                init(radius: Double, center: Point) {
                    self.radius = radius
                    self.center = center
                    created = .now
                }
            }
            """,
            expandedSource: """
                final class Circle: Shape {
                    var radius: Double {
                        @storageRestrictions(initializes: _radius)
                        init(initialValue) {
                            _radius = initialValue
                        }
                        get {
                            _radius
                        }
                        set {
                            _radius = newValue
                            if !hasReportedChange {
                                hasReportedChange = persistenceSlot?.noteChange(of: self) ?? false
                            }
                        }
                    }

                    private var _radius: Double = 1
                    var center: Point {
                        @storageRestrictions(initializes: _center)
                        init(initialValue) {
                            _center = initialValue
                        }
                        get {
                            _center
                        }
                        set {
                            _center = newValue
                            if !hasReportedChange {
                                hasReportedChange = persistenceSlot?.noteChange(of: self) ?? false
                            }
                        }
                    }

                    private var _center: Point
                    let created: Date
                    var area: Double { .pi * radius * radius }
                    static var unit: Double = 1
                    init(radius: Double, center: Point) {
                        self.radius = radius
                        self.center = center
                        created = .now
                    }

                    var persistenceSlot: LogStoreObjects.ObjectSlot? = nil

                    var hasReportedChange: Bool = false

                    static let typeName: String = "Circle"

                    static let typeAliases: [String] = []

                    static let fieldAliases: [String: [String]] = [:]

                    static var declaredConformances: [Any.Type] {
                        [Shape.self]
                    }

                    static var storedFieldNames: [AnyKeyPath: String] {
                        [\\Circle.radius: "radius", \\Circle.center: "center", \\Circle.created: "created"]
                    }

                    func encodeFields(to fields: LogStoreObjects.FieldWriter) throws {
                        try fields.write(_radius, for: "radius")
                        try fields.write(_center, for: "center")
                        try fields.write(created, for: "created")
                    }

                    required init(fields: LogStoreObjects.FieldReader) throws {
                        _radius = try fields.read(Double.self, for: "radius", default: 1)
                        _center = try fields.read(Point.self, for: "center")
                        created = try fields.read(Date.self, for: "created")
                    }

                    func encode(to encoder: any Encoder) throws {
                        var container = encoder.container(keyedBy: LogStoreObjects.FieldKey.self)
                        try container.encode(_radius, forKey: LogStoreObjects.FieldKey("radius"))
                        try container.encode(_center, forKey: LogStoreObjects.FieldKey("center"))
                        try container.encode(created, forKey: LogStoreObjects.FieldKey("created"))
                    }

                    required init(from decoder: any Decoder) throws {
                        let container = try decoder.container(keyedBy: LogStoreObjects.FieldKey.self)
                        _radius = try container.decodeIfPresent(Double.self, forKey: LogStoreObjects.FieldKey("radius")) ?? 1
                        _center = try container.decode(Point.self, forKey: LogStoreObjects.FieldKey("center"))
                        created = try container.decode(Date.self, forKey: LogStoreObjects.FieldKey("created"))
                    }
                }

                extension Circle: LogStoreObjects.PersistentModel {
                }
                """)
    }

    @Test func transientAndRenamedFields() {
        assertExpansion(
            """
            @Persistent final class Label {
                @Transient var cachedWidth: Double? = nil
                @Transient var layoutPasses = 0
                @Renamed(from: "label", "title") var name: String = ""
            }
            """,
            expandedSource: """
                final class Label {
                    var cachedWidth: Double? = nil
                    var layoutPasses = 0
                    var name: String {
                        @storageRestrictions(initializes: _name)
                        init(initialValue) {
                            _name = initialValue
                        }
                        get {
                            _name
                        }
                        set {
                            _name = newValue
                            if !hasReportedChange {
                                hasReportedChange = persistenceSlot?.noteChange(of: self) ?? false
                            }
                        }
                    }

                    private var _name: String = ""

                    var persistenceSlot: LogStoreObjects.ObjectSlot? = nil

                    var hasReportedChange: Bool = false

                    static let typeName: String = "Label"

                    static let typeAliases: [String] = []

                    static let fieldAliases: [String: [String]] = ["name": ["label", "title"]]

                    static var declaredConformances: [Any.Type] {
                        []
                    }

                    static var storedFieldNames: [AnyKeyPath: String] {
                        [\\Label.name: "name"]
                    }

                    func encodeFields(to fields: LogStoreObjects.FieldWriter) throws {
                        try fields.write(_name, for: "name")
                    }

                    required init(fields: LogStoreObjects.FieldReader) throws {
                        _name = try fields.read(String.self, for: "name", default: "")
                    }

                    func encode(to encoder: any Encoder) throws {
                        var container = encoder.container(keyedBy: LogStoreObjects.FieldKey.self)
                        try container.encode(_name, forKey: LogStoreObjects.FieldKey("name"))
                    }

                    required init(from decoder: any Decoder) throws {
                        let container = try decoder.container(keyedBy: LogStoreObjects.FieldKey.self)
                        _name = try container.decodeIfPresent(String.self, forKey: LogStoreObjects.FieldKey("name")) ?? ""
                    }

                    init() {
                    }
                }

                extension Label: LogStoreObjects.PersistentModel {
                }
                """)
    }

    @Test func existentialArrayAndOptionalAreBoxed() {
        assertExpansion(
            """
            @Persistent final class Layer {
                var shapes: [any Shape] = []
                var focus: (any Shape)?
                var tags: [Tag] = []
                init() {}
            }
            """,
            expandedSource: """
                final class Layer {
                    var shapes: [any Shape] {
                        @storageRestrictions(initializes: _shapes)
                        init(initialValue) {
                            _shapes = LogStoreObjects.ObjectList(wrappedValue: initialValue)
                        }
                        get {
                            _shapes.wrappedValue
                        }
                        set {
                            _shapes.wrappedValue = newValue
                            if !hasReportedChange {
                                hasReportedChange = persistenceSlot?.noteChange(of: self) ?? false
                            }
                        }
                    }

                    private var _shapes: LogStoreObjects.ObjectList<any Shape> = LogStoreObjects.ObjectList(wrappedValue: [])
                    var focus: (any Shape)? {
                        @storageRestrictions(initializes: _focus)
                        init(initialValue) {
                            _focus = LogStoreObjects.ObjectRef(wrappedValue: initialValue)
                        }
                        get {
                            _focus.wrappedValue
                        }
                        set {
                            _focus.wrappedValue = newValue
                            if !hasReportedChange {
                                hasReportedChange = persistenceSlot?.noteChange(of: self) ?? false
                            }
                        }
                    }

                    private var _focus: LogStoreObjects.ObjectRef<any Shape> = LogStoreObjects.ObjectRef(wrappedValue: nil)
                    var tags: [Tag] {
                        @storageRestrictions(initializes: _tags)
                        init(initialValue) {
                            _tags = initialValue
                        }
                        get {
                            _tags
                        }
                        set {
                            _tags = newValue
                            if !hasReportedChange {
                                hasReportedChange = persistenceSlot?.noteChange(of: self) ?? false
                            }
                        }
                    }

                    private var _tags: [Tag] = []
                    init() {}

                    var persistenceSlot: LogStoreObjects.ObjectSlot? = nil

                    var hasReportedChange: Bool = false

                    static let typeName: String = "Layer"

                    static let typeAliases: [String] = []

                    static let fieldAliases: [String: [String]] = [:]

                    static var declaredConformances: [Any.Type] {
                        []
                    }

                    static var storedFieldNames: [AnyKeyPath: String] {
                        [\\Layer.shapes: "shapes", \\Layer.focus: "focus", \\Layer.tags: "tags"]
                    }

                    func encodeFields(to fields: LogStoreObjects.FieldWriter) throws {
                        try fields.write(_shapes, for: "shapes")
                        try fields.write(_focus, for: "focus")
                        try fields.write(_tags, for: "tags")
                    }

                    required init(fields: LogStoreObjects.FieldReader) throws {
                        _shapes = try fields.read(LogStoreObjects.ObjectList<any Shape>.self, for: "shapes")
                        _focus = try fields.read(LogStoreObjects.ObjectRef<any Shape>.self, for: "focus")
                        _tags = try fields.read([Tag].self, for: "tags", default: [])
                    }

                    func encode(to encoder: any Encoder) throws {
                        var container = encoder.container(keyedBy: LogStoreObjects.FieldKey.self)
                        try container.encode(_shapes, forKey: LogStoreObjects.FieldKey("shapes"))
                        try container.encode(_focus, forKey: LogStoreObjects.FieldKey("focus"))
                        try container.encode(_tags, forKey: LogStoreObjects.FieldKey("tags"))
                    }

                    required init(from decoder: any Decoder) throws {
                        let container = try decoder.container(keyedBy: LogStoreObjects.FieldKey.self)
                        _shapes = try container.decode(LogStoreObjects.ObjectList<any Shape>.self, forKey: LogStoreObjects.FieldKey("shapes"))
                        _focus = try container.decode(LogStoreObjects.ObjectRef<any Shape>.self, forKey: LogStoreObjects.FieldKey("focus"))
                        _tags = try container.decodeIfPresent([Tag].self, forKey: LogStoreObjects.FieldKey("tags")) ?? []
                    }
                }

                extension Layer: LogStoreObjects.PersistentModel {
                }
                """)
    }

    @Test func referenceFieldsAreBoxed() {
        assertExpansion(
            """
            @Persistent final class Person {
                @Reference var partner: Person? = nil
                @Reference var friends: [Person]
                var manager: Person?
                init(friends: [Person]) { self.friends = friends }
            }
            """,
            expandedSource: """
                final class Person {
                    var partner: Person? {
                        @storageRestrictions(initializes: _partner)
                        init(initialValue) {
                            _partner = LogStoreObjects.ObjectRef(wrappedValue: initialValue)
                        }
                        get {
                            _partner.wrappedValue
                        }
                        set {
                            _partner.wrappedValue = newValue
                            if !hasReportedChange {
                                hasReportedChange = persistenceSlot?.noteChange(of: self) ?? false
                            }
                        }
                    }

                    private var _partner: LogStoreObjects.ObjectRef<Person> = LogStoreObjects.ObjectRef(wrappedValue: nil)
                    var friends: [Person] {
                        @storageRestrictions(initializes: _friends)
                        init(initialValue) {
                            _friends = LogStoreObjects.ObjectList(wrappedValue: initialValue)
                        }
                        get {
                            _friends.wrappedValue
                        }
                        set {
                            _friends.wrappedValue = newValue
                            if !hasReportedChange {
                                hasReportedChange = persistenceSlot?.noteChange(of: self) ?? false
                            }
                        }
                    }

                    private var _friends: LogStoreObjects.ObjectList<Person>
                    var manager: Person? {
                        @storageRestrictions(initializes: _manager)
                        init(initialValue) {
                            _manager = initialValue
                        }
                        get {
                            _manager
                        }
                        set {
                            _manager = newValue
                            if !hasReportedChange {
                                hasReportedChange = persistenceSlot?.noteChange(of: self) ?? false
                            }
                        }
                    }

                    private var _manager: Person?
                    init(friends: [Person]) { self.friends = friends }

                    var persistenceSlot: LogStoreObjects.ObjectSlot? = nil

                    var hasReportedChange: Bool = false

                    static let typeName: String = "Person"

                    static let typeAliases: [String] = []

                    static let fieldAliases: [String: [String]] = [:]

                    static var declaredConformances: [Any.Type] {
                        []
                    }

                    static var storedFieldNames: [AnyKeyPath: String] {
                        [\\Person.partner: "partner", \\Person.friends: "friends", \\Person.manager: "manager"]
                    }

                    func encodeFields(to fields: LogStoreObjects.FieldWriter) throws {
                        try fields.write(_partner, for: "partner")
                        try fields.write(_friends, for: "friends")
                        try fields.write(_manager, for: "manager")
                    }

                    required init(fields: LogStoreObjects.FieldReader) throws {
                        _partner = try fields.read(LogStoreObjects.ObjectRef<Person>.self, for: "partner")
                        _friends = try fields.read(LogStoreObjects.ObjectList<Person>.self, for: "friends")
                        _manager = try fields.read(Person?.self, for: "manager")
                    }

                    func encode(to encoder: any Encoder) throws {
                        var container = encoder.container(keyedBy: LogStoreObjects.FieldKey.self)
                        try container.encode(_partner, forKey: LogStoreObjects.FieldKey("partner"))
                        try container.encode(_friends, forKey: LogStoreObjects.FieldKey("friends"))
                        try container.encodeIfPresent(_manager, forKey: LogStoreObjects.FieldKey("manager"))
                    }

                    required init(from decoder: any Decoder) throws {
                        let container = try decoder.container(keyedBy: LogStoreObjects.FieldKey.self)
                        _partner = try container.decode(LogStoreObjects.ObjectRef<Person>.self, forKey: LogStoreObjects.FieldKey("partner"))
                        _friends = try container.decode(LogStoreObjects.ObjectList<Person>.self, forKey: LogStoreObjects.FieldKey("friends"))
                        _manager = try container.decodeIfPresent(Person.self, forKey: LogStoreObjects.FieldKey("manager"))
                    }
                }

                extension Person: LogStoreObjects.PersistentModel {
                }
                """)
    }

    @Test func typesInferredFromLiterals() {
        assertExpansion(
            """
            @Persistent final class Settings {
                var enabled = true
                var retries = 3
                var offset = -2
                var ratio = 0.5
                var title = "Untitled"
            }
            """,
            expandedSource: """
                final class Settings {
                    var enabled {
                        @storageRestrictions(initializes: _enabled)
                        init(initialValue) {
                            _enabled = initialValue
                        }
                        get {
                            _enabled
                        }
                        set {
                            _enabled = newValue
                            if !hasReportedChange {
                                hasReportedChange = persistenceSlot?.noteChange(of: self) ?? false
                            }
                        }
                    }

                    private var _enabled: Bool = true
                    var retries {
                        @storageRestrictions(initializes: _retries)
                        init(initialValue) {
                            _retries = initialValue
                        }
                        get {
                            _retries
                        }
                        set {
                            _retries = newValue
                            if !hasReportedChange {
                                hasReportedChange = persistenceSlot?.noteChange(of: self) ?? false
                            }
                        }
                    }

                    private var _retries: Int = 3
                    var offset {
                        @storageRestrictions(initializes: _offset)
                        init(initialValue) {
                            _offset = initialValue
                        }
                        get {
                            _offset
                        }
                        set {
                            _offset = newValue
                            if !hasReportedChange {
                                hasReportedChange = persistenceSlot?.noteChange(of: self) ?? false
                            }
                        }
                    }

                    private var _offset: Int = -2
                    var ratio {
                        @storageRestrictions(initializes: _ratio)
                        init(initialValue) {
                            _ratio = initialValue
                        }
                        get {
                            _ratio
                        }
                        set {
                            _ratio = newValue
                            if !hasReportedChange {
                                hasReportedChange = persistenceSlot?.noteChange(of: self) ?? false
                            }
                        }
                    }

                    private var _ratio: Double = 0.5
                    var title {
                        @storageRestrictions(initializes: _title)
                        init(initialValue) {
                            _title = initialValue
                        }
                        get {
                            _title
                        }
                        set {
                            _title = newValue
                            if !hasReportedChange {
                                hasReportedChange = persistenceSlot?.noteChange(of: self) ?? false
                            }
                        }
                    }

                    private var _title: String = "Untitled"

                    var persistenceSlot: LogStoreObjects.ObjectSlot? = nil

                    var hasReportedChange: Bool = false

                    static let typeName: String = "Settings"

                    static let typeAliases: [String] = []

                    static let fieldAliases: [String: [String]] = [:]

                    static var declaredConformances: [Any.Type] {
                        []
                    }

                    static var storedFieldNames: [AnyKeyPath: String] {
                        [\\Settings.enabled: "enabled", \\Settings.retries: "retries", \\Settings.offset: "offset", \\Settings.ratio: "ratio", \\Settings.title: "title"]
                    }

                    func encodeFields(to fields: LogStoreObjects.FieldWriter) throws {
                        try fields.write(_enabled, for: "enabled")
                        try fields.write(_retries, for: "retries")
                        try fields.write(_offset, for: "offset")
                        try fields.write(_ratio, for: "ratio")
                        try fields.write(_title, for: "title")
                    }

                    required init(fields: LogStoreObjects.FieldReader) throws {
                        _enabled = try fields.read(Bool.self, for: "enabled", default: true)
                        _retries = try fields.read(Int.self, for: "retries", default: 3)
                        _offset = try fields.read(Int.self, for: "offset", default: -2)
                        _ratio = try fields.read(Double.self, for: "ratio", default: 0.5)
                        _title = try fields.read(String.self, for: "title", default: "Untitled")
                    }

                    func encode(to encoder: any Encoder) throws {
                        var container = encoder.container(keyedBy: LogStoreObjects.FieldKey.self)
                        try container.encode(_enabled, forKey: LogStoreObjects.FieldKey("enabled"))
                        try container.encode(_retries, forKey: LogStoreObjects.FieldKey("retries"))
                        try container.encode(_offset, forKey: LogStoreObjects.FieldKey("offset"))
                        try container.encode(_ratio, forKey: LogStoreObjects.FieldKey("ratio"))
                        try container.encode(_title, forKey: LogStoreObjects.FieldKey("title"))
                    }

                    required init(from decoder: any Decoder) throws {
                        let container = try decoder.container(keyedBy: LogStoreObjects.FieldKey.self)
                        _enabled = try container.decodeIfPresent(Bool.self, forKey: LogStoreObjects.FieldKey("enabled")) ?? true
                        _retries = try container.decodeIfPresent(Int.self, forKey: LogStoreObjects.FieldKey("retries")) ?? 3
                        _offset = try container.decodeIfPresent(Int.self, forKey: LogStoreObjects.FieldKey("offset")) ?? -2
                        _ratio = try container.decodeIfPresent(Double.self, forKey: LogStoreObjects.FieldKey("ratio")) ?? 0.5
                        _title = try container.decodeIfPresent(String.self, forKey: LogStoreObjects.FieldKey("title")) ?? "Untitled"
                    }

                    init() {
                    }
                }

                extension Settings: LogStoreObjects.PersistentModel {
                }
                """)
    }

    @Test func nonFinalRoot() {
        assertExpansion(
            """
            @Persistent class TaskItem: Identifiable, Codable, Sendable {
                var title: String
                var done: Bool = false
                init(title: String) { self.title = title }
            }
            """,
            expandedSource: """
                class TaskItem: Identifiable, Codable, Sendable {
                    var title: String {
                        @storageRestrictions(initializes: _title)
                        init(initialValue) {
                            _title = initialValue
                        }
                        get {
                            _title
                        }
                        set {
                            _title = newValue
                            if !hasReportedChange {
                                hasReportedChange = persistenceSlot?.noteChange(of: self) ?? false
                            }
                        }
                    }

                    private var _title: String
                    var done: Bool {
                        @storageRestrictions(initializes: _done)
                        init(initialValue) {
                            _done = initialValue
                        }
                        get {
                            _done
                        }
                        set {
                            _done = newValue
                            if !hasReportedChange {
                                hasReportedChange = persistenceSlot?.noteChange(of: self) ?? false
                            }
                        }
                    }

                    private var _done: Bool = false
                    init(title: String) { self.title = title }

                    final var persistenceSlot: LogStoreObjects.ObjectSlot? = nil

                    final var hasReportedChange: Bool = false

                    class var typeName: String {
                        "TaskItem"
                    }

                    class var typeAliases: [String] {
                        []
                    }

                    class var fieldAliases: [String: [String]] {
                        [:]
                    }

                    class var declaredConformances: [Any.Type] {
                        []
                    }

                    class var storedFieldNames: [AnyKeyPath: String] {
                        [\\TaskItem.title: "title", \\TaskItem.done: "done"]
                    }

                    func encodeFields(to fields: LogStoreObjects.FieldWriter) throws {
                        try fields.write(_title, for: "title")
                        try fields.write(_done, for: "done")
                    }

                    required init(fields: LogStoreObjects.FieldReader) throws {
                        _title = try fields.read(String.self, for: "title")
                        _done = try fields.read(Bool.self, for: "done", default: false)
                    }

                    func encode(to encoder: any Encoder) throws {
                        var container = encoder.container(keyedBy: LogStoreObjects.FieldKey.self)
                        try container.encode(_title, forKey: LogStoreObjects.FieldKey("title"))
                        try container.encode(_done, forKey: LogStoreObjects.FieldKey("done"))
                    }

                    required init(from decoder: any Decoder) throws {
                        let container = try decoder.container(keyedBy: LogStoreObjects.FieldKey.self)
                        _title = try container.decode(String.self, forKey: LogStoreObjects.FieldKey("title"))
                        _done = try container.decodeIfPresent(Bool.self, forKey: LogStoreObjects.FieldKey("done")) ?? false
                    }
                }

                extension TaskItem: LogStoreObjects.PersistentModel {
                }
                """)
    }

    @Test func customTypeNameAndAliases() {
        assertExpansion(
            """
            @Persistent("Task", aliases: ["TaskItem", "Todo"]) final class TaskItem {
                var title: String = ""
            }
            """,
            expandedSource: """
                final class TaskItem {
                    var title: String {
                        @storageRestrictions(initializes: _title)
                        init(initialValue) {
                            _title = initialValue
                        }
                        get {
                            _title
                        }
                        set {
                            _title = newValue
                            if !hasReportedChange {
                                hasReportedChange = persistenceSlot?.noteChange(of: self) ?? false
                            }
                        }
                    }

                    private var _title: String = ""

                    var persistenceSlot: LogStoreObjects.ObjectSlot? = nil

                    var hasReportedChange: Bool = false

                    static let typeName: String = "Task"

                    static let typeAliases: [String] = ["TaskItem", "Todo"]

                    static let fieldAliases: [String: [String]] = [:]

                    static var declaredConformances: [Any.Type] {
                        []
                    }

                    static var storedFieldNames: [AnyKeyPath: String] {
                        [\\TaskItem.title: "title"]
                    }

                    func encodeFields(to fields: LogStoreObjects.FieldWriter) throws {
                        try fields.write(_title, for: "title")
                    }

                    required init(fields: LogStoreObjects.FieldReader) throws {
                        _title = try fields.read(String.self, for: "title", default: "")
                    }

                    func encode(to encoder: any Encoder) throws {
                        var container = encoder.container(keyedBy: LogStoreObjects.FieldKey.self)
                        try container.encode(_title, forKey: LogStoreObjects.FieldKey("title"))
                    }

                    required init(from decoder: any Decoder) throws {
                        let container = try decoder.container(keyedBy: LogStoreObjects.FieldKey.self)
                        _title = try container.decodeIfPresent(String.self, forKey: LogStoreObjects.FieldKey("title")) ?? ""
                    }

                    init() {
                    }
                }

                extension TaskItem: LogStoreObjects.PersistentModel {
                }
                """)
    }

    @Test func publicClassHasPublicMembers() {
        assertExpansion(
            """
            @Persistent public final class Tag {
                public var name: String = ""
            }
            """,
            expandedSource: """
                public final class Tag {
                    public var name: String {
                        @storageRestrictions(initializes: _name)
                        init(initialValue) {
                            _name = initialValue
                        }
                        get {
                            _name
                        }
                        set {
                            _name = newValue
                            if !hasReportedChange {
                                hasReportedChange = persistenceSlot?.noteChange(of: self) ?? false
                            }
                        }
                    }

                    private var _name: String = ""

                    public var persistenceSlot: LogStoreObjects.ObjectSlot? = nil

                    public var hasReportedChange: Bool = false

                    public static let typeName: String = "Tag"

                    public static let typeAliases: [String] = []

                    public static let fieldAliases: [String: [String]] = [:]

                    public static var declaredConformances: [Any.Type] {
                        []
                    }

                    public static var storedFieldNames: [AnyKeyPath: String] {
                        [\\Tag.name: "name"]
                    }

                    public func encodeFields(to fields: LogStoreObjects.FieldWriter) throws {
                        try fields.write(_name, for: "name")
                    }

                    public required init(fields: LogStoreObjects.FieldReader) throws {
                        _name = try fields.read(String.self, for: "name", default: "")
                    }

                    public func encode(to encoder: any Encoder) throws {
                        var container = encoder.container(keyedBy: LogStoreObjects.FieldKey.self)
                        try container.encode(_name, forKey: LogStoreObjects.FieldKey("name"))
                    }

                    public required init(from decoder: any Decoder) throws {
                        let container = try decoder.container(keyedBy: LogStoreObjects.FieldKey.self)
                        _name = try container.decodeIfPresent(String.self, forKey: LogStoreObjects.FieldKey("name")) ?? ""
                    }

                    init() {
                    }
                }

                extension Tag: LogStoreObjects.PersistentModel {
                }
                """)
    }

    @Test func openClassHasOpenOverridableMembers() {
        assertExpansion(
            """
            @Persistent open class Document {
                public var title: String = ""
                public init() {}
            }
            """,
            expandedSource: """
                open class Document {
                    public var title: String {
                        @storageRestrictions(initializes: _title)
                        init(initialValue) {
                            _title = initialValue
                        }
                        get {
                            _title
                        }
                        set {
                            _title = newValue
                            if !hasReportedChange {
                                hasReportedChange = persistenceSlot?.noteChange(of: self) ?? false
                            }
                        }
                    }

                    private var _title: String = ""
                    public init() {}

                    public final var persistenceSlot: LogStoreObjects.ObjectSlot? = nil

                    public final var hasReportedChange: Bool = false

                    open class var typeName: String {
                        "Document"
                    }

                    open class var typeAliases: [String] {
                        []
                    }

                    open class var fieldAliases: [String: [String]] {
                        [:]
                    }

                    open class var declaredConformances: [Any.Type] {
                        []
                    }

                    open class var storedFieldNames: [AnyKeyPath: String] {
                        [\\Document.title: "title"]
                    }

                    open func encodeFields(to fields: LogStoreObjects.FieldWriter) throws {
                        try fields.write(_title, for: "title")
                    }

                    public required init(fields: LogStoreObjects.FieldReader) throws {
                        _title = try fields.read(String.self, for: "title", default: "")
                    }

                    open func encode(to encoder: any Encoder) throws {
                        var container = encoder.container(keyedBy: LogStoreObjects.FieldKey.self)
                        try container.encode(_title, forKey: LogStoreObjects.FieldKey("title"))
                    }

                    public required init(from decoder: any Decoder) throws {
                        let container = try decoder.container(keyedBy: LogStoreObjects.FieldKey.self)
                        _title = try container.decodeIfPresent(String.self, forKey: LogStoreObjects.FieldKey("title")) ?? ""
                    }
                }

                extension Document: LogStoreObjects.PersistentModel {
                }
                """)
    }

    @Test func observableClass() {
        assertExpansion(
            """
            @Persistent(observable: true) final class Note {
                var text: String = ""
                @Reference var author: Person? = nil
            }
            """,
            expandedSource: #"""
                final class Note {
                    var text: String {
                        @storageRestrictions(initializes: _text)
                        init(initialValue) {
                            _text = initialValue
                        }
                        get {
                            _$observationRegistrar_Note.access(self, keyPath: \.text)
                            return _text
                        }
                        set {
                            _$observationRegistrar_Note.withMutation(of: self, keyPath: \.text) {
                                _text = newValue
                            }
                            if !hasReportedChange {
                                hasReportedChange = persistenceSlot?.noteChange(of: self) ?? false
                            }
                        }
                    }

                    private var _text: String = ""
                    var author: Person? {
                        @storageRestrictions(initializes: _author)
                        init(initialValue) {
                            _author = LogStoreObjects.ObjectRef(wrappedValue: initialValue)
                        }
                        get {
                            _$observationRegistrar_Note.access(self, keyPath: \.author)
                            return _author.wrappedValue
                        }
                        set {
                            _$observationRegistrar_Note.withMutation(of: self, keyPath: \.author) {
                                _author.wrappedValue = newValue
                            }
                            if !hasReportedChange {
                                hasReportedChange = persistenceSlot?.noteChange(of: self) ?? false
                            }
                        }
                    }

                    private var _author: LogStoreObjects.ObjectRef<Person> = LogStoreObjects.ObjectRef(wrappedValue: nil)

                    var persistenceSlot: LogStoreObjects.ObjectSlot? = nil

                    var hasReportedChange: Bool = false

                    private let _$observationRegistrar_Note = Observation.ObservationRegistrar()

                    static let typeName: String = "Note"

                    static let typeAliases: [String] = []

                    static let fieldAliases: [String: [String]] = [:]

                    static var declaredConformances: [Any.Type] {
                        []
                    }

                    static var storedFieldNames: [AnyKeyPath: String] {
                        [\Note.text: "text", \Note.author: "author"]
                    }

                    func encodeFields(to fields: LogStoreObjects.FieldWriter) throws {
                        try fields.write(_text, for: "text")
                        try fields.write(_author, for: "author")
                    }

                    required init(fields: LogStoreObjects.FieldReader) throws {
                        _text = try fields.read(String.self, for: "text", default: "")
                        _author = try fields.read(LogStoreObjects.ObjectRef<Person>.self, for: "author")
                    }

                    func encode(to encoder: any Encoder) throws {
                        var container = encoder.container(keyedBy: LogStoreObjects.FieldKey.self)
                        try container.encode(_text, forKey: LogStoreObjects.FieldKey("text"))
                        try container.encode(_author, forKey: LogStoreObjects.FieldKey("author"))
                    }

                    required init(from decoder: any Decoder) throws {
                        let container = try decoder.container(keyedBy: LogStoreObjects.FieldKey.self)
                        _text = try container.decodeIfPresent(String.self, forKey: LogStoreObjects.FieldKey("text")) ?? ""
                        _author = try container.decode(LogStoreObjects.ObjectRef<Person>.self, forKey: LogStoreObjects.FieldKey("author"))
                    }

                    init() {
                    }
                }

                extension Note: LogStoreObjects.PersistentModel {
                }

                extension Note: Observation.Observable {
                }
                """#,
            macros: macros(missing: ["PersistentModel", "Observable"]))
    }
}
