import LogStore
import LogStoreObjects
import TestSupport
import Testing

/// A project listing its tasks in a plain array field; each task points back through a plain field.
final class PlainProject: PersistentObject {
    static let typeName = "test.PlainProject"
    var name: String
    var tasks: [PlainTask] = []
    init(name: String) { self.name = name }
}

final class PlainTask: PersistentObject {
    static let typeName = "test.PlainTask"
    var title: String
    var project: PlainProject?
    init(title: String) { self.title = title }
}

/// The same shape with the project's list in an `@ObjectList`: its cycles load.
final class ListedProject: PersistentObject {
    static let typeName = "test.ListedProject"
    var name: String
    @ObjectList var tasks: [ListedTask]
    init(name: String) { self.name = name }
}

final class ListedTask: PersistentObject {
    static let typeName = "test.ListedTask"
    var title: String
    var project: ListedProject?
    init(title: String) { self.title = title }
}

/// An owner reaching its item lazily; the item points back through a plain field.
final class LazyOwner: PersistentObject {
    static let typeName = "test.LazyOwner"
    var item: LazyRef<OwnedItem>
    init(item: OwnedItem) { self.item = LazyRef(item) }
}

final class OwnedItem: PersistentObject {
    static let typeName = "test.OwnedItem"
    var owner: LazyOwner?
    init() {}
}

let cycleTestTypes: [any PersistentObject.Type] = [
    PlainLink.self, PlainProject.self, PlainTask.self, ListedProject.self, ListedTask.self, LazyOwner.self,
    OwnedItem.self,
]

/// A cycle of plain fields cannot be loaded (each object's `init(from:)` needs the next one first), so a
/// save refuses it before writing anything; cycles through wrapper or lazy fields save and load.
@Suite struct PlainCycleTests {
    /// The error a refused save threw, or nil when it did not throw one.
    func refusal(_ save: () throws -> Void) -> ObjectStoreError? {
        do {
            try save()
            return nil
        } catch {
            return error as? ObjectStoreError
        }
    }

