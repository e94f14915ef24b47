import Foundation
import LogStore
import LogStoreExamples
import LogStoreObjects
import TestSupport
import Testing

/// Queries whose results are loaded together with a reference cycle (a shelf lists its books, each book
/// names its shelf through a wrapper field): the predicate and the caller see each object only once its
/// wrapper fields are filled in.
@Suite struct CycleFetchTests {
    /// Two shelves of books, saved; each query runs in a new context, so every book is loaded with its
    /// shelf and the shelf's other books (the cycle the load closes at its end).
    private func withShelves(_ name: String, _ body: (ObjectStore) throws -> Void) throws {
        let directory = TemporaryStore(name)
        try withObjects(directory, types: relationshipTypes) { objects in
            let context = objects.makeContext()
            for (shelfName, count) in [("hall", 3), ("attic", 2)] {
                let shelf = Shelf(name: shelfName)
                shelf.books = (0..<count).map { Book(title: "\(shelfName) \($0)") }
                try context.insert(shelf)
            }
            try context.save()
            try body(objects)
        }
    }

    @Test func aPredicateThroughTheWrapperFieldOfACycleSeesItFilledIn() throws {
        try withShelves("cycle-fetch-predicate") { objects in
            let inHall = try objects.makeContext().fetch(
                FetchDescriptor<Book>(
                    predicate: #Predicate { $0.shelf?.name == "hall" }, sortBy: [SortDescriptor(\.title)]))
            #expect(inHall.map(\.title) == ["hall 0", "hall 1", "hall 2"])
            #expect(inHall.allSatisfy { $0.shelf?.name == "hall" && $0.shelf?.books.count == 3 })
            let count = try objects.makeContext().fetchCount(
                FetchDescriptor<Book>(predicate: #Predicate { $0.shelf?.name == "attic" }))
            #expect(count == 2)
        }
    }

    /// A predicate that loads through a lazy reference (a shelf, whose books close a cycle back to it)
    /// loads in a session of its own: the shelf's books get their wrapper fields, and the answer is right.
    @Test func aPredicateThatLoadsThroughALazyReferenceGetsWholeObjects() throws {
        let directory = TemporaryStore("cycle-fetch-lazy")
        try withObjects(directory, types: relationshipTypes + [ShelfLabel.self]) { objects in
            let context = objects.makeContext()
            for (shelfName, count) in [("hall", 3), ("attic", 2), ("cellar", 1)] {
                let shelf = Shelf(name: shelfName)
                shelf.books = (0..<count).map { Book(title: "\(shelfName) \($0)") }
                try context.insert(shelf)
                try context.insert(ShelfLabel(text: "label of \(shelfName)", shelf: shelf))
            }
            try context.save()

            let fresh = objects.makeContext()
            let labels = try fresh.fetch(
                FetchDescriptor<ShelfLabel>(
                    predicate: #Predicate { $0.shelfName != "attic" }, sortBy: [SortDescriptor(\.text)]))
            #expect(labels.map(\.text) == ["label of cellar", "label of hall"])
            for label in labels {
                let shelf = try label.shelf.get()
                #expect(shelf.books.allSatisfy { $0.shelf === shelf }, "\(shelf.name)'s books name their shelf")
            }
            // Loaded by the predicate, the attic's shelf is whole too.
            let attic = try #require(try fresh.objects(of: Shelf.self).first { $0.name == "attic" })
            #expect(attic.books.count == 2 && attic.books.allSatisfy { $0.shelf === attic })
        }
    }

    @Test func everyObjectOfATypeComesWithItsCycleFilledIn() throws {
        try withShelves("cycle-fetch-all") { objects in
            let books = try objects.makeContext().objects(of: Book.self)
            #expect(books.count == 5)
            for book in books {
                let shelf = try #require(book.shelf, "\(book.title) has no shelf")
                #expect(book.title.hasPrefix(shelf.name))
                #expect(shelf.books.contains { $0 === book })
            }
            let shelves = try objects.makeContext().fetch(FetchDescriptor<Shelf>(sortBy: [SortDescriptor(\.name)]))
            #expect(shelves.map(\.name) == ["attic", "hall"])
            #expect(shelves.allSatisfy { shelf in shelf.books.allSatisfy { $0.shelf === shelf } })
        }
    }
}

/// A label naming a shelf lazily: a predicate on ``shelfName`` loads the shelf while the query runs.
final class ShelfLabel: PersistentObject {
    static let typeName = "rel.ShelfLabel"
    var text: String
    var shelf: LazyRef<Shelf>
    /// The shelf's name, loading the shelf (nil when it cannot be loaded).
    var shelfName: String? { (try? shelf.get())?.name }
    init(text: String, shelf: Shelf) {
        self.text = text
        self.shelf = LazyRef(shelf)
    }
}
