import Foundation
import LogStorePersistent

// The task manager of the guide and the demo (an example, not API), declared with `@Persistent`: projects
// hold tasks, a task refers back to its project, tasks carry tags and an assignee, and a recurring task is
// a subclass. Every property is tracked, so a save writes exactly the objects that changed.

/// Anything with a due date: the demo and the guide query every class that conforms.
public protocol Schedulable: PersistentObject {
    /// When it is due, if ever.
    var due: Date? { get }
}

/// A label on tasks.
@Persistent public final class Tag {
    /// The label.
    public var name: String

    /// A new tag.
    public init(name: String) { self.name = name }
}

/// Someone tasks are assigned to.
@Persistent public final class User {
    /// The user's name.
    public var name: String
    /// The user's e-mail address (empty: none).
    public var email: String = ""

    /// A new user.
    public init(name: String) { self.name = name }
}

/// A task of a project. Indexed on its priority and due date (ranges, sorting), and on its tags (the
/// tasks with a tag).
@Persistent("Task") public class TaskItem: Schedulable {
    /// The indexes queries of tasks use.
    public static let indexes: [IndexDefinition] = [
        .ordered(\TaskItem.priority), .ordered(\TaskItem.due), .references(\TaskItem.tags),
    ]
    /// Its tags: a deleted tag is taken off every task that carries it.
    public static let relationships: [Relationship] = [.toMany(\TaskItem.tags)]

    /// What to do.
    public var title: String
    /// Whether it is done.
    public var done: Bool = false
    /// Higher is more urgent.
    public var priority: Int = 0
    /// When it is due, if ever.
    public var due: Date? = nil
    /// Its tags (references to shared `Tag` objects).
    public var tags: [Tag] = []
    /// Who does it.
    public var assignee: User? = nil
    /// The project that lists it: a back-reference, stored through a box so the cycle
    /// project → task → project loads.
    @Reference public var project: Project? = nil

    /// A new task.
    public init(title: String, priority: Int = 0) {
        self.title = title
        self.priority = priority
    }
}

/// A task that comes back every few days.
@Persistent public final class RecurringTask: TaskItem {
    /// Days between occurrences.
    public var everyDays: Int = 7

    /// A new recurring task.
    public init(title: String, everyDays: Int) {
        self.everyDays = everyDays
        super.init(title: title)
    }
}

/// A project and its tasks.
@Persistent public final class Project {
    /// Its tasks, whose `project` is the inverse: setting either side sets the other on save. Deleting a
    /// project deletes its tasks.
    public static let relationships: [Relationship] = [
        .toMany(\Project.tasks, inverse: \TaskItem.project, deleteRule: .cascade)
    ]

    /// The project's name.
    public var name: String
    /// Its tasks, in order.
    public var tasks: [TaskItem] = []

    /// A new, empty project.
    public init(name: String) { self.name = name }

    /// Appends `task` and makes this project its project (a save would set the second side itself).
    public func add(_ task: TaskItem) {
        tasks.append(task)
        task.project = self
    }
}

/// Every class of the task model, for `ObjectStore.open(at:types:)`.
public let taskTypes: [any PersistentObject.Type] = [
    Project.self, TaskItem.self, RecurringTask.self, Tag.self, User.self,
]
