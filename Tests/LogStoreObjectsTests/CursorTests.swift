import LogStore
import LogStoreObjects
import TestSupport
import Testing

// The keyed decoder skips a field's value by remembering where the value it just decoded ended. These
// models put values of every kind (scalars, structs, enums, optionals, lists, dictionaries, references)
// at the same offsets of different records, read fields out of order, and mix `decodeNil` with
// `decode`, so that a stale or wrong end would show up as a wrong value or a corruption error.

/// A struct with a string long enough to make its end differ from other values'.
struct Labeled: Codable, Equatable {
    var x: Int
    var y: Int
    var label: String
}

/// A struct field first: its end is remembered while the object decodes.
final class LabeledChild: PersistentObject {
    static let typeName = "test.LabeledChild"
    var point: Labeled
    var tail: Int
    init(point: Labeled, tail: Int) {
        self.point = point
        self.tail = tail
    }
}

/// A reference field first, at the offset where the child's struct was: a reference records no end.
final class LabeledParent: PersistentObject {
    static let typeName = "test.LabeledParent"
    var child: LabeledChild
    var number: Int
    var text: String
    init(child: LabeledChild, number: Int, text: String) {
        self.child = child
        self.number = number
        self.text = text
    }
}

enum Figure: Codable, Equatable {
    case circle(radius: Int, label: String)
    case rectangle(width: Int, height: Int)
    case none
}

/// Reads its fields in another order than they were written.
struct Reordered: Codable, Equatable {
    var a: Int
    var b: String
    var c: Int
    private enum CodingKeys: String, CodingKey { case a, b, c }
    init(a: Int, b: String, c: Int) {
        self.a = a
        self.b = b
        self.c = c
    }
    init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        c = try container.decode(Int.self, forKey: .c)
        a = try container.decode(Int.self, forKey: .a)
        b = try container.decode(String.self, forKey: .b)
    }
}

/// Asks `decodeNil` before decoding the same field.
struct NilFirst: Codable, Equatable {
    var point: Labeled?
    var y: Int
    private enum CodingKeys: String, CodingKey { case point, y }
    init(point: Labeled?, y: Int) {
        self.point = point
        self.y = y
    }
    init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        point = try container.decodeNil(forKey: .point) ? nil : try container.decode(Labeled.self, forKey: .point)
        y = try container.decode(Int.self, forKey: .y)
    }
    func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        if let point { try container.encode(point, forKey: .point) } else { try container.encodeNil(forKey: .point) }
        try container.encode(y, forKey: .y)
    }
}

/// Many kinds of values in one object.
final class Assorted: PersistentObject {
    static let typeName = "test.Assorted"
    var figures: [Figure]
    var figure: Figure
    var maybe: Labeled?
    var surely: Labeled?
    var reordered: Reordered
    var nilFirst: NilFirst
    var nilFirstFilled: NilFirst
    var table: [String: Labeled]
    var last: Int

    init(seed: Int) {
        figures = [.circle(radius: seed, label: "c\(seed)"), .rectangle(width: 1, height: seed), .none]
        figure = .rectangle(width: seed, height: 2)
        maybe = seed % 2 == 0 ? Labeled(x: seed, y: 1, label: "o") : nil
        surely = Labeled(x: 3, y: seed, label: String(repeating: "q", count: seed % 7))
        reordered = Reordered(a: seed, b: "b\(seed)", c: -seed)
        nilFirst = NilFirst(point: nil, y: seed)
        nilFirstFilled = NilFirst(point: Labeled(x: 1, y: 2, label: "l"), y: seed)
        table = ["k\(seed)": Labeled(x: 0, y: 0, label: "d")]
        last = seed * 10
    }

    func matches(seed: Int) -> Bool {
        let expected = Assorted(seed: seed)
        return figures == expected.figures && figure == expected.figure && maybe == expected.maybe
            && surely == expected.surely && reordered == expected.reordered && nilFirst == expected.nilFirst
            && nilFirstFilled == expected.nilFirstFilled && table == expected.table && last == expected.last
    }
}

final class AssortedHolder: PersistentObject {
    static let typeName = "test.AssortedHolder"
    var items: [Assorted]
    var child: LabeledChild
    var number: Int
    init(items: [Assorted], child: LabeledChild, number: Int) {
        self.items = items
        self.child = child
        self.number = number
    }
}

@Suite struct CursorTests {
    let types: [any PersistentObject.Type] = [
        LabeledChild.self, LabeledParent.self, Assorted.self, AssortedHolder.self,
    ]

    /// One load decodes the child, then the parent with the same decoder: the child's struct end must
    /// not be taken for the parent's reference at the same offset.
    @Test func valueEndsDoNotCarryOverToTheNextRecord() throws {
        let directory = TemporaryStore("cursor-records")
        try withObjects(directory, types: types) { objects in
            let context = objects.makeContext()
            let child = LabeledChild(point: Labeled(x: 1, y: 2, label: String(repeating: "z", count: 40)), tail: 9)
            let id = try context.insert(LabeledParent(child: child, number: 5, text: "hello"))
            try context.save()
            let loaded = try #require(try objects.makeContext().object(id: id, as: LabeledParent.self))
            #expect(loaded.number == 5 && loaded.text == "hello")
            #expect(loaded.child.tail == 9 && loaded.child.point.label.count == 40)
        }
    }

    @Test func valuesOfEveryKindRoundTripAndReencodeUnchanged() throws {
        let directory = TemporaryStore("cursor-kinds")
        try withObjects(directory, types: types) { objects in
            let context = objects.makeContext()
            let child = LabeledChild(point: Labeled(x: 1, y: 1, label: "c"), tail: 3)
            let id = try context.insert(
                AssortedHolder(items: (0..<12).map { Assorted(seed: $0) }, child: child, number: 77))
            try context.save()
            let holder = try #require(try objects.makeContext().object(id: id, as: AssortedHolder.self))
            #expect(holder.number == 77 && holder.child.tail == 3)
            for (seed, item) in holder.items.enumerated() { #expect(item.matches(seed: seed), "item \(seed)") }
            #expect(try objects.makeContext().save().written == 0)
        }
    }
}
