import Foundation
import LogStore
import LogStoreExamples
import LogStoreObjects
import TestSupport
import Testing

/// Random edits of either side of the shelf ↔ book and book ↔ sticker relationships, deletes with their
/// rules, saves, reopens and compactions, against a model of which shelf holds which book and which
/// stickers a book carries (printed seed). After every save, in a fresh context: each pair of inverse
/// fields agrees, and the links are the model's.
@Suite struct RelationshipPropertyTests {
    /// The model: books by title, each with its shelf and stickers; shelves and stickers by name.
    struct Model {
        var shelfOf: [String: String?] = [:]
        var stickersOf: [String: Set<String>] = [:]
        var shelves: Set<String> = []
        var stickers: Set<String> = []
    }

    @Test func inversesAgreeAfterEverySave() throws {
        let seed = testSeed("RelationshipPropertyTests", default: UInt64.random(in: 1...1 << 40))
        var random = SplitMix64(seed: seed)
        func below(_ bound: Int) -> Int { Int(random.next() % UInt64(bound)) }
        let directory = TemporaryStore("rel-property")
        var objects = try openObjects(directory, types: relationshipTypes)
        defer { try? objects.close() }
        var model = Model()
        var nextName = 0
        func name(_ prefix: String) -> String {
            nextName += 1
            return "\(prefix)\(nextName)"
        }
        // Half the steps work in a context that lives across saves (it moves on after each), half in a new one.
        var longLived = objects.makeContext()
        for step in 0..<120 {
            let context = below(2) == 0 ? objects.makeContext() : longLived
            // The other contexts' saves since: seen after a refresh (otherwise the save would conflict).
            if context === longLived { try context.refresh() }
            let shelves = try context.objects(of: Shelf.self)
            let books = try context.objects(of: Book.self)
            let stickers = try context.objects(of: Sticker.self)
            var touched: Set<String> = []
            for _ in 0..<(1 + below(4)) {
                switch below(10) {
                case 0:
                    let shelf = Shelf(name: name("s"))
                    try context.insert(shelf)
                    model.shelves.insert(shelf.name)
                case 1:
                    let sticker = Sticker(text: name("k"))
                    try context.insert(sticker)
                    model.stickers.insert(sticker.text)
                case 2:
                    let book = Book(title: name("b"))
                    try context.insert(book)
                    model.shelfOf[book.title] = .some(nil)
                    model.stickersOf[book.title] = []
                    if let shelf = shelves.randomElement(using: &random), model.shelves.contains(shelf.name) {
                        book.shelf = shelf
                        model.shelfOf[book.title] = .some(shelf.name)
                    }
                case 3 where !books.isEmpty:
                    // The to-one side.
                    let book = books[below(books.count)]
                    // One side of a link per step: edits of both sides that disagree have no order to go by.
                    guard model.shelfOf[book.title] != nil, !touched.contains(book.title) else { continue }
                    let shelf = below(4) == 0 ? nil : shelves.randomElement(using: &random)
                    if let shelf, !model.shelves.contains(shelf.name) { continue }
                    book.shelf = shelf
                    model.shelfOf[book.title] = .some(shelf?.name)
                    touched.insert(book.title)
                case 4 where !books.isEmpty && !shelves.isEmpty:
                    // The to-many side.
                    let book = books[below(books.count)]
                    let shelf = shelves[below(shelves.count)]
                    guard model.shelfOf[book.title] != nil, model.shelves.contains(shelf.name),
                        !touched.contains(book.title)
                    else { continue }
                    if !shelf.books.contains(where: { $0 === book }) { shelf.books.append(book) }
                    model.shelfOf[book.title] = .some(shelf.name)
                    touched.insert(book.title)
                case 5 where !books.isEmpty && !stickers.isEmpty:
                    let book = books[below(books.count)]
                    let sticker = stickers[below(stickers.count)]
                    guard model.shelfOf[book.title] != nil, model.stickers.contains(sticker.text),
                        touched.insert(book.title + "/" + sticker.text).inserted
                    else { continue }
                    if below(2) == 0 {
                        if !book.stickers.contains(where: { $0 === sticker }) { book.stickers.append(sticker) }
                    } else if !sticker.books.contains(where: { $0 === book }) {
                        sticker.books.append(book)
                    }
                    model.stickersOf[book.title, default: []].insert(sticker.text)
                case 6 where !books.isEmpty:
                    let book = books[below(books.count)]
                    guard let first = model.stickersOf[book.title]?.sorted().first,
                        let sticker = stickers.first(where: { $0.text == first }),
                        touched.insert(book.title + "/" + first).inserted
                    else { continue }
                    if below(2) == 0 {
                        book.stickers.removeAll { $0 === sticker }
                    } else {
                        sticker.books.removeAll { $0 === book }
                    }
                    model.stickersOf[book.title]?.remove(first)
                case 7 where !books.isEmpty:
                    let book = books[below(books.count)]
                    guard model.shelfOf[book.title] != nil else { continue }
                    context.delete(book)
                    model.shelfOf[book.title] = nil
                    model.stickersOf[book.title] = nil
                case 8 where !shelves.isEmpty && below(3) == 0:
                    // Cascade: the shelf's books go with it.
                    let shelf = shelves[below(shelves.count)]
                    guard model.shelves.contains(shelf.name) else { continue }
                    context.delete(shelf)
                    model.shelves.remove(shelf.name)
                    for (title, holder) in model.shelfOf where holder == shelf.name {
                        model.shelfOf[title] = nil
                        model.stickersOf[title] = nil
                    }
                case 9 where step % 15 == 14:
                    _ = try objects.store.compact()
                default:
                    break
                }
            }
            try context.save()
            if step % 20 == 19 {
                try objects.close()
                objects = try openObjects(directory, types: relationshipTypes)
                longLived = objects.makeContext()
            }
            try check(objects.makeContext(), model, "seed \(seed), step \(step)")
        }
    }

    private func check(_ context: ObjectContext, _ model: Model, _ label: String) throws {
        let books = try context.objects(of: Book.self)
        let shelves = try context.objects(of: Shelf.self)
        let stickers = try context.objects(of: Sticker.self)
        #expect(Set(books.map(\.title)) == Set(model.shelfOf.keys), "\(label): books")
        #expect(Set(shelves.map(\.name)) == model.shelves, "\(label): shelves")
        for book in books {
            #expect(book.shelf?.name == model.shelfOf[book.title] ?? nil, "\(label): shelf of \(book.title)")
            #expect(Set(book.stickers.map(\.text)) == model.stickersOf[book.title] ?? [], "\(label): \(book.title)")
            if let shelf = book.shelf {
                #expect(shelf.books.contains { $0 === book }, "\(label): \(shelf.name) lacks \(book.title)")
            }
            for sticker in book.stickers {
                #expect(sticker.books.contains { $0 === book }, "\(label): \(sticker.text) lacks \(book.title)")
            }
        }
        for shelf in shelves {
            for book in shelf.books { #expect(book.shelf === shelf, "\(label): \(book.title) not on \(shelf.name)") }
            #expect(Set(shelf.books.map(\.title)).count == shelf.books.count, "\(label): \(shelf.name) twice")
        }
        for sticker in stickers {
            for book in sticker.books {
                #expect(book.stickers.contains { $0 === sticker }, "\(label): \(book.title) lacks \(sticker.text)")
            }
        }
    }
}
