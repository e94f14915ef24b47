import LogStore
import LogStoreExamples
import LogStoreObjects
import TestSupport
import Testing

/// Use case 2: shapes by inheritance, and a lazily loaded reference.
@Suite struct GeometryTests {
    @Test func subclassesDecodeAsTheirOwnClassAndOverrideArea() throws {
        let directory = TemporaryStore("geometry")
        try withObjects(directory) { objects in
            let context = objects.makeContext()
            let venn = Geometry.VennDiagram(
                left: Geometry.Circle(name: "left", radius: 1), right: Geometry.Circle(name: "right", radius: 2),
                highlight: Geometry.Square(name: "focus", side: 3))
            try context.setRoot(venn, named: "venn")
            try context.save()
        }
        try withObjects(directory) { objects in
            let context = objects.makeContext()
            let venn = try #require(try context.root(named: "venn", as: Geometry.VennDiagram.self))
            #expect(venn.left.name == "left" && venn.left.radius == 1)
            #expect(venn.right.name == "right" && venn.right.radius == 2)
            #expect(abs(venn.right.area() - 4 * Double.pi) < 1e-9)
            let highlight = try #require(venn.highlight)
            #expect(highlight is Geometry.Square)
            #expect(highlight.area() == 9, "the override runs: the stored object decoded as a Square")
            #expect(highlight.name == "focus")

            // Queries by a superclass include its subclasses.
            #expect(try context.count(of: Geometry.Shape.self) == 3)
            #expect(try context.count(of: Geometry.Shape.self, includingSubclasses: false) == 0)
            #expect(try context.objects(of: Geometry.Circle.self).count == 2)
            #expect(try context.objects(of: Geometry.Shape.self).map { $0.area() }.contains(9))

            // Asking for a Square by the id of a Circle is a typed error.
            let leftID = try #require(context.id(of: venn.left))
            #expect {
                _ = try context.object(id: leftID, as: Geometry.Square.self)
            } throws: { error in
                guard let error = error as? ObjectStoreError else { return false }
                return error.code == .typeMismatch && error.objectID == leftID
                    && error.message.contains("geometry.Circle")
            }
        }
    }

    @Test func lazyReferenceLoadsOnFirstAccessOnly() throws {
        let directory = TemporaryStore("lazy")
        let squareID = try withObjects(directory) { objects in
            let context = objects.makeContext()
            let square = Geometry.Square(name: "lazy", side: 4)
            let lazy = Geometry.LazySquare(square: square)
            try context.setRoot(lazy, named: "lazy")
            try context.save()
            #expect(lazy.square.isLoaded)
            return try #require(context.id(of: square))
        }
        try withObjects(directory) { objects in
            let context = objects.makeContext()
            let lazy = try #require(try context.root(named: "lazy", as: Geometry.LazySquare.self))
            #expect(!lazy.square.isLoaded, "loading the owner did not load the square")
            #expect(!context.isLoaded(squareID))
            #expect(lazy.square.id == squareID)
            let square = try lazy.square.get()
            #expect(square.side == 4 && square.area() == 16)
            #expect(lazy.square.isLoaded && context.isLoaded(squareID))
            #expect(try lazy.square.get() === square)
            #expect(try context.object(id: squareID, as: Geometry.Square.self) === square)

            // The lazily referenced square is kept alive by the reference: compaction keeps it.
            #expect(try context.save().written == 0)
            _ = try objects.store.compact()
            #expect(try objects.store.contains(squareID))
        }
    }
}
