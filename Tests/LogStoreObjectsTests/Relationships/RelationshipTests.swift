import Foundation
import LogStore
import LogStoreObjects
import TestSupport
import Testing

/// Inverse fields kept consistent on save, whichever side changed; delete rules (cascade, nullify, deny);
/// deleted objects taken out of every relationship field; plain `Codable` classes as well as models.
@Suite struct RelationshipTests {
    private func titles(_ books: [Book]) -> [String] { books.map(\.title).sorted() }

    @Test func settingTheToOneSideMovesTheObjectBetweenInverseLists() throws {
        let directory = TemporaryStore("rel-to-one")
        try withObjects(directory, types: relationshipTypes) { objects in
            let context = objects.makeContext()
            let first = Shelf(name: "first")
            let second = Shelf(name: "second")
            let book = Book(title: "Dune")
            try context.insert(first)
            try context.insert(second)
            book.shelf = first
            try context.insert(book)
            try context.save()
            #expect(titles(first.books) == ["Dune"])

            let editing = objects.makeContext()
            let loaded = try #require(try editing.objects(of: Book.self).first)
            let target = try #require(try editing.objects(of: Shelf.self).first { $0.name == "second" })
            loaded.shelf = target
            try editing.save()
            #expect(titles(target.books) == ["Dune"])

            let fresh = objects.makeContext()
            let shelves = try fresh.objects(of: Shelf.self)
            #expect(titles(try #require(shelves.first { $0.name == "first" }).books) == [])
            #expect(titles(try #require(shelves.first { $0.name == "second" }).books) == ["Dune"])
            #expect(try fresh.objects(of: Book.self).first?.shelf?.name == "second")
        }
    }

    @Test func appendingToTheToManySideSetsTheToOneSideAndLeavesTheFormerList() throws {
        let directory = TemporaryStore("rel-to-many")
        try withObjects(directory, types: relationshipTypes) { objects in
            let context = objects.makeContext()
            let first = Shelf(name: "first")
            let second = Shelf(name: "second")
            let book = Book(title: "Emma")
            first.books = [book]
            try context.insert(first)
            try context.insert(second)
            try context.save()
            #expect(book.shelf === first)

            second.books.append(book)
            try context.save()
            #expect(book.shelf === second)
            #expect(first.books.isEmpty)

            let fresh = objects.makeContext()
            let reloaded = try #require(try fresh.objects(of: Book.self).first)
            #expect(reloaded.shelf?.name == "second")
            #expect(try fresh.objects(of: Shelf.self).first { $0.name == "first" }?.books.isEmpty == true)
        }
    }

    @Test func aToOneFieldsOwnNewValueWinsOverAnAppendElsewhere() throws {
        let directory = TemporaryStore("rel-conflict")
        try withObjects(directory, types: relationshipTypes) { objects in
            let context = objects.makeContext()
            let shelves = [Shelf(name: "a"), Shelf(name: "b"), Shelf(name: "c")]
            for shelf in shelves { try context.insert(shelf) }
            let book = Book(title: "Ulysses")
            shelves[0].books = [book]
            try context.save()
            book.shelf = shelves[1]
            shelves[2].books.append(book)
            try context.save()
            #expect(book.shelf === shelves[1])
            #expect(shelves.map { $0.books.count } == [0, 1, 0])
        }
    }

    @Test func manyToManyLinksAreMirroredBothWays() throws {
        let directory = TemporaryStore("rel-many-many")
        try withObjects(directory, types: relationshipTypes) { objects in
            let context = objects.makeContext()
            let red = Sticker(text: "red")
            let blue = Sticker(text: "blue")
            let book = Book(title: "Kim")
            let other = Book(title: "Nana")
            book.stickers = [red, blue]
            // Inserted: kept when no book carries them (an object only reached is collected then).
            try context.insert(red)
            try context.insert(blue)
            try context.insert(book)
            try context.insert(other)
            try context.save()
            #expect(titles(red.books) == ["Kim"])
            #expect(titles(blue.books) == ["Kim"])

            // From the other side: a sticker takes a book; the book drops a sticker.
            blue.books.append(other)
            book.stickers.removeAll { $0 === red }
            try context.save()
            #expect(other.stickers.map(\.text) == ["blue"])
            #expect(red.books.isEmpty)

            let fresh = objects.makeContext()
            let stickers = try fresh.objects(of: Sticker.self)
            #expect(titles(try #require(stickers.first { $0.text == "blue" }).books) == ["Kim", "Nana"])
            #expect(try #require(stickers.first { $0.text == "red" }).books.isEmpty)
            let kim = try #require(try fresh.objects(of: Book.self).first { $0.title == "Kim" })
            #expect(kim.stickers.map(\.text) == ["blue"])
        }
    }

