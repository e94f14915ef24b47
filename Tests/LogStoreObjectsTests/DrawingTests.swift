import LogStore
import LogStoreExamples
import LogStoreObjects
import TestSupport
import Testing

/// Use case 1: a drawing with polymorphic shapes and a shared layer.
@Suite struct DrawingTests {
    @Test func drawingRoundTripsWithSharingAndCollectsDroppedShape() throws {
        let directory = TemporaryStore("drawing")
        let ids = try withObjects(directory) { objects in
            let context = objects.makeContext()
            let drawing = Drawing()
            try context.setRoot(drawing.contents, named: "main")
            let report = try context.save()
            #expect(report.written == 11)  // contents, 2 pages, 3 layers, 5 shapes
            let c1 = try #require(context.id(of: drawing.c1))
            #expect(try #require(try objects.store.get(c1)).payload.count <= 40)
            return (c1: c1, layer1: try #require(context.id(of: drawing.layer1)))
        }

        // Reopen: a fresh store and context.
        try withObjects(directory) { objects in
            let context = objects.makeContext()
            let contents = try #require(try context.root(named: "main", as: Contents.self))
            #expect(contents.pages.map(\.title) == ["one", "two"])
            let page1 = contents.pages[0]
            let page2 = contents.pages[1]
            #expect(page1.layers.map(\.name) == ["background", "figures"])
            #expect(page2.layers.map(\.name) == ["background", "notes"])
            #expect(page1.layers[0] === page2.layers[0], "the shared layer is one instance")
            let background = page1.layers[0]
            #expect(context.id(of: background) == ids.layer1)
            let c1 = try #require(background.shapes[0] as? Circle)
            #expect(c1.center == Point(x: 1, y: 2) && c1.radius == 3)
            let r1 = try #require(background.shapes[1] as? Rectangle)
            #expect(r1.size == Size(width: 10, height: 20))
            #expect(r1.area == 200)
            let figures = page1.layers[1]
            #expect(figures.shapes.count == 2)
            #expect((figures.shapes[0] as? Circle)?.radius == 0.5)
            #expect((figures.shapes[1] as? Rectangle)?.origin == Point(x: 7, y: 8))
            #expect((page2.layers[1].shapes[0] as? Circle)?.radius == 9)

            // Loading an id again, or by type, gives the same instances.
            #expect(try context.object(id: ids.c1, as: Circle.self) === c1)
            let rectangles = try context.objects(of: Rectangle.self)
            #expect(rectangles.count == 2)
            #expect(rectangles.contains { $0 === r1 })
            #expect(Set(rectangles.map(\.area)) == [200, 2])
            #expect(try context.count(of: Circle.self) == 3)
            #expect(try context.count() == 11)

            // Drop c1 from the shared layer: it becomes garbage.
            let c2 = try #require(figures.shapes[0] as? Circle)
            background.shapes = [c2, r1]
            let report = try context.save()
            #expect(report.written == 1, "only the layer changed")
            _ = try objects.store.compact()
            #expect(try objects.store.get(ids.c1) == nil, "the dropped circle is gone")
            #expect(try context.count(of: Circle.self) == 2)
            #expect(try context.count() == 10)
        }

        // Everything reachable remains, in a fresh context of a reopened store.
        try withObjects(directory) { objects in
            let context = objects.makeContext()
            let contents = try #require(try context.root(named: "main", as: Contents.self))
            let background = contents.pages[1].layers[0]
            #expect(background === contents.pages[0].layers[0])
            #expect(background.shapes.count == 2)
            #expect(background.shapes[0] === contents.pages[0].layers[1].shapes[0], "c2 is shared now")
            #expect(try context.object(id: ids.c1, as: Circle.self) == nil)
            #expect(try context.count(of: Layer.self) == 3)
        }
    }

    /// Queries by a protocol type find the classes that conform to it (and only them).
    @Test func queriesByProtocolFindConformingClasses() throws {
        let directory = TemporaryStore("drawing-protocol-queries")
        try withObjects(directory) { objects in
            let context = objects.makeContext()
            try context.setRoot(Drawing().contents, named: "main")
            try context.save()
        }
        try withObjects(directory) { objects in
            try checkProtocolQueries(objects.makeContext())
        }
    }

    private func checkProtocolQueries(_ fresh: ObjectContext) throws {
        let shapes = try fresh.objects(of: (any Shape).self)
        #expect(shapes.count == 5)
        #expect(shapes.filter { $0 is Circle }.count == 3 && shapes.filter { $0 is Rectangle }.count == 2)
        #expect(try fresh.count(of: (any Shape).self) == 5)
        #expect(try fresh.ids(of: (any Shape).self).count == 5)
        #expect(try fresh.count(of: (any PersistentObject).self) == 11)
        #expect(try fresh.count(of: (any Shape).self, includingSubclasses: false) == 0)
        // A protocol not listed in `protocols:` that no stored class conforms to: an empty answer.
        #expect(try fresh.count(of: (any Unnameable).self) == 0)
        #expect(try fresh.objects(of: (any Unnameable).self).isEmpty)
    }

    /// A listed protocol may be private or a composition; a protocol listed twice is refused.
    @Test func queriesByListedPrivateProtocolsAndCompositions() throws {
        let directory = TemporaryStore("drawing-listed-protocols")
        let protocols = [
            QueryableProtocol((any Unnameable).self) { $0 is any Unnameable.Type },
            QueryableProtocol((any Shape & Unnameable).self) { $0 is any (Shape & Unnameable).Type },
        ]
        let store = try directory.open(options: StoreOptions(fsyncPolicy: .never))
        defer { try? store.close() }
        let objects = try ObjectStore(store: store, types: drawingTypes + [Tagged.self], protocols: protocols)
        let context = objects.makeContext()
        try context.setRoot(Drawing().contents, named: "main")
        try context.insert(Tagged())
        try context.save()
        #expect(try context.count(of: (any Unnameable).self) == 1)
        #expect(try context.objects(of: (any Unnameable).self).first is Tagged)
        #expect(try context.count(of: (any Shape & Unnameable).self) == 0)
        #expect {
            _ = try ObjectStore(store: store, types: drawingTypes, protocols: protocols + protocols)
        } throws: { error in
            (error as? ObjectStoreError)?.code == .invalidRegistration
        }
    }

    @Test func savingUnchangedObjectsWritesNothing() throws {
        let directory = TemporaryStore("unchanged")
        try withObjects(directory) { objects in
            let context = objects.makeContext()
            let drawing = Drawing()
            try context.setRoot(drawing.contents, named: "main")
            #expect(try context.save().written == 11)
            let bytesBefore = try objects.store.statistics().totalBytes
            let again = try context.save()
            #expect(again.written == 0)
            #expect(again.unchanged == 11)
            #expect(try objects.store.statistics().totalBytes == bytesBefore)
            drawing.c3.radius = 10
            #expect(try context.save().written == 1)

            // A fresh context loading everything and saving it back writes nothing either.
            let fresh = objects.makeContext()
            let contents = try #require(try fresh.root(named: "main", as: Contents.self))
            #expect(contents.pages.count == 2)
            let report = try fresh.save()
            #expect(report.written == 0 && report.unchanged == 11)
        }
    }
}

/// A protocol the runtime cannot look up by name (it is private).
private protocol Unnameable: PersistentObject {}

/// A class that conforms to the private protocol.
private final class Tagged: Unnameable {
    static let typeName = "test.Tagged"
    var label = "tagged"
}
