import Foundation
import LogStoreObjects

/// A task with an ordered index on `due` and a unique index on `code`: what the query figures store.
///
/// A model written by hand as `@Persistent` writes it (this program uses only the LogStore and
/// LogStoreObjects products, not the macro): its setters report changes, so a context holds loaded tasks
/// weakly and a save encodes only what changed. ``UnmodeledTask`` is the same stored type as a plain
/// `PersistentObject`.
final class QTask: PersistentModel {
    static let typeName = "QTask"
    static let indexes: [IndexDefinition] = [.ordered(\QTask.due), .unique(\QTask.code)]
    static var storedFieldNames: [AnyKeyPath: String] {
        [
            \QTask.title: "title", \QTask.code: "code", \QTask.due: "due", \QTask.priority: "priority",
            \QTask.done: "done",
        ]
    }

    var persistenceSlot: ObjectSlot? = nil
    var hasReportedChange = false
    private var stored: TaskFields

    var title: String {
        get { stored.title }
        set {
            stored.title = newValue
            changed()
        }
    }
    var code: String {
        get { stored.code }
        set {
            stored.code = newValue
            changed()
        }
    }
    var due: Date {
        get { stored.due }
        set {
            stored.due = newValue
            changed()
        }
    }
    var priority: Int {
        get { stored.priority }
        set {
            stored.priority = newValue
            changed()
        }
    }
    var done: Bool {
        get { stored.done }
        set {
            stored.done = newValue
            changed()
        }
    }

    private func changed() {
        if !hasReportedChange { hasReportedChange = persistenceSlot?.noteChange(of: self) ?? false }
    }

    init(_ spec: TaskSpec) { stored = TaskFields(spec) }
    func encodeFields(to fields: FieldWriter) throws { try stored.write(to: fields) }
    init(fields: FieldReader) throws { stored = try TaskFields(fields) }
    func encode(to encoder: any Encoder) throws { try stored.encode(to: encoder) }
    init(from decoder: any Decoder) throws { stored = try TaskFields(from: decoder) }
}

/// The same stored type ("QTask": the same fields and bytes) and model, with no index: opening a store with
/// it instead of ``QTask`` gives the same data without indexes.
final class PlainTask: PersistentModel {
    static let typeName = "QTask"
    static var storedFieldNames: [AnyKeyPath: String] {
        [
            \PlainTask.title: "title", \PlainTask.code: "code", \PlainTask.due: "due", \PlainTask.priority: "priority",
            \PlainTask.done: "done",
        ]
    }

    var persistenceSlot: ObjectSlot? = nil
    var hasReportedChange = false
    private var stored: TaskFields

    var title: String {
        get { stored.title }
        set {
            stored.title = newValue
            changed()
        }
    }
    var code: String {
        get { stored.code }
        set {
            stored.code = newValue
            changed()
        }
    }
    var due: Date {
        get { stored.due }
        set {
            stored.due = newValue
            changed()
        }
    }
    var priority: Int {
        get { stored.priority }
        set {
            stored.priority = newValue
            changed()
        }
    }
    var done: Bool {
        get { stored.done }
        set {
            stored.done = newValue
            changed()
        }
    }

    private func changed() {
        if !hasReportedChange { hasReportedChange = persistenceSlot?.noteChange(of: self) ?? false }
    }

    init(_ spec: TaskSpec) { stored = TaskFields(spec) }
    func encodeFields(to fields: FieldWriter) throws { try stored.write(to: fields) }
    init(fields: FieldReader) throws { stored = try TaskFields(fields) }
    func encode(to encoder: any Encoder) throws { try stored.encode(to: encoder) }
    init(from decoder: any Decoder) throws { stored = try TaskFields(from: decoder) }
}

/// The indexed task as a plain `PersistentObject` (not a model): a context keeps every such object it
/// loads or saves for as long as it lives, and each save encodes them all.
final class UnmodeledTask: PersistentObject, FieldCodable {
    static let typeName = "QTask"
    static let indexes: [IndexDefinition] = [.ordered(\UnmodeledTask.due), .unique(\UnmodeledTask.code)]

    var title: String
    var code: String
    var due: Date
    var priority: Int
    var done: Bool

    init(_ spec: TaskSpec) {
        title = spec.title
        code = spec.code
        due = Date(timeIntervalSinceReferenceDate: spec.due)
        priority = spec.priority
        done = spec.done
    }

    func encodeFields(to fields: FieldWriter) throws {
        try TaskFields(title: title, code: code, due: due, priority: priority, done: done).write(to: fields)
    }

