import LogStore
import LogStoreObjects
import TestSupport
import Testing

/// A task class the property test edits: ``UntrackedTask`` (`Codable`), ``TrackedTask`` (a model written by
/// hand) and ``MacroTask`` (`@Persistent`).
protocol EditableTask: PersistentObject {
    var title: String { get set }
    init(_ title: String)
}

extension UntrackedTask: EditableTask {}
extension TrackedTask: EditableTask {}

/// Random edits to objects that are loaded, kept or dropped, new objects, saves, refreshes, discarded
/// contexts and reopens, against a plain dictionary of what must be stored: every change made through a
/// context reaches its next save, whether or not anything still holds the object, and nothing else changes.
/// The seed is printed; set `LOGSTORE_SEED` to replay one.
@Suite struct ChangeTrackingPropertyTests {
    @Test(arguments: ["untracked", "tracked", "macro"])
    func editsReachTheNextSave(kind: String) throws {
        switch kind {
        case "untracked": try run(UntrackedTask.self, label: kind)
        case "tracked": try run(TrackedTask.self, label: kind)
        default: try run(MacroTask.self, label: kind)
        }
    }

    private func run<Task: EditableTask>(_: Task.Type, label: String) throws {
        let seed = testSeed("ChangeTrackingPropertyTests.\(label)", default: UInt64.random(in: 1...1 << 40))
        var random = SplitMix64(seed: seed)
        let directory = TemporaryStore("tracking-model-\(label)")
        var objects = try openObjects(directory, types: changeTrackingTypes)
        var context = objects.makeContext()
        /// What the store must hold, and what the context will write on its next save.
        var stored: [ObjectID: String] = [:]
        var pending: [ObjectID: String] = [:]
        var held: [Task] = []
        var step = 0

        func expected(_ id: ObjectID) -> String? { pending[id] ?? stored[id] }
        func check(_ what: String) throws {
            let fresh = objects.makeContext()
            let all = try fresh.objects(of: Task.self)
            var found: [ObjectID: String] = [:]
            for task in all { found[try #require(fresh.id(of: task))] = task.title }
            #expect(found == stored, "seed \(seed), step \(step), after \(what)")
        }

        for _ in 0..<400 {
            step += 1
            let ids = Array(stored.keys).sorted()
            switch random.next() % 10 {
            case 0, 1:  // edit an object through a temporary: nothing holds it afterwards
                guard let id = ids.randomElement(using: &random) else { continue }
                let title = "t\(random.next() % 1000)"
                try #require(try context.object(id: id, as: Task.self)).title = title
                pending[id] = title
            case 2:  // load and keep
                guard let id = ids.randomElement(using: &random) else { continue }
                held.append(try #require(try context.object(id: id, as: Task.self)))
            case 3:  // edit a kept object
                guard !held.isEmpty else { continue }
                let task = held[Int(random.next() % UInt64(held.count))]
                let title = "k\(random.next() % 1000)"
                task.title = title
                pending[try #require(context.id(of: task))] = title
            case 4:  // let go of what is kept
                held.removeAll()
            case 5:  // a new object, kept or not
                let title = "n\(random.next() % 1000)"
                let task = Task(title)
                pending[try context.insert(task)] = title
                if random.next() % 2 == 0 { held.append(task) }
            case 6:
                try context.save()
                stored.merge(pending) { $1 }
                pending.removeAll()
                try check("save")
            case 7:
                try context.refresh()
                for (id, title) in pending { #expect(try context.object(id: id, as: Task.self)?.title == title) }
            case 8:  // read back through the context: its unsaved changes show
                guard let id = ids.randomElement(using: &random) else { continue }
                #expect(
                    try context.object(id: id, as: Task.self)?.title == expected(id), "seed \(seed), step \(step)")
            default:  // a discarded context, sometimes a reopen
                held.removeAll()
                if random.next() % 2 == 0 {
                    context.discardChanges()
                } else {
                    context = objects.makeContext()
                }
                pending.removeAll()
                if random.next() % 3 == 0 {
                    context = objects.makeContext()
                    try objects.close()
                    objects = try openObjects(directory, types: changeTrackingTypes)
                    context = objects.makeContext()
                }
                try check("a discarded context")
            }
        }
        held.removeAll()
        try context.save()
        stored.merge(pending) { $1 }
        try check("the last save")
        try objects.close()
    }
}
