import ArgumentParser
import Foundation
import LogStore
import LogStoreExamples
import LogStoreObjects
import TestSupport

/// `task-writer DIR --seed S`: saves, changes and deletes indexed tasks (the example `TaskItem`, indexed on
/// priority, due date and tags) forever, for crash tests that kill it and then check that the indexes
/// rebuilt from what survived answer as a scan does.
///
/// After each save returns it prints `saved ID… [deleted ID]` (the tasks that save inserted, and the one it
/// deleted), in one `write`.
struct CrashTaskWriter: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "task-writer",
        abstract: "Test helper: save indexed tasks forever, printing a line per save.",
    )

    @Argument(help: "The store directory.") var directory: String

    @Option(help: "Seed of the tasks' fields and of the choice of changes.")
    var seed: UInt64

    func run() throws {
        let objects = try ObjectStore.open(
            at: directory, options: harnessOptions(segmentSize: 1 << 20), types: taskTypes)
        var random = SplitMix64(seed: seed)
        let setup = objects.makeContext()
        let tags = try setup.objects(of: Tag.self)
        let tag =
            try tags.first
            ?? {
                let tag = Tag(name: "urgent")
                try setup.insert(tag)
                try setup.save()
                return tag
            }()
        let tagID = setup.id(of: tag)
        while true {
            let context = objects.makeContext()
            var inserted: [ObjectID] = []
            for _ in 0..<(1 + random.next() % 4) {
                let task = TaskItem(title: "t\(random.next() % 1000)", priority: Int(random.next() % 10))
                task.due =
                    random.next() % 3 == 0 ? nil : Date(timeIntervalSinceReferenceDate: Double(random.next() % 500))
                if random.next() % 2 == 0, let tagID, let shared = try context.object(id: tagID, as: Tag.self) {
                    task.tags = [shared]
                }
                inserted.append(try context.insert(task))
            }
            var deleted: ObjectID?
            let existing = try context.ids(of: TaskItem.self)
            if !existing.isEmpty, random.next() % 2 == 0 {
                let id = existing[Int(random.next() % UInt64(existing.count))]
                if let task = try context.object(id: id, as: TaskItem.self) {
                    if random.next() % 3 == 0 {
                        context.delete(task)
                        deleted = id
                    } else {
                        task.priority = Int(random.next() % 10)
                    }
                }
            }
            try context.save()
            try acknowledge(
                "saved " + inserted.map { "\($0)" }.joined(separator: " ") + (deleted.map { " deleted \($0)" } ?? ""))
        }
    }
}