    @Test func newPlainCycleIsRefusedBeforeAnythingIsWritten() throws {
        let directory = TemporaryStore("plain-cycle-new")
        try withObjects(directory, types: cycleTestTypes) { objects in
            let context = objects.makeContext()
            let a = PlainLink()
            let b = PlainLink()
            a.other = b
            b.other = a
            try context.setRoot(a, named: "a")
            let error = try #require(refusal { try context.save() })
            #expect(error.code == .cyclicReference && error.field == "other" && error.typeName == "test.PlainLink")
            #expect(error.objectID == nil && error.objects.isEmpty, "new objects have no stored id")
            #expect(
                error.message.contains("test.PlainLink (new), field other → test.PlainLink (new), field other"))
            #expect(error.message.contains("@ObjectRef") && error.message.contains("nothing was written"))
            #expect(try objects.store.root(named: "a") == nil && objects.store.count() == 0)
            // The refused save left the context usable: break the cycle and save.
            b.other = nil
            #expect(try context.save().written == 2)
            let loaded = try #require(try objects.makeContext().root(named: "a", as: PlainLink.self))
            #expect(loaded.other != nil && loaded.other?.other == nil)
        }
    }

    @Test func plainSelfReferenceIsRefused() throws {
        let directory = TemporaryStore("plain-cycle-self")
        try withObjects(directory, types: cycleTestTypes) { objects in
            let context = objects.makeContext()
            let a = PlainLink()
            a.other = a
            try context.insert(a)
            let error = try #require(refusal { try context.save() })
            #expect(error.code == .cyclicReference && error.field == "other")
            #expect(error.message.contains("test.PlainLink (new), field other → back to test.PlainLink (new)"))
            #expect(try objects.store.count() == 0)
        }
    }

    @Test func editingStoredObjectsIntoAPlainCycleIsRefused() throws {
        let directory = TemporaryStore("plain-cycle-edit")
        try withObjects(directory, types: cycleTestTypes) { objects in
            let first = objects.makeContext()
            let a = PlainLink()
            a.other = PlainLink()
            try first.setRoot(a, named: "a")
            try first.save()
            let aID = try #require(first.id(of: a))
            let bID = try #require(a.other.flatMap { first.id(of: $0) })

            let context = objects.makeContext()
            let loaded = try #require(try context.root(named: "a", as: PlainLink.self))
            let b = try #require(loaded.other)
            b.other = loaded
            let error = try #require(refusal { try context.save() })
            #expect(error.code == .cyclicReference && error.field == "other")
            #expect(error.objectID == bID, "named from the object the save would change")
            #expect(error.objects == [bID, aID])
            #expect(error.message.contains("test.PlainLink \(bID), field other → test.PlainLink \(aID), field other"))
            // Nothing was written: the stored graph still loads.
            let fresh = try #require(try objects.makeContext().root(named: "a", as: PlainLink.self))
            #expect(fresh.other?.other == nil)
        }
    }

    @Test func plainCycleThroughAStoredAndANewObjectIsRefused() throws {
        let directory = TemporaryStore("plain-cycle-mixed")
        try withObjects(directory, types: cycleTestTypes) { objects in
            let first = objects.makeContext()
            try first.setRoot(PlainProject(name: "p"), named: "project")
            try first.save()

            let context = objects.makeContext()
            let project = try #require(try context.root(named: "project", as: PlainProject.self))
            let projectID = try #require(context.id(of: project))
            let task = PlainTask(title: "t")
            task.project = project
            project.tasks.append(task)
            let error = try #require(refusal { try context.save() })
            #expect(error.code == .cyclicReference && error.objects == [projectID])
            #expect(
                error.message.contains(
                    "test.PlainProject \(projectID), field tasks[0] → test.PlainTask (new), field project → back to"))
            #expect(try objects.store.count(ofType: TypeNames.tag(for: PlainTask.typeName)) == 0)
            #expect(try objects.makeContext().root(named: "project", as: PlainProject.self)?.tasks.isEmpty == true)
        }
    }

    @Test func cyclesThroughWrapperOrLazyFieldsStillSaveAndLoad() throws {
        let directory = TemporaryStore("plain-cycle-allowed")
        let ids = try withObjects(directory, types: cycleTestTypes) { objects in
            let context = objects.makeContext()
            let project = ListedProject(name: "p")
            try context.setRoot(project, named: "project")
            let item = OwnedItem()
            let owner = LazyOwner(item: item)
            item.owner = owner
            try context.setRoot(owner, named: "owner")
            try context.save()
            // A stored project gains a new task pointing back at it.
            let edit = objects.makeContext()
            let stored = try #require(try edit.root(named: "project", as: ListedProject.self))
            let task = ListedTask(title: "t")
            task.project = stored
            stored.tasks.append(task)
            #expect(try edit.save().written == 2)
            return (task: try #require(edit.id(of: task)), item: try #require(context.id(of: item)))
        }
        try withObjects(directory, types: cycleTestTypes) { objects in
            let project = try #require(try objects.makeContext().root(named: "project", as: ListedProject.self))
            #expect(project.tasks.map(\.title) == ["t"] && project.tasks[0].project === project)
            let task = try #require(try objects.makeContext().object(id: ids.task, as: ListedTask.self))
            #expect(task.project?.tasks.first === task)
            let ownerContext = objects.makeContext()
            let owner = try #require(try ownerContext.root(named: "owner", as: LazyOwner.self))
            #expect(try owner.item.get().owner === owner)
            let itemContext = objects.makeContext()
            let item = try #require(try itemContext.object(id: ids.item, as: OwnedItem.self))
            #expect(try item.owner?.item.get() === item)
        }
    }

    /// The check walks without recursion: a long chain of plain fields is no cycle and saves.
    @Test func longPlainChainSaves() throws {
        let directory = TemporaryStore("plain-chain")
        try withObjects(directory, types: cycleTestTypes) { objects in
            let context = objects.makeContext()
            let head = PlainLink()
            var tail = head
            for _ in 0..<5_000 {
                let next = PlainLink()
                tail.other = next
                tail = next
            }
            try context.setRoot(head, named: "head")
            #expect(try context.save().written == 5_001)
        }
    }
}