    @Test func cascadeDeletesTheTargetsAndTheyLeaveTheirOtherRelationships() throws {
        let directory = TemporaryStore("rel-cascade")
        try withObjects(directory, types: relationshipTypes) { objects in
            let context = objects.makeContext()
            let shelf = Shelf(name: "old")
            let keep = Shelf(name: "keep")
            let sticker = Sticker(text: "sale")
            let doomed = (0..<3).map { Book(title: "doomed \($0)") }
            let kept = Book(title: "kept")
            for book in doomed { book.stickers = [sticker] }
            kept.stickers = [sticker]
            shelf.books = doomed
            keep.books = [kept]
            try context.insert(shelf)
            try context.insert(keep)
            try context.save()
            #expect(sticker.books.count == 4)

            let deleting = objects.makeContext()
            let loaded = try #require(try deleting.objects(of: Shelf.self).first { $0.name == "old" })
            deleting.delete(loaded)
            let report = try deleting.save()
            #expect(report.deleted == 4)

            let fresh = objects.makeContext()
            #expect(titles(try fresh.objects(of: Book.self)) == ["kept"])
            #expect(try fresh.objects(of: Shelf.self).map(\.name) == ["keep"])
            #expect(titles(try #require(try fresh.objects(of: Sticker.self).first).books) == ["kept"])
        }
    }

