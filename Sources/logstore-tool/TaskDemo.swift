import Foundation
import LogStore
import LogStoreExamples
import LogStoreObjects

/// The second part of `demo`: the `@Persistent` task model in the same store — change tracking, defaults,
/// a subclass, a back-reference and a query by protocol.
enum TaskDemo {
    /// Saves a project with tasks under the root "tasks", edits tasks through temporaries in a new context
    /// and saves (only the changed tasks are written), reloads and checks everything.
    static func run(at path: String, options: StoreOptions, checks: inout DemoChecks) throws {
        let types = drawingTypes + taskTypes
        let objects = try ObjectStore.open(at: path, options: options, types: types)
        defer { try? objects.close() }
        let setup = objects.makeContext()
        let project = Project(name: "launch")
        let ada = User(name: "Ada")
        let urgent = Tag(name: "urgent")
        let write = TaskItem(title: "write the guide", priority: 2)
        write.tags = [urgent]
        write.assignee = ada
        write.due = Date(timeIntervalSince1970: 1_800_000_000)
        project.add(write)
        project.add(TaskItem(title: "run the benchmarks"))
        project.add(RecurringTask(title: "back up", everyDays: 1))
        try setup.setRoot(project, named: "tasks")
        // The project an earlier run moved a task to (below) goes with that run's task list.
        setup.removeRoot(named: "docs")
        let first = try setup.save()
        // A project of an earlier run and its tasks refer to each other: a cycle, which mark-sweep frees.
        _ = try objects.store.collectGarbage()
        print(
            "  tasks (@Persistent classes, same store): saved a project, \(plural(project.tasks.count, "task")) "
                + "(one a RecurringTask subclass), a tag and a user under root \"tasks\": \(first.written) objects")

        // Edits through temporaries: nothing holds the tasks after the loop, and the save still has them.
        let context = objects.makeContext()
        for task in try context.objects(of: TaskItem.self) where !task.done { task.priority += 1 }
        try context.object(id: try requireID(setup.id(of: write)), as: TaskItem.self)?.done = true
        let edits = try context.save()
        print(
            "  raised every open task's priority and ticked one off in a loop, holding none of them: "
                + "the save wrote \(plural(edits.written, "object")) and encoded nothing else "
                + "(\(edits.unchanged) unchanged objects encoded)")
        checks.expect(edits.written == 3 && edits.unchanged == 0, "the save wrote exactly the 3 changed tasks")

        let check = objects.makeContext()
        guard let reloaded = try check.root(named: "tasks", as: Project.self) else {
            throw ToolError("root \"tasks\" is missing")
        }
        let priorities = reloaded.tasks.map(\.priority)
        let recurring = reloaded.tasks.last as? RecurringTask
        let scheduled = try check.count(of: (any Schedulable).self)
        print(
            "  reloaded: priorities \(priorities), first task done: \(reloaded.tasks.first?.done == true), "
                + "\"\(recurring?.title ?? "?")\" every \(recurring?.everyDays ?? 0) day(s), each task's project is "
                + "the project (a back-reference): \(reloaded.tasks.allSatisfy { $0.project === reloaded }); "
                + "\(plural(scheduled, "Schedulable object")) by protocol, no registration of the protocol needed")
        checks.expect(priorities == [3, 1, 1], "the edits made through temporaries were saved")
        checks.expect(reloaded.tasks.first?.done == true, "the task ticked off is done")
        checks.expect(recurring?.everyDays == 1, "the RecurringTask subclass reads back with its own field")
        checks.expect(reloaded.tasks.allSatisfy { $0.project === reloaded }, "the back-references load")
        checks.expect(reloaded.tasks.first?.tags.first?.name == "urgent", "the tag reads back")
        checks.expect(scheduled == 3, "a query by protocol finds the 3 tasks")

        let urgentFirst = FetchDescriptor<TaskItem>(
            predicate: #Predicate { $0.priority >= 2 }, sortBy: [SortDescriptor(\.priority, order: .reverse)])
        let plan = try check.explain(urgentFirst)
        let found = try check.fetch(urgentFirst).map(\.title)
        let tagged = try reloaded.tasks.first?.tags.first.map { try check.referrers(to: $0, through: \TaskItem.tags) }
        print(
            "  query: tasks with priority >= 2, highest first, through the index: \(found) (\(plan)); "
                + "tasks tagged \"urgent\" (index of references): \((tagged ?? []).map(\.title))")
        checks.expect(plan.index == "priority" && found == ["write the guide"], "the indexed query finds the task")
        checks.expect(tagged?.map(\.title) == ["write the guide"], "the index of references finds the tagged task")
        try relationships(objects, checks: &checks)
    }

    /// Relationships: a task moved by its to-one side leaves one project's list for the other's; a deleted
    /// tag leaves every task that carried it.
    private static func relationships(_ objects: ObjectStore, checks: inout DemoChecks) throws {
        let context = objects.makeContext()
        guard let launch = try context.root(named: "tasks", as: Project.self), let moved = launch.tasks.first,
            let urgent = moved.tags.first
        else { throw ToolError("the task list is missing") }
        let docs = Project(name: "docs")
        try context.setRoot(docs, named: "docs")
        moved.project = docs
        try context.save()
        context.delete(urgent)
        try context.save()

        let check = objects.makeContext()
        let launchTitles = try check.root(named: "tasks", as: Project.self)?.tasks.map(\.title) ?? []
        let docsTitles = try check.root(named: "docs", as: Project.self)?.tasks.map(\.title) ?? []
        let tags = try check.count(of: Tag.self)
        let movedTags = try check.root(named: "docs", as: Project.self)?.tasks.first?.tags.count ?? -1
        print(
            "  relationships: task.project = docs (one side) moved \"\(docsTitles.first ?? "?")\" from launch's "
                + "tasks \(launchTitles) to docs' \(docsTitles); deleting the tag \"urgent\" took it off the task "
                + "(\(plural(movedTags, "tag")) left on it, \(plural(tags, "tag")) in the store)")
        checks.expect(docsTitles == ["write the guide"], "setting task.project put the task into docs.tasks")
        checks.expect(!launchTitles.contains("write the guide"), "setting task.project took it out of launch.tasks")
        checks.expect(movedTags == 0 && tags == 0, "the deleted tag left the task")
    }

    private static func requireID(_ id: ObjectID?) throws -> ObjectID {
        guard let id else { throw ToolError("the task has no id") }
        return id
    }
}
