import Foundation
import LogStoreObjects
import LogStorePersistent

// A library of `@Persistent` models with a relationship of each kind: shelves hold books (to-many with a
// to-one inverse, delete rule cascade), books carry stickers (many-to-many, the sticker's side denies
// deletes), a book has an author (to-one without inverse: nulled when the author is deleted). And a plain
// `Codable` pair: a folder holds notes, a note names its folder through a box.

@Persistent("rel.Shelf") final class Shelf {
    static let relationships: [Relationship] = [
        .toMany(\Shelf.books, inverse: \Book.shelf, deleteRule: .cascade)
    ]
    var name: String
    var books: [Book] = []
    init(name: String) { self.name = name }
}

@Persistent("rel.Book") final class Book {
    static let relationships: [Relationship] = [
        .toMany(\Book.stickers, inverse: \Sticker.books), .toOne(\Book.author),
    ]
    var title: String
    @Reference var shelf: Shelf? = nil
    var stickers: [Sticker] = []
    var author: Author? = nil
    init(title: String) { self.title = title }
}

@Persistent("rel.Sticker") final class Sticker {
    static let relationships: [Relationship] = [
        .toMany(\Sticker.books, inverse: \Book.stickers, deleteRule: .deny)
    ]
    var text: String
    @Reference var books: [Book] = []
    init(text: String) { self.text = text }
}

@Persistent("rel.Author") final class Author {
    var name: String
    init(name: String) { self.name = name }
}

/// A plain `Codable` folder of notes.
final class Binder: PersistentObject {
    static let typeName = "rel.Binder"
    static let relationships: [Relationship] = [
        .toMany(\Binder.notes, inverse: \Memo.folder, field: "notes", inverseField: "folderBox")
    ]
    var name: String
    var notes: [Memo] = []
    init(name: String) { self.name = name }
}

/// A plain `Codable` note; its folder is stored through a box (the folder lists the note: a cycle).
final class Memo: PersistentObject {
    static let typeName = "rel.Memo"
    var text: String
    var folderBox = ObjectRef<Binder>(wrappedValue: nil)
    /// The folder, through the box.
    var folder: Binder? {
        get { folderBox.wrappedValue }
        set { folderBox.wrappedValue = newValue }
    }
    init(text: String) { self.text = text }
}

let relationshipTypes: [any PersistentObject.Type] = [
    Shelf.self, Book.self, Sticker.self, Author.self, Binder.self, Memo.self,
]