    @Test func denyRefusesTheDeleteWhileTheRelationshipHoldsObjectsAndWritesNothing() throws {
        let directory = TemporaryStore("rel-deny")
        try withObjects(directory, types: relationshipTypes) { objects in
            let context = objects.makeContext()
            let sticker = Sticker(text: "signed")
            let book = Book(title: "Beloved")
            book.stickers = [sticker]
            try context.insert(book)
            try context.save()
            let stickerID = try #require(context.id(of: sticker))

            let deleting = objects.makeContext()
            let loaded = try #require(try deleting.object(id: stickerID, as: Sticker.self))
            deleting.delete(loaded)
            let error = #expect(throws: ObjectStoreError.self) { try deleting.save() }
            #expect(error?.code == .deleteDenied)
            #expect(error?.field == "books")
            #expect(error?.objects.first == stickerID)
            #expect(try objects.makeContext().count(of: Sticker.self) == 1)

            // Deleting the book too, in the same save, is allowed: nothing is left to deny.
            let both = objects.makeContext()
            let loadedSticker = try #require(try both.object(id: stickerID, as: Sticker.self))
            both.delete(try #require(loadedSticker.books.first))
            both.delete(loadedSticker)
            try both.save()
            #expect(try objects.makeContext().count(of: Sticker.self) == 0)
            #expect(try objects.makeContext().count(of: Book.self) == 0)
        }
    }

    @Test func aRefusedSaveTakesBackTheCascadeAndTheUnlinking() throws {
        let directory = TemporaryStore("rel-refused")
        try withObjects(directory, types: relationshipTypes) { objects in
            let setup = objects.makeContext()
            let shelf = Shelf(name: "shelf")
            let sticker = Sticker(text: "new")
            let books = [Book(title: "one"), Book(title: "two")]
            for book in books { book.stickers = [sticker] }
            shelf.books = books
            try setup.insert(shelf)
            try setup.insert(sticker)
            try setup.save()

            let deleting = objects.makeContext()
            let loaded = try #require(try deleting.objects(of: Shelf.self).first)
            let loadedSticker = try #require(try deleting.objects(of: Sticker.self).first)
            #expect(loadedSticker.books.count == 2)
            // Another context changes a book the cascade would delete: the save conflicts.
            let other = objects.makeContext()
            try #require(try other.objects(of: Book.self).first { $0.title == "one" }).title = "one, edited"
            try other.save()
            deleting.delete(loaded)
            let error = #expect(throws: ObjectStoreError.self) { try deleting.save() }
            #expect(error?.code == .conflict)
            // Nothing of the reconciliation stays: the sticker still lists both books, and once the shelf's
            // delete is withdrawn the next save deletes nothing.
            #expect(loadedSticker.books.count == 2)
            deleting.cancelDelete(loaded)
            let report = try deleting.save()
            #expect(report.deleted == 0)
            let fresh = objects.makeContext()
            #expect(try fresh.count(of: Book.self) == 2)
            #expect(try #require(try fresh.objects(of: Sticker.self).first).books.count == 2)
        }
    }

    @Test func aDeletedTargetIsTakenOutOfEveryRelationshipFieldThatHoldsIt() throws {
        let directory = TemporaryStore("rel-nullify")
        try withObjects(directory, types: relationshipTypes) { objects in
            let context = objects.makeContext()
            let author = Author(name: "Austen")
            let books = (0..<5).map { Book(title: "book \($0)") }
            for book in books {
                book.author = author
                try context.insert(book)
            }
            try context.save()
            let authorID = try #require(context.id(of: author))

            let deleting = objects.makeContext()
            deleting.delete(try #require(try deleting.object(id: authorID, as: Author.self)))
            try deleting.save()

            let fresh = objects.makeContext()
            #expect(try fresh.objects(of: Book.self).allSatisfy { $0.author == nil })
            #expect(try fresh.count(of: Author.self) == 0)
            #expect(try fresh.count(of: Book.self) == 5)
        }
    }

    @Test func aReferenceThroughAFieldThatIsNoRelationshipStillRefusesTheDelete() throws {
        let directory = TemporaryStore("rel-still-referenced")
        try withObjects(directory, types: relationshipTypes + [Holder.self]) { objects in
            let context = objects.makeContext()
            let author = Author(name: "Eliot")
            let holder = Holder(author: author)
            try context.insert(holder)
            try context.save()
            context.delete(author)
            let error = #expect(throws: ObjectStoreError.self) { try context.save() }
            #expect(error?.code == .stillReferenced)
        }
    }

    @Test func plainCodableClassesKeepTheirInversesToo() throws {
        let directory = TemporaryStore("rel-codable")
        try withObjects(directory, types: relationshipTypes) { objects in
            let context = objects.makeContext()
            let inbox = Binder(name: "inbox")
            let archive = Binder(name: "archive")
            let note = Memo(text: "call")
            note.folder = inbox
            try context.insert(note)
            try context.insert(inbox)
            try context.insert(archive)
            try context.save()
            #expect(inbox.notes.map(\.text) == ["call"])

            let editing = objects.makeContext()
            let loaded = try #require(try editing.objects(of: Memo.self).first)
            let target = try #require(try editing.objects(of: Binder.self).first { $0.name == "archive" })
            loaded.folder = target
            try editing.save()

            let fresh = objects.makeContext()
            let folders = try fresh.objects(of: Binder.self)
            #expect(try #require(folders.first { $0.name == "inbox" }).notes.isEmpty)
            #expect(try #require(folders.first { $0.name == "archive" }).notes.map(\.text) == ["call"])
        }
    }

    @Test func aRelationshipKeepsAnIndexOfItsReferences() throws {
        let directory = TemporaryStore("rel-index")
        try withObjects(directory, types: relationshipTypes) { objects in
            let context = objects.makeContext()
            let author = Author(name: "Woolf")
            for index in 0..<10 {
                let book = Book(title: "b\(index)")
                if index % 2 == 0 { book.author = author }
                try context.insert(book)
            }
            try context.save()
            let fresh = objects.makeContext()
            let loadedAuthor = try #require(try fresh.objects(of: Author.self).first)
            #expect(
                titles(try fresh.referrers(to: loadedAuthor, through: \Book.author)) == ["b0", "b2", "b4", "b6", "b8"])
            let summaries = try IndexSummary.summaries(of: objects.store)
            let index = try #require(summaries.first { $0.typeName == "rel.Book" && $0.name == "author" })
            #expect(index.entries == 10)
        }
    }
}

/// Refers to an author through a field that is no relationship.
final class Holder: PersistentObject {
    static let typeName = "rel.Holder"
    var author: Author
    init(author: Author) { self.author = author }
}
