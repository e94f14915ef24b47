import Foundation
import LogStore
import LogStoreExamples
import LogStoreObjects
import TestSupport
import Testing

/// The edges of snapshots, conflicts and ownership: deletes elsewhere, refreshing around unsaved edits,
/// forgotten new objects, and contexts that go away.
@Suite struct ContextEdgeTests {
    /// A saved layer `main` with two circles; returns the ids of the layer and its circles.
    private func savedLayer(_ objects: ObjectStore) throws -> (layer: ObjectID, first: ObjectID, second: ObjectID) {
        let setup = objects.makeContext()
        let first = Circle(center: Point(x: 1, y: 1), radius: 1)
        let second = Circle(center: Point(x: 2, y: 2), radius: 2)
        let layer = Layer(name: "layer", shapes: [first, second])
        try setup.setRoot(layer, named: "main")
        try setup.save()
        return try (#require(setup.id(of: layer)), #require(setup.id(of: first)), #require(setup.id(of: second)))
    }

    @Test func linkingAnObjectAnotherContextDeletedIsAConflictNotAResurrection() throws {
        let directory = TemporaryStore("edge-resurrect")
        try withObjects(directory) { objects in
            let ids = try savedLayer(objects)
            let setup = objects.makeContext()
            let loose = try setup.insert(Circle(center: Point(x: 9, y: 9), radius: 9))
            try setup.save()

            let a = objects.makeContext()
            let layer = try #require(try a.object(id: ids.layer, as: Layer.self))
            let circle = try #require(try a.object(id: loose, as: Circle.self))
            let b = objects.makeContext()
            b.delete(try #require(try b.object(id: loose, as: Circle.self)))
            try b.save()

            layer.shapes.append(circle)
            let error = #expect(throws: ObjectStoreError.self) { try a.save() }
            #expect(error?.code == .conflict && error?.objects == [loose])
            #expect(try objects.makeContext().object(id: loose, as: Circle.self) == nil, "the delete stands")
        }
    }

    @Test func anObjectThisContextsOwnSaveFreedIsStoredAgainWhenLinkedAgain() throws {
        let directory = TemporaryStore("edge-own-release")
        try withObjects(directory) { objects in
            let ids = try savedLayer(objects)
            let context = objects.makeContext()
            let layer = try #require(try context.object(id: ids.layer, as: Layer.self))
            let dropped = layer.shapes[1]
            layer.shapes = [layer.shapes[0]]
            try context.save()
            #expect(try objects.makeContext().object(id: ids.second, as: Circle.self) == nil, "freed")

            layer.shapes.append(dropped)
            try context.save()
            let again = try #require(try objects.makeContext().object(id: ids.layer, as: Layer.self))
            #expect(again.shapes.compactMap { ($0 as? Circle)?.radius } == [1, 2])
        }
    }

    @Test func theGuidesConflictRecoveryLetsTheNextSaveSucceed() throws {
        let directory = TemporaryStore("edge-guide-recovery")
        try withObjects(directory) { objects in
            let ids = try savedLayer(objects)
            let a = objects.makeContext()
            let layer = try #require(try a.object(id: ids.layer, as: Layer.self))
            let circle = try #require(try a.object(id: ids.first, as: Circle.self))
            layer.name = "renamed in A"
            circle.radius = 10

            let b = objects.makeContext()
            let circleInB = try #require(try b.object(id: ids.first, as: Circle.self))
            circleInB.radius = 20
            try b.save()

            do {
                try a.save()
                Issue.record("the save should conflict")
            } catch let error as ObjectStoreError {
                #expect(error.code == .conflict && error.objects == [ids.first])
                for id in error.objects {
                    if let stale = a.loadedObject(id) { try a.refresh(stale) }
                }
            }
            try a.save()
            let stored = try #require(try objects.makeContext().object(id: ids.layer, as: Layer.self))
            #expect(stored.name == "renamed in A")
            #expect(stored.shapes.compactMap { ($0 as? Circle)?.radius } == [20, 2], "B's radius, A's name")
        }
    }

    @Test func refreshDropsAnOutdatedObjectThatAnUnsavedEditRefersTo() throws {
        let directory = TemporaryStore("edge-refresh-referenced")
        try withObjects(directory) { objects in
            let ids = try savedLayer(objects)
            let a = objects.makeContext()
            let layer = try #require(try a.object(id: ids.layer, as: Layer.self))
            layer.name = "unsaved edit"
            let b = objects.makeContext()
            let changedInB = try #require(try b.object(id: ids.first, as: Circle.self))
            changedInB.radius = 30
            try b.save()

            try a.refresh()
            #expect(try a.object(id: ids.first, as: Circle.self)?.radius == 30, "no mix of two states")
            #expect(layer.name == "unsaved edit", "the unsaved edit stays")
            try a.save()
            let stored = try #require(try objects.makeContext().object(id: ids.layer, as: Layer.self))
            #expect(stored.name == "unsaved edit")
            #expect(stored.shapes.compactMap { ($0 as? Circle)?.radius } == [30, 2])
        }
    }

    @Test func newObjectsAContextForgotMayJoinAnother() throws {
        let directory = TemporaryStore("edge-forgotten")
        try withObjects(directory) { objects in
            let note = Circle(center: Point(x: 0, y: 0), radius: 5)
            let a = objects.makeContext()
            try a.insert(note)
            a.discardChanges()
            let b = objects.makeContext()
            try b.insert(note)
            try b.save()
            #expect(try objects.makeContext().count(of: Circle.self) == 1)
        }
    }

    @Test func unsavedNewObjectsOfAContextThatIsGoneAreFreed() throws {
        let directory = TemporaryStore("edge-gone")
        try withObjects(directory) { objects in
            weak var weakNote: Node?
            do {
                let context = objects.makeContext()
                let node = Node("never saved")
                weakNote = node
                try context.insert(node)
            }
            for _ in 0..<3 { _ = objects.makeContext() }
            #expect(weakNote == nil, "nothing keeps an unsaved object of a dropped context alive")
        }
    }

    @Test func aRefusedSaveWithDeletesDoesNotMoveTheContextOn() throws {
        let directory = TemporaryStore("edge-refused-stays")
        try withObjects(directory) { objects in
            let ids = try savedLayer(objects)
            let a = objects.makeContext()
            let circle = try #require(try a.object(id: ids.second, as: Circle.self))
            let b = objects.makeContext()
            let changedInB = try #require(try b.object(id: ids.second, as: Circle.self))
            changedInB.radius = 40
            try b.save()

            a.delete(try #require(try a.object(id: ids.first, as: Circle.self)))
            let error = #expect(throws: ObjectStoreError.self) { try a.save() }
            #expect(error?.code == .stillReferenced)
            #expect(a.loadedObject(ids.second) === circle, "the refused save did not move the context on")
            #expect(try a.object(id: ids.second, as: Circle.self)?.radius == 2)
        }
    }

    @Test func aBatchOfExpectationsAloneIsChecked() throws {
        let directory = TemporaryStore("edge-expect-only")
        try withObjects(directory) { objects in
            let store = objects.store
            let id = try store.put(typeTag: 1, payload: [1])
            let (_, version) = try #require(try store.snapshot().versionedGet(id))
            try store.put(id, typeTag: 1, payload: [2])
            var batch = WriteBatch()
            batch.expect(id, version: version)
            let error = #expect(throws: LogStoreError.self) { try store.write(batch) }
            #expect(error?.code == .conflict)
        }
    }
}
