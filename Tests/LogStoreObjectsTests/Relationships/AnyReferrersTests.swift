import Foundation
import LogStore
import LogStoreExamples
import LogStoreObjects
import TestSupport
import Testing

/// `referrers(to:)`: the objects of any class that refer to an object through any field, at the context's
/// snapshot and with its unsaved changes.
@Suite struct AnyReferrersTests {
    private func names(_ objects: [any PersistentObject]) -> [String] {
        objects.map { object -> String in
            switch object as AnyObject {
            case let shelf as Shelf: "shelf \(shelf.name)"
            case let book as Book: "book \(book.title)"
            case let sticker as Sticker: "sticker \(sticker.text)"
            case let binder as Binder: "binder \(binder.name)"
            case let memo as Memo: "memo \(memo.text)"
            default: "\(type(of: object))"
            }
        }.sorted()
    }

    @Test func storedReferrersOfEveryClassAndFieldAreFound() throws {
        let directory = TemporaryStore("any-referrers")
        try withObjects(directory, types: relationshipTypes) { objects in
            let context = objects.makeContext()
            let shelf = Shelf(name: "hall")
            let first = Book(title: "first")
            let second = Book(title: "second")
            let sticker = Sticker(text: "sale")
            shelf.books = [first, second]
            first.stickers = [sticker]
            try context.insert(shelf)
            try context.save()

            let fresh = objects.makeContext()
            let book = try #require(try fresh.objects(of: Book.self).first { $0.title == "first" })
            #expect(names(try fresh.referrers(to: book)) == ["shelf hall", "sticker sale"])
            let other = try #require(try fresh.objects(of: Book.self).first { $0.title == "second" })
            #expect(names(try fresh.referrers(to: other)) == ["shelf hall"])
            let loadedShelf = try #require(try fresh.objects(of: Shelf.self).first)
            #expect(names(try fresh.referrers(to: loadedShelf)) == ["book first", "book second"])
        }
    }

