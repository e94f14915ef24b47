import Foundation
import LogStorePersistent

/// A protocol of persistent classes, for existential fields.
protocol Shape: PersistentObject {
    var area: Double { get }
}

/// A nested value (plain `Codable`).
struct Point: Codable, Equatable {
    var x: Double
    var y: Double
}

/// A final root: defaults, a required field, a transient, a renamed field, a let, references.
@Persistent final class Circle: Shape {
    var radius: Double = 1
    var center: Point
    @Transient var cachedArea: Double? = nil
    @Renamed(from: "label", "title") var name: String = ""
    var tags: [Tag] = []
    @Reference var owner: Person? = nil
    let created: Date
    var area: Double { .pi * radius * radius }

    init(radius: Double, center: Point, created: Date) {
        self.radius = radius
        self.center = center
        self.created = created
    }
}

@Persistent final class Square: Shape {
    var side: Double = 1
    var area: Double { side * side }
}

/// Types inferred from literals; `init()` generated.
@Persistent final class Tag {
    var name = ""
    var weight = 1
}

/// References that close a cycle.
@Persistent final class Person {
    var name: String
    @Reference var partner: Person? = nil
    @Reference var friends: [Person] = []

    init(name: String) { self.name = name }
}

/// Existential fields: an array and an optional.
@Persistent final class Drawing {
    var shapes: [any Shape] = []
    var focus: (any Shape)? = nil
    var title = "Untitled"
}

/// A three-level hierarchy with a custom type name and an alias.
@Persistent("Task", aliases: ["TaskItem"]) class TaskItem {
    var title: String
    var done: Bool = false

    init(title: String) { self.title = title }
}

@Persistent class RecurringTask: TaskItem {
    @Renamed(from: "period") var every: Int = 7

    init(title: String, every: Int) {
        self.every = every
        super.init(title: title)
    }
}

@Persistent final class HabitTask: RecurringTask {
    var streak: Int = 0

    init(title: String, every: Int, streak: Int) {
        self.streak = streak
        super.init(title: title, every: every)
    }
}

/// Holds tasks of every level of the hierarchy through fields typed with the root class.
@Persistent final class TaskList {
    var items: [TaskItem] = []
    var current: TaskItem? = nil
}

/// Observation-tracked.
@Persistent(observable: true) final class Note {
    var text: String = ""
    var pinned = false
}

/// Two versions of one stored type: the second added a field and renamed one.
@Persistent("Gadget") final class GadgetV1 {
    var name: String = ""
}

@Persistent("Gadget") final class GadgetV2 {
    @Renamed(from: "name") var title: String = ""
    var weight: Double = 2.5
}

/// A public class: the generated members are public.
@Persistent public final class PublicLabel {
    /// The label.
    public var text: String = ""
}

let modelTypes: [any PersistentObject.Type] = [
    Circle.self, Square.self, Tag.self, Person.self, Drawing.self, TaskItem.self, RecurringTask.self,
    HabitTask.self, Note.self, PublicLabel.self, TaskList.self,
]
