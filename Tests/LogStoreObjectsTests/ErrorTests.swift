import LogStore
import LogStoreExamples
import LogStoreObjects
import TestSupport
import Testing

/// A class nobody registers.
final class Unregistered: PersistentObject {
    static let typeName = "Unregistered"
    var value = 1
    init() {}
}

/// A shape class nobody registers.
final class Triangle: Shape {
    static let typeName = "test.Triangle"
    var area: Double { 1 }
    var description: String { "Triangle" }
    init() {}
}

/// A second class claiming the type name of `Circle`.
final class FakeCircle: PersistentObject {
    static let typeName = "Circle"
}

/// Holds a plain (non-wrapper) field that can close a cycle, which the loader must refuse.
final class PlainLink: PersistentObject {
    static let typeName = "test.PlainLink"
    var other: PlainLink?
    init() {}
}

/// Bad input gives typed errors naming type, field and id; nothing crashes and nothing half-saves.
@Suite struct ErrorTests {
    func code(_ error: any Error) -> ObjectStoreError.Code? { (error as? ObjectStoreError)?.code }

    @Test func unregisteredTypesAndClasses() throws {
        let directory = TemporaryStore("unregistered")
        let rectangleID = try withObjects(directory) { objects in
            let context = objects.makeContext()
            let id = try context.insert(Rectangle(origin: Point(x: 0, y: 0), size: Size(width: 1, height: 1)))
            try context.save()
            // Saving an object of an unregistered class fails and writes nothing.
            let layer = Layer(name: "l", shapes: [])
            try context.insert(layer)
            #expect { try context.insert(Unregistered()) } throws: { code($0) == .unregisteredClass }
            let before = try objects.store.statistics().totalBytes
            let holder = Bag(items: [:])
            try context.insert(holder)
            #expect(try context.save().written == 2)
            #expect(try objects.store.statistics().totalBytes > before)
            return id
        }
        _ = try withObjects(directory, types: [Circle.self]) { objects in
            #expect {
                _ = try objects.makeContext().object(id: rectangleID, as: Circle.self)
            } throws: { error in
                guard let error = error as? ObjectStoreError else { return false }
                return error.code == .unregisteredType && error.typeName == "Rectangle" && error.objectID == rectangleID
            }
        }
        // Two classes under one type name are refused at registration.
        #expect {
            _ = try ObjectStore.open(at: directory.path, types: [Circle.self, FakeCircle.self])
        } throws: { error in
            code(error) == .invalidRegistration && "\(error)".contains("FakeCircle")
        }
    }

    @Test func referenceToUnregisteredClassFailsTheSaveUntilRemoved() throws {
        let directory = TemporaryStore("unregistered-reference")
        try withObjects(directory) { objects in
            let context = objects.makeContext()
            let layer = Layer(name: "l", shapes: [Triangle()])
            try context.setRoot(layer, named: "layer")
            #expect {
                try context.save()
            } throws: { error in
                guard let error = error as? ObjectStoreError else { return false }
                return error.code == .unregisteredClass && error.field == "shapes[0]" && error.typeName == "Triangle"
                    && error.message.contains("referenced from a Layer")
            }
            #expect(try context.count() == 0)
            layer.shapes = []
            #expect(try context.save().written == 1)
        }
    }

    @Test func cyclesThroughPlainFieldsAreRefusedOnLoad() throws {
        let directory = TemporaryStore("plain-cycle")
        try withObjects(directory, types: [PlainLink.self]) { objects in
            let context = objects.makeContext()
            let a = PlainLink()
            a.other = PlainLink()
            try context.setRoot(a, named: "a")
            try context.save()
            // A save refuses plain cycles (PlainCycleTests): close one by hand, giving b a's fields with a
            // reference to a.
            let aID = try #require(context.id(of: a))
            let bID = try #require(a.other.flatMap { context.id(of: $0) })
            let record = try #require(try objects.store.get(aID))
            try objects.store.put(
                Record(id: bID, typeTag: record.typeTag, references: [aID], payload: record.payload, isPinned: false))
            #expect {
                _ = try objects.makeContext().root(named: "a", as: PlainLink.self)
            } throws: { error in
                guard let error = error as? ObjectStoreError else { return false }
                return error.code == .cyclicReference && error.field == "other" && error.typeName == "test.PlainLink"
            }
        }
    }

    @Test func lazyReferenceToCollectedObjectIsDangling() throws {
        let directory = TemporaryStore("dangling")
        try withObjects(directory) { objects in
            let store = objects.store
            // A hand-made record whose payload names, as a lazy reference, an object that is gone.
            let gone = try store.put(typeTag: TypeNames.tag(for: "test.Node"), payload: [1, 0x0A, 0x00])
            try store.delete(gone)
            let context = objects.makeContext()
            let lazy = Geometry.LazySquare(square: Geometry.Square(name: "s", side: 1))
            try context.setRoot(lazy, named: "lazy")
            try context.save()
            let squareID = try #require(lazy.square.id)
            let lazyID = try #require(context.id(of: lazy))
            var record = try #require(try store.get(lazyID))
            // Re-point the payload's lazy reference (tag 0x0E, varint id) at the deleted object.
            let index = try #require(record.payload.firstIndex(of: 0x0E))
            record.payload.replaceSubrange((index + 1)..., with: [UInt8(gone.rawValue), 0x00])
            try store.put(record)
            _ = squareID
            let fresh = objects.makeContext()
            let loaded = try #require(try fresh.root(named: "lazy", as: Geometry.LazySquare.self))
            #expect {
                _ = try loaded.square.get()
            } throws: { error in
                guard let error = error as? ObjectStoreError else { return false }
                return error.code == .danglingReference && error.objectID == gone
            }
        }
    }

    /// A stored string that is not UTF-8 is a `corruptPayload` error naming the object, never a string
    /// quietly repaired; a non-ASCII string reads back exactly.
    @Test func stringsMustBeUTF8() throws {
        let directory = TemporaryStore("utf8")
        try withObjects(directory) { objects in
            let context = objects.makeContext()
            let note = Note()
            note.title = "Grüße ✓ 日本 zzzz"
            let id = try context.insert(note)
            try context.save()
            #expect(try objects.makeContext().object(id: id, as: Note.self)?.title == "Grüße ✓ 日本 zzzz")
            var record = try #require(try objects.store.get(id))
            let marker = Array("zzzz".utf8)
            let start = try #require(
                (0...(record.payload.count - marker.count)).first { Array(record.payload[$0..<$0 + 4]) == marker })
            record.payload[start] = 0xFF
            try objects.store.put(record)
            #expect {
                _ = try objects.makeContext().object(id: id, as: Note.self)
            } throws: { error in
                guard let error = error as? ObjectStoreError else { return false }
                return error.code == .corruptPayload && error.objectID == id
            }
        }
    }

    @Test func corruptPayloadsNeverCrash() throws {
        let directory = TemporaryStore("fuzz")
        try withObjects(directory) { objects in
            let store = objects.store
            let context = objects.makeContext()
            let note = Note()
            let noteID = try context.insert(note)
            let layer = Layer(name: "layer", shapes: [Circle(center: Point(x: 1, y: 1), radius: 1)])
            let layerID = try context.insert(layer)
            try context.save()
            var generator = SplitMix64(seed: 0x5EED)
            var outcomes = [0, 0]
            for round in 0..<3_000 {
                let id = round % 2 == 0 ? noteID : layerID
                var record = try #require(try store.get(id))
                let original = record.payload
                switch generator.next() % 3 {
                case 0:
                    let position = Int(generator.next() % UInt64(original.count))
                    record.payload[position] = UInt8(truncatingIfNeeded: generator.next())
                case 1:
                    record.payload = Array(original.prefix(Int(generator.next() % UInt64(original.count))))
                default:
                    let position = Int(generator.next() % UInt64(original.count))
                    record.payload.insert(UInt8(truncatingIfNeeded: generator.next()), at: position)
                }
                let fresh = objects.makeContext()
                try store.put(record)
                do {
                    _ = try fresh.object(id: id, as: (any PersistentObject).self)
                    outcomes[0] += 1
                } catch let error as ObjectStoreError {
                    #expect(error.objectID != nil || error.code == .typeMismatch, "\(error)")
                    outcomes[1] += 1
                }
                record.payload = original
                try store.put(record)
            }
            #expect(outcomes[1] > 1_000, "most damaged payloads are refused: \(outcomes)")
            #expect(try objects.makeContext().object(id: noteID, as: Note.self)?.title == "groceries")
        }
    }
}
