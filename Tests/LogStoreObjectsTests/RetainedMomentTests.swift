import LogStore
import LogStoreExamples
import LogStoreObjects
import TestSupport
import Testing

/// `ObjectStore.open(at:retained:types:)`: the whole object graph as it was at the moment, after the store
/// changed, compacted and swept; saves to it fail.
@Suite struct RetainedMomentTests {
    @Test func aMomentLoadsTheGraphAsItWas() throws {
        let directory = TemporaryStore("objects-moment")
        let layerID = try withObjects(directory) { objects in
            let context = objects.makeContext()
            let layer = Layer(name: "before", shapes: [Circle(center: Point(x: 1, y: 1), radius: 1)])
            try context.insert(layer)
            try context.save()
            try objects.store.retain(as: "before")
            layer.name = "after"
            layer.shapes = [Circle(center: Point(x: 2, y: 2), radius: 2), Circle(center: Point(x: 3, y: 3), radius: 3)]
            try context.save()
            try objects.store.collectGarbage()
            _ = try objects.store.rewriteAllSegments()
            return try #require(context.id(of: layer))
        }
        let moment = try ObjectStore.open(at: directory.path, retained: "before", types: allTestTypes)
        let context = moment.makeContext()
        let layer = try #require(try context.object(id: layerID, as: Layer.self))
        #expect(layer.name == "before")
        #expect(layer.shapes.count == 1 && (layer.shapes.first as? Circle)?.radius == 1)
        layer.name = "changed"
        #expect(throws: ObjectStoreError.self) { try context.save() }
        try moment.close()
        try withObjects(directory) { objects in
            let now = try #require(try objects.makeContext().object(id: layerID, as: Layer.self))
            #expect(now.name == "after" && now.shapes.count == 2)
        }
    }
}