    @Test func unsavedChangesNewObjectsAndPendingDeletesCount() throws {
        let directory = TemporaryStore("any-referrers-unsaved")
        try withObjects(directory, types: relationshipTypes) { objects in
            let setup = objects.makeContext()
            let shelf = Shelf(name: "hall")
            let book = Book(title: "first")
            let sticker = Sticker(text: "sale")
            shelf.books = [book]
            book.stickers = [sticker]
            try setup.insert(shelf)
            try setup.save()

            let context = objects.makeContext()
            let loaded = try #require(try context.objects(of: Book.self).first)
            let loadedSticker = try #require(try context.objects(of: Sticker.self).first)
            loadedSticker.books = []
            let newShelf = Shelf(name: "new")
            newShelf.books = [loaded]
            try context.insert(newShelf)
            #expect(names(try context.referrers(to: loaded)) == ["shelf hall", "shelf new"])
            context.delete(try #require(try context.objects(of: Shelf.self).first { $0.name == "hall" }))
            #expect(names(try context.referrers(to: loaded)) == ["shelf new"])
            // A new object, never saved: its referrers are in memory; one the context does not know has none.
            let draft = Book(title: "draft")
            newShelf.books.append(draft)
            #expect(try context.referrers(to: draft).isEmpty)
            try context.insert(draft)
            #expect(names(try context.referrers(to: draft)) == ["shelf new"])
        }
    }

    @Test func theContextsSnapshotIsAnsweredAfterAnotherContextSaved() throws {
        let directory = TemporaryStore("any-referrers-snapshot")
        try withObjects(directory, types: relationshipTypes) { objects in
            let setup = objects.makeContext()
            let book = Book(title: "first")
            book.stickers = [Sticker(text: "sale")]
            try setup.insert(book)
            try setup.save()

            let reader = objects.makeContext()
            let seen = try #require(try reader.objects(of: Book.self).first)
            #expect(names(try reader.referrers(to: seen)) == ["sticker sale"])

            let writer = objects.makeContext()
            let sticker = try #require(try writer.objects(of: Sticker.self).first)
            sticker.books = []
            let shelf = Shelf(name: "hall")
            shelf.books = [try #require(try writer.objects(of: Book.self).first)]
            try writer.insert(shelf)
            try writer.save()

            // The reader's snapshot is older than the store's index of references: still the old answer.
            #expect(names(try reader.referrers(to: seen)) == ["sticker sale"])
            try reader.refresh()
            let again = try #require(try reader.objects(of: Book.self).first)
            #expect(names(try reader.referrers(to: again)) == ["shelf hall"])
        }
    }

    @Test func plainInstancesAreTestedAsTheyAreInMemory() throws {
        let directory = TemporaryStore("any-referrers-plain")
        try withObjects(directory, types: relationshipTypes) { objects in
            let setup = objects.makeContext()
            let folder = Binder(name: "inbox")
            let memo = Memo(text: "call")
            memo.folder = folder
            try setup.insert(memo)
            try setup.save()

            let context = objects.makeContext()
            let loadedFolder = try #require(try context.objects(of: Binder.self).first)
            #expect(names(try context.referrers(to: loadedFolder)) == ["memo call"])
            let loadedMemo = try #require(try context.objects(of: Memo.self).first)
            loadedMemo.folder = nil
            #expect(names(try context.referrers(to: loadedFolder)).isEmpty)
        }
    }

    /// Random links between shelves, books, stickers and authors, saved by two contexts in turn; after each
    /// save, the referrers of every object, read by a new context, equal those found by reading every
    /// object's fields. The seed is printed; set `LOGSTORE_SEED` to replay one.
    @Test func referrersMatchABruteForceScan() throws {
        let seed = testSeed("AnyReferrersTests", default: UInt64.random(in: 1...1 << 40))
        var random = SplitMix64(seed: seed)
        let directory = TemporaryStore("any-referrers-model")
        try withObjects(directory, types: relationshipTypes) { objects in
            let setup = objects.makeContext()
            for index in 0..<4 { try setup.insert(Shelf(name: "s\(index)")) }
            for index in 0..<12 { try setup.insert(Book(title: "b\(index)")) }
            for index in 0..<5 { try setup.insert(Sticker(text: "t\(index)")) }
            for index in 0..<3 { try setup.insert(Author(name: "a\(index)")) }
            try setup.save()
            for step in 0..<30 {
                let context = objects.makeContext()
                let shelves = try context.objects(of: Shelf.self)
                let books = try context.objects(of: Book.self)
                let stickers = try context.objects(of: Sticker.self)
                let authors = try context.objects(of: Author.self)
                func pick<T>(_ list: [T]) -> T { list[Int(random.next() % UInt64(list.count))] }
                for _ in 0..<4 {
                    let book = pick(books)
                    switch random.next() % 4 {
                    case 0: book.shelf = random.next() % 3 == 0 ? nil : pick(shelves)
                    case 1: book.author = random.next() % 3 == 0 ? nil : pick(authors)
                    case 2:
                        let sticker = pick(stickers)
                        if book.stickers.contains(where: { $0 === sticker }) {
                            book.stickers.removeAll { $0 === sticker }
                        } else {
                            book.stickers.append(sticker)
                        }
                    default: pick(shelves).books.removeAll()
                    }
                }
                try context.save()

                let reader = objects.makeContext()
                let all: [any PersistentObject] =
                    try reader.objects(of: Shelf.self) + reader.objects(of: Book.self)
                    + reader.objects(of: Sticker.self) + reader.objects(of: Author.self)
                func refers(_ from: any PersistentObject, _ to: any PersistentObject) -> Bool {
                    switch from as AnyObject {
                    case let shelf as Shelf: shelf.books.contains { $0 === to }
                    case let book as Book:
                        book.shelf === to || book.author === to || book.stickers.contains { $0 === to }
                    case let sticker as Sticker: sticker.books.contains { $0 === to }
                    default: false
                    }
                }
                for target in all {
                    let expected = all.filter { refers($0, target) }.compactMap { reader.id(of: $0) }.sorted()
                    let found = try reader.referrers(to: target).compactMap { reader.id(of: $0) }
                    #expect(found == expected, "seed \(seed), step \(step), target \(names([target]))")
                }
            }
        }
    }
}
