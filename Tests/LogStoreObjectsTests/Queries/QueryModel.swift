import Foundation
import LogStore
import LogStoreObjects

/// A label tickets carry (a shared object: the tickets with a label are found through an index of
/// references).
final class Label: PersistentObject {
    static let typeName = "test.Label"
    var name: String
    init(_ name: String) { self.name = name }
}

/// A ticket with fields of every kind an index orders, and the indexes of each kind.
class Ticket: PersistentObject {
    class var typeName: String { "test.Ticket" }
    static let indexes: [IndexDefinition] = [
        .ordered(\Ticket.due, field: "due"),
        .ordered(\Ticket.priority, field: "priority"),
        .unique(\Ticket.code, field: "code"),
        .ordered(\Ticket.status, \Ticket.priority, fields: ["status", "priority"]),
        .ordered(\Ticket.title, field: "title"),
        .references(\Ticket.labels, field: "labels"),
    ]
    var title: String
    var code: String?
    var due: Date
    var priority: Int
    var status: String
    var labels: [Label]

    init(title: String, code: String?, due: Date, priority: Int, status: String, labels: [Label] = []) {
        self.title = title
        self.code = code
        self.due = due
        self.priority = priority
        self.status = status
        self.labels = labels
    }
}

/// A ticket that escalates: a subclass, found by queries of `Ticket` through the same indexes.
final class Escalation: Ticket {
    override class var typeName: String { "test.Escalation" }
    var level: Int = 1

    init(title: String, code: String?, due: Date, priority: Int, level: Int) {
        self.level = level
        super.init(title: title, code: code, due: due, priority: priority, status: "open")
    }

    private enum CodingKeys: String, CodingKey { case level }

    required init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        level = try container.decode(Int.self, forKey: .level)
        try super.init(from: decoder)
    }

    override func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(level, forKey: .level)
        try super.encode(to: encoder)
    }
}

let queryTypes: [any PersistentObject.Type] = [Ticket.self, Escalation.self, Label.self]
