import Foundation
import LogStorePersistent
import TestSupport
import Testing

/// Opens an object store over `directory` registering `types`; the directory's teardown closes it.
func openModels(_ directory: TemporaryStore, types: [any PersistentObject.Type] = modelTypes) throws -> ObjectStore {
    let objects = try ObjectStore.open(
        at: directory.path, options: StoreOptions(segmentSize: 1 << 20, fsyncPolicy: .never), types: types)
    return directory.closesAtTeardown(objects) { try $0.close() }
}

/// `@Persistent` classes stored, the store closed and reopened, and read back.
@Suite struct PersistentRoundTripTests {
    @Test func finalRootRoundTrips() throws {
        let directory = TemporaryStore("persistent-circle")
        let created = Date(timeIntervalSince1970: 1_700_000_000)
        var objects = try openModels(directory)
        let context = objects.makeContext()
        let owner = Person(name: "Ada")
        let circle = Circle(radius: 2, center: Point(x: 1, y: -1), created: created)
        circle.name = "wheel"
        circle.cachedArea = 99
        circle.tags = [Tag(), Tag()]
        circle.tags[1].name = "round"
        circle.owner = owner
        let id = try context.insert(circle)
        try context.save()
        try objects.close()

        objects = try openModels(directory)
        let loaded = try #require(try objects.makeContext().object(id: id, as: Circle.self))
        #expect(loaded.radius == 2)
        #expect(loaded.center == Point(x: 1, y: -1))
        #expect(loaded.name == "wheel")
        #expect(loaded.cachedArea == nil)
        #expect(loaded.tags.map(\.name) == ["", "round"])
        #expect(loaded.owner?.name == "Ada")
        #expect(loaded.created == created)
        #expect(Circle.fieldAliases == ["name": ["label", "title"]])
        #expect(Circle.declaredConformances.contains { $0 == (any Shape).self })
    }

    @Test func threeLevelHierarchyRoundTrips() throws {
        let directory = TemporaryStore("persistent-hierarchy")
        var objects = try openModels(directory)
        let context = objects.makeContext()
        let plain = try context.insert(TaskItem(title: "plain"))
        let recurring = try context.insert(RecurringTask(title: "water plants", every: 3))
        let habit = HabitTask(title: "run", every: 1, streak: 12)
        habit.done = true
        let habitID = try context.insert(habit)
        try context.save()
        try objects.close()

        objects = try openModels(directory)
        let check = objects.makeContext()
        let loadedPlain = try #require(try check.object(id: plain, as: TaskItem.self))
        #expect(type(of: loadedPlain) == TaskItem.self)
        #expect(loadedPlain.title == "plain")
        let loadedRecurring = try #require(try check.object(id: recurring, as: RecurringTask.self))
        #expect(type(of: loadedRecurring) == RecurringTask.self)
        #expect(loadedRecurring.title == "water plants" && loadedRecurring.every == 3 && !loadedRecurring.done)
        let loadedHabit = try #require(try check.object(id: habitID, as: HabitTask.self))
        #expect(loadedHabit.title == "run" && loadedHabit.every == 1 && loadedHabit.streak == 12 && loadedHabit.done)
        #expect(try check.objects(of: TaskItem.self).count == 3)
        #expect(TaskItem.typeName == "Task" && TaskItem.typeAliases == ["TaskItem"])
        #expect(RecurringTask.typeName == "RecurringTask" && RecurringTask.typeAliases.isEmpty)
        #expect(HabitTask.fieldAliases == ["every": ["period"]])
    }

    @Test func polymorphicReferencesToAThreeLevelHierarchyRoundTrip() throws {
        let directory = TemporaryStore("persistent-polymorphic")
        var objects = try openModels(directory)
        let context = objects.makeContext()
        let list = TaskList()
        list.items = [
            TaskItem(title: "plain"), RecurringTask(title: "water", every: 3),
            HabitTask(title: "run", every: 1, streak: 5),
        ]
        list.current = list.items[2]
        let id = try context.insert(list)
        try context.save()
        try objects.close()

        objects = try openModels(directory)
        let check = objects.makeContext()
        let loaded = try #require(try check.object(id: id, as: TaskList.self))
        #expect(loaded.items.map { "\(type(of: $0))" } == ["TaskItem", "RecurringTask", "HabitTask"])
        #expect((loaded.items[1] as? RecurringTask)?.every == 3)
        #expect((loaded.items[2] as? HabitTask)?.streak == 5)
        #expect(loaded.current === loaded.items[2])
        #expect(try check.count(of: RecurringTask.self) == 2)
        #expect(try check.count(of: RecurringTask.self, includingSubclasses: false) == 1)
        (loaded.items[2] as? HabitTask)?.streak = 6
        #expect(try check.save().written == 1)
        try objects.close()
    }

    @Test func existentialListsAndReferenceCyclesRoundTrip() throws {
        let directory = TemporaryStore("persistent-existentials")
        var objects = try openModels(directory)
        let context = objects.makeContext()
        let drawing = Drawing()
        let square = Square()
        square.side = 3
        drawing.shapes = [Circle(radius: 1, center: Point(x: 0, y: 0), created: Date()), square]
        drawing.focus = square
        let ada = Person(name: "Ada")
        let bob = Person(name: "Bob")
        ada.partner = bob
        bob.partner = ada
        ada.friends = [bob, ada]
        let drawingID = try context.insert(drawing)
        let adaID = try context.insert(ada)
        try context.save()
        try objects.close()

        objects = try openModels(directory)
        let check = objects.makeContext()
        let loaded = try #require(try check.object(id: drawingID, as: Drawing.self))
        #expect(loaded.shapes.count == 2)
        #expect(loaded.shapes.first is Circle)
        #expect((loaded.shapes.last as? Square)?.side == 3)
        #expect(loaded.focus === loaded.shapes.last)
        #expect(loaded.title == "Untitled")
        let loadedAda = try #require(try check.object(id: adaID, as: Person.self))
        #expect(loadedAda.partner?.name == "Bob")
        #expect(loadedAda.partner?.partner === loadedAda)
        #expect(loadedAda.friends.map(\.name) == ["Bob", "Ada"])
    }

    @Test func aChangeToALoadedModelIsSaved() throws {
        let directory = TemporaryStore("persistent-tracking")
        let objects = try openModels(directory)
        let context = objects.makeContext()
        let id = try context.insert(Square())
        try context.save()

        let editor = objects.makeContext()
        try editor.object(id: id, as: Square.self)?.side = 5
        #expect(try editor.save().written == 1)
        #expect(try editor.save().written == 0)
        #expect(try objects.makeContext().object(id: id, as: Square.self)?.side == 5)
    }

    @Test func oldRecordsTakeDefaultsAndRenamedFields() throws {
        let directory = TemporaryStore("persistent-evolution")
        var objects = try openModels(directory, types: [GadgetV1.self])
        let old = GadgetV1()
        old.name = "lamp"
        let id = try objects.makeContext().insertAndSave(old)
        try objects.close()

        objects = try openModels(directory, types: [GadgetV2.self])
        let loaded = try #require(try objects.makeContext().object(id: id, as: GadgetV2.self))
        #expect(loaded.title == "lamp")
        #expect(loaded.weight == 2.5)
    }
}

extension ObjectContext {
    /// Inserts `object`, saves, and returns its id.
    fileprivate func insertAndSave(_ object: any PersistentObject) throws -> ObjectID {
        let id = try insert(object)
        try save()
        return id
    }
}
