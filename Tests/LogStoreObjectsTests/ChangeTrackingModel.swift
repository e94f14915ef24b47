import LogStoreObjects
import LogStorePersistent

/// A `Codable` task (no change tracking): its context keeps every instance it hands out.
final class UntrackedTask: PersistentObject {
    static let typeName = "test.UntrackedTask"
    var title: String
    var done = false
    init(_ title: String) { self.title = title }
}

/// A model written by hand as `@Persistent` would generate it: every setter reports the change.
final class TrackedTask: PersistentModel {
    static let typeName = "test.TrackedTask"
    var persistenceSlot: ObjectSlot?
    var hasReportedChange = false
    private var storedTitle: String
    private var storedDone = false
    private var storedNext: TrackedTask?

    var title: String {
        get { storedTitle }
        set {
            storedTitle = newValue
            if !hasReportedChange { hasReportedChange = persistenceSlot?.noteChange(of: self) ?? false }
        }
    }
    var done: Bool {
        get { storedDone }
        set {
            storedDone = newValue
            if !hasReportedChange { hasReportedChange = persistenceSlot?.noteChange(of: self) ?? false }
        }
    }
    /// A plain reference field (may close a plain cycle, which a save refuses).
    var next: TrackedTask? {
        get { storedNext }
        set {
            storedNext = newValue
            if !hasReportedChange { hasReportedChange = persistenceSlot?.noteChange(of: self) ?? false }
        }
    }

    init(_ title: String) { storedTitle = title }

    func encodeFields(to fields: FieldWriter) throws {
        try fields.write(storedTitle, for: "title")
        try fields.write(storedDone, for: "done")
        try fields.write(storedNext, for: "next")
    }

    init(fields: FieldReader) throws {
        storedTitle = try fields.read(String.self, for: "title")
        storedDone = try fields.read(Bool.self, for: "done", default: false)
        storedNext = try fields.read(TrackedTask?.self, for: "next")
    }

    func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: FieldKey.self)
        try container.encode(storedTitle, forKey: FieldKey("title"))
        try container.encode(storedDone, forKey: FieldKey("done"))
        try container.encodeIfPresent(storedNext, forKey: FieldKey("next"))
    }

    init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: FieldKey.self)
        storedTitle = try container.decode(String.self, forKey: FieldKey("title"))
        storedDone = try container.decodeIfPresent(Bool.self, forKey: FieldKey("done")) ?? false
        storedNext = try container.decodeIfPresent(TrackedTask.self, forKey: FieldKey("next"))
    }
}

let changeTrackingTypes: [any PersistentObject.Type] = [UntrackedTask.self, TrackedTask.self, MacroTask.self]

/// The same task declared with `@Persistent`.
@Persistent("test.MacroTask") final class MacroTask {
    var title: String
    var done: Bool = false
    init(_ title: String) { self.title = title }
}

// In the file of the `@Persistent` declaration: a conformance that implies `PersistentObject`, declared in
// another file, makes Swift 6.3 emit the implied conformance twice (a link error).
extension MacroTask: EditableTask {}