    init(fields: FieldReader) throws {
        let stored = try TaskFields(fields)
        title = stored.title
        code = stored.code
        due = stored.due
        priority = stored.priority
        done = stored.done
    }
}

/// The stored fields of a task, and their coding (the same bytes through `FieldCodable` and `Codable`).
struct TaskFields {
    var title: String
    var code: String
    var due: Date
    var priority: Int
    var done: Bool

    init(title: String, code: String, due: Date, priority: Int, done: Bool) {
        self.title = title
        self.code = code
        self.due = due
        self.priority = priority
        self.done = done
    }

    init(_ spec: TaskSpec) {
        self.init(
            title: spec.title, code: spec.code, due: Date(timeIntervalSinceReferenceDate: spec.due),
            priority: spec.priority, done: spec.done)
    }

    func write(to fields: FieldWriter) throws {
        try fields.write(title, for: "title")
        try fields.write(code, for: "code")
        try fields.write(due, for: "due")
        try fields.write(priority, for: "priority")
        try fields.write(done, for: "done")
    }

    init(_ fields: FieldReader) throws {
        title = try fields.read(String.self, for: "title")
        code = try fields.read(String.self, for: "code")
        due = try fields.read(Date.self, for: "due")
        priority = try fields.read(Int.self, for: "priority")
        done = try fields.read(Bool.self, for: "done")
    }

    func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: FieldKey.self)
        try container.encode(title, forKey: FieldKey("title"))
        try container.encode(code, forKey: FieldKey("code"))
        try container.encode(due, forKey: FieldKey("due"))
        try container.encode(priority, forKey: FieldKey("priority"))
        try container.encode(done, forKey: FieldKey("done"))
    }

    init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: FieldKey.self)
        title = try container.decode(String.self, forKey: FieldKey("title"))
        code = try container.decode(String.self, forKey: FieldKey("code"))
        due = try container.decode(Date.self, forKey: FieldKey("due"))
        priority = try container.decode(Int.self, forKey: FieldKey("priority"))
        done = try container.decode(Bool.self, forKey: FieldKey("done"))
    }
}

/// The values of one task.
struct TaskSpec: Sendable {
    var title: String
    var code: String
    /// Seconds since 2001-01-01 (`Date.timeIntervalSinceReferenceDate`).
    var due: Double
    var priority: Int
    var done: Bool
}

/// SplitMix64: a small seeded generator, so that every run writes the same tasks.
struct TaskRandom {
    var state: UInt64
    init(seed: UInt64) { state = seed }
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
    mutating func below(_ bound: Int) -> Int { Int(next() % UInt64(bound)) }
    /// Uniform in [0, 1).
    mutating func unit() -> Double { Double(next() >> 11) / Double(1 << 53) }
}

/// The deterministic tasks: `title` "Task 123: review the draft report", a unique 15-character `code`
/// ("QT-" and 12 hex digits, in no order related to the number), `due` uniform over one year from
/// 2027-01-01, `priority` 0..<5, `done` one time in five.
enum TaskData {
    /// 2027-01-01T00:00:00Z as seconds since 2001-01-01.
    static let yearStart = 820_454_400.0
    static let yearLength = 365.0 * 86_400

    private static let verbs = ["review", "write", "send", "fix", "plan", "call", "check", "update", "file", "close"]
    private static let adjectives = ["draft", "final", "weekly", "urgent", "shared", "old", "new", "quarterly"]
    private static let nouns = ["report", "invoice", "budget", "design", "release", "contract", "roadmap", "ticket"]

    /// The code of task `number`: a bijection of the number's low 48 bits, so codes are unique and their
    /// order is not the tasks'.
    static func code(_ number: Int) -> String {
        let mixed = (UInt64(number) &* 0x9E37_79B9_7F4B) & 0xFFFF_FFFF_FFFF
        let hex = String(mixed, radix: 16, uppercase: true)
        return "QT-" + String(repeating: "0", count: 12 - hex.count) + hex
    }

    /// Tasks `range` (numbers), each drawn from a generator seeded by its number.
    static func specs(_ range: Range<Int>) -> [TaskSpec] {
        range.map { number in
            var random = TaskRandom(seed: 0x7A5C_0000_0000 &+ UInt64(number))
            let title =
                "Task \(number): \(verbs[random.below(verbs.count)]) the \(adjectives[random.below(adjectives.count)]) "
                + nouns[random.below(nouns.count)]
            return TaskSpec(
                title: title, code: code(number), due: yearStart + random.unit() * yearLength,
                priority: random.below(5), done: random.below(5) == 0)
        }
    }
}
