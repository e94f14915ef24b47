import LogStore
import LogStoreExamples
import LogStoreObjects
import TestSupport
import Testing

/// A placeholder a salvage put in place of a lost object (``SalvageReport/placeholderTypeTag``) loads as the
/// typed error `lostObject` with the placeholder's sentence, is named `logstore.lost` by the inspector, and
/// its type name cannot be registered.
@Suite struct SalvagedObjectTests {
    final class Impostor: PersistentObject {
        static let typeName = "logstore.lost"
    }

    @Test func aPlaceholderLoadsAsLostObject() throws {
        let directory = TemporaryStore("salvaged-placeholder")
        let (layerID, circleID) = try withObjects(directory) { objects in
            let context = objects.makeContext()
            let circle = Circle(center: Point(x: 1, y: 2), radius: 3)
            let layer = Layer(name: "top", shapes: [circle])
            try context.insert(layer)
            try context.save()
            return (try #require(context.id(of: layer)), try #require(context.id(of: circle)))
        }
        // What a salvage writes for a lost object that the layer still refers to.
        let sentence = "object \(circleID) was lost by damage to its store (lost)"
        try withObjects(directory) { objects in
            try objects.store.put(
                circleID, typeTag: SalvageReport.placeholderTypeTag, payload: Array(sentence.utf8), pinned: false)
            #expect {
                _ = try objects.makeContext().object(id: circleID, as: Circle.self)
            } throws: { error in
                guard let error = error as? ObjectStoreError else { return false }
                return error.code == .lostObject && error.message == sentence && error.objectID == circleID
            }
            #expect {
                let layer = try objects.makeContext().object(id: layerID, as: Layer.self)
                _ = layer?.shapes.count
            } throws: { error in
                (error as? ObjectStoreError)?.code == .lostObject
            }
            #expect(TypeNames.tag(for: "logstore.lost") == SalvageReport.placeholderTypeTag)
            let inspector = try ObjectInspector(objects.store)
            #expect(inspector.typeNames[SalvageReport.placeholderTypeTag] == "logstore.lost")
        }
        #expect {
            _ = try ObjectStore.open(at: directory.path, types: [Circle.self, Impostor.self])
        } throws: { error in
            (error as? ObjectStoreError)?.code == .invalidRegistration
        }
    }
}
