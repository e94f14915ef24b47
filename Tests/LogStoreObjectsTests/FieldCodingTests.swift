import Foundation
import LogStore
import LogStoreExamples
import LogStoreObjects
import TestSupport
import Testing

// Test-only models of the FieldCodable path. Each type's `Codable` conformance (synthesized unless written
// out) writes the same fields in the same order as its `encodeFields(to:)`, as the protocol requires.

/// A point: a FieldCodable value, nested in FieldCodable and plain-Codable classes.
private struct FCPoint: Codable, Equatable {
    var x: Double
    var y: Double
}

extension FCPoint: FieldCodable {
    func encodeFields(to fields: FieldWriter) throws {
        try fields.write(x, for: "x")
        try fields.write(y, for: "y")
    }

    init(fields: FieldReader) throws {
        x = try fields.read(Double.self, for: "x")
        y = try fields.read(Double.self, for: "y")
    }
}

/// Every scalar kind FieldWriter writes directly, an optional and an array of strings.
private struct FCScalars: Codable, Equatable {
    var flag: Bool
    var count: Int
    var big: Int64
    var unsigned: UInt64
    var ratio: Double
    var small: Float
    var text: String
    var note: String?
    var tags: [String]
}

extension FCScalars: FieldCodable {
    func encodeFields(to fields: FieldWriter) throws {
        try fields.write(flag, for: "flag")
        try fields.write(count, for: "count")
        try fields.write(big, for: "big")
        try fields.write(unsigned, for: "unsigned")
        try fields.write(ratio, for: "ratio")
        try fields.write(small, for: "small")
        try fields.write(text, for: "text")
        try fields.writeIfPresent(note, for: "note")
        try fields.write(tags, for: "tags")
    }

    init(fields: FieldReader) throws {
        flag = try fields.read(Bool.self, for: "flag")
        count = try fields.read(Int.self, for: "count")
        big = try fields.read(Int64.self, for: "big")
        unsigned = try fields.read(UInt64.self, for: "unsigned")
        ratio = try fields.read(Double.self, for: "ratio")
        small = try fields.read(Float.self, for: "small")
        text = try fields.read(String.self, for: "text")
        note = try fields.readIfPresent(String.self, for: "note")
        tags = try fields.read([String].self, for: "tags")
    }
}

/// What an `@ObjectList` of the tests holds: FieldCodable and plain-Codable classes alike.
private protocol FCItem: PersistentObject {
    var label: String { get }
}

/// A plain-Codable persistent class holding a nested FieldCodable value.
private final class FCPlainItem: FCItem {
    static let typeName = "fc.PlainItem"
    var label: String
    var at: FCPoint
    init(_ label: String, at: FCPoint) {
        self.label = label
        self.at = at
    }
}

/// A FieldCodable persistent class.
private final class FCCodedItem: FCItem, FieldCodable {
    static let typeName = "fc.CodedItem"
    var label: String
    var at: FCPoint
    init(_ label: String, at: FCPoint) {
        self.label = label
        self.at = at
    }
    func encodeFields(to fields: FieldWriter) throws {
        try fields.write(label, for: "label")
        try fields.write(at, for: "at")
    }
    init(fields: FieldReader) throws {
        label = try fields.read(String.self, for: "label")
        at = try fields.read(FCPoint.self, for: "at")
    }
}

/// A FieldCodable class: a FieldCodable struct, a reference, an optional reference, an `@ObjectList`.
private final class FCHolder: PersistentObject, FieldCodable {
    static let typeName = "fc.Holder"
    var scalars: FCScalars
    var owner: FCPlainItem
    var next: FCHolder?
    @ObjectList var items: [any FCItem]
    init(scalars: FCScalars, owner: FCPlainItem, next: FCHolder?, items: [any FCItem]) {
        self.scalars = scalars
        self.owner = owner
        self.next = next
        self.items = items
    }
    func encodeFields(to fields: FieldWriter) throws {
        try fields.write(scalars, for: "scalars")
        try fields.write(owner, for: "owner")
        try fields.writeIfPresent(next, for: "next")
        try fields.write(_items, for: "items")
    }
    init(fields: FieldReader) throws {
        scalars = try fields.read(FCScalars.self, for: "scalars")
        owner = try fields.read(FCPlainItem.self, for: "owner")
        next = try fields.readIfPresent(FCHolder.self, for: "next")
        _items = try fields.read(ObjectList<any FCItem>.self, for: "items")
    }
}

private let fcScalars = FCScalars(
    flag: true, count: Int.min, big: Int64.max, unsigned: UInt64.max, ratio: -.pi, small: 1.5, text: "héllo ✓",
    note: "n", tags: ["a", "", "ß"])

/// The graph of the byte-identity tests, under one root (so both stores number everything alike): two
/// FieldCodable holders sharing one plain item, which the first also lists.
private func fcGraph() -> FCHolder {
    let shared = FCPlainItem("shared", at: FCPoint(x: 1, y: 2))
    var other = fcScalars
    other.note = nil
    other.tags = []
    other.flag = false
    let second = FCHolder(scalars: other, owner: shared, next: nil, items: [])
    let items: [any FCItem] = [
        shared, FCCodedItem("coded", at: FCPoint(x: -3, y: 0.5)), FCPlainItem("p", at: .init(x: 0, y: 0)),
    ]
    return FCHolder(scalars: fcScalars, owner: shared, next: second, items: items)
}

private let fcGraphTypes: [any PersistentObject.Type] = [FCHolder.self, FCPlainItem.self, FCCodedItem.self]

/// Checks a loaded `fcGraph()`, including that its shared item is one instance.
private func checkGraph(_ root: FCHolder) throws {
    let second = try #require(root.next)
    #expect(root.scalars == fcScalars)
    #expect(second.scalars.note == nil && second.scalars.tags.isEmpty && !second.scalars.flag)
    #expect(second.next == nil && second.items.isEmpty)
    #expect(root.items.map(\.label) == ["shared", "coded", "p"])
    #expect((root.items[1] as? FCCodedItem)?.at == FCPoint(x: -3, y: 0.5))
    #expect(root.owner.at == FCPoint(x: 1, y: 2))
    #expect(root.owner === second.owner && root.items[0] === root.owner, "one instance per id")
}

/// Opens `directory` with the given coding path, runs `body`, closes and verifies the engine store.
/// FieldCodable structs inside collections and optionals, in a FieldCodable class and in a plain Codable
/// one: they go through the collection's Codable code and take the direct path element by element.
private final class FCPolyline: PersistentObject, FieldCodable {
    static let typeName = "fc.Polyline"
    var points: [FCPoint]
    var anchor: FCPoint?
    var missing: FCPoint?
    var named: [String: FCPoint]

    init() {
        points = [FCPoint(x: 1, y: 2), FCPoint(x: -3, y: 4.5)]
        anchor = FCPoint(x: 0, y: 0)
        missing = nil
        named = ["b": FCPoint(x: 2, y: 2), "a": FCPoint(x: 1, y: 1)]
    }

    func encodeFields(to fields: FieldWriter) throws {
        try fields.write(points, for: "points")
        try fields.writeIfPresent(anchor, for: "anchor")
        try fields.writeIfPresent(missing, for: "missing")
        try fields.write(named, for: "named")
    }

    init(fields: FieldReader) throws {
        points = try fields.read([FCPoint].self, for: "points")
        anchor = try fields.readIfPresent(FCPoint.self, for: "anchor")
        missing = try fields.readIfPresent(FCPoint.self, for: "missing")
        named = try fields.read([String: FCPoint].self, for: "named")
    }
}

/// The same fields through Codable only.
private final class FCCodablePolyline: PersistentObject {
    static let typeName = "fc.CodablePolyline"
    var points = [FCPoint(x: 1, y: 2), FCPoint(x: -3, y: 4.5)]
    var anchor: FCPoint? = FCPoint(x: 0, y: 0)
    var missing: FCPoint?
    var named = ["b": FCPoint(x: 2, y: 2), "a": FCPoint(x: 1, y: 1)]
    init() {}
}

/// Optionals written with plain `write(_:for:)` and read with `read(T?.self, for:)`.
private final class FCNote: PersistentObject, FieldCodable {
    static let typeName = "fc.Note"
    var text: String?
    var count: Int?
    var at: FCPoint?

    init(text: String?, count: Int?, at: FCPoint?) {
        self.text = text
        self.count = count
        self.at = at
    }

    func encodeFields(to fields: FieldWriter) throws {
        try fields.write(text, for: "text")
        try fields.write(count, for: "count")
        try fields.write(at, for: "at")
    }

    init(fields: FieldReader) throws {
        text = try fields.read(String?.self, for: "text")
        count = try fields.read(Int?.self, for: "count")
        at = try fields.read(FCPoint?.self, for: "at")
    }
}

/// Swallows the error of a field that cannot be written (a reference to an unregistered class).
private final class FCSwallower: PersistentObject, FieldCodable {
    static let typeName = "fc.Swallower"
    var name = "n"
    var other: FCUnregistered? = FCUnregistered()
    init() {}

    func encodeFields(to fields: FieldWriter) throws {
        try fields.write(name, for: "name")
        try? fields.write(other, for: "other")
    }

    init(fields: FieldReader) throws {
        name = try fields.read(String.self, for: "name")
    }
}

/// The same through Codable, with `try?` around the failing field.
private final class FCCodableSwallower: PersistentObject {
    static let typeName = "fc.CodableSwallower"
    var name = "n"
    var other: FCUnregistered? = FCUnregistered()
    init() {}
    private enum CodingKeys: String, CodingKey { case name, other }

    func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(name, forKey: .name)
        try? container.encodeIfPresent(other, forKey: .other)
    }

    init(from decoder: any Decoder) throws {
        name = try decoder.container(keyedBy: CodingKeys.self).decode(String.self, forKey: .name)
    }
}

/// A persistent class no store registers.
private final class FCUnregistered: PersistentObject {
    static let typeName = "fc.Unregistered"
    init() {}
}

/// `withObjects` with the coding path chosen.
private func withStore<Result>(
    _ directory: TemporaryStore, fieldCoding: Bool, types: [any PersistentObject.Type],
    _ body: (ObjectStore) throws -> Result
) throws -> Result {
    try withObjects(directory, types: types, tuning: ObjectStoreTuning(usesFieldCoding: fieldCoding), body)
}

/// Saves the graph `make` builds, under the root "root" of a fresh store; returns every engine record.
private func savedRecords(
    fieldCoding: Bool, types: [any PersistentObject.Type], _ make: () -> any PersistentObject
) throws -> [Record] {
    try withStore(TemporaryStore("field-coding"), fieldCoding: fieldCoding, types: types) { objects in
        let context = objects.makeContext()
        try context.setRoot(make(), named: "root")
        try context.save()
        return try objects.store.ids().map { try #require(try objects.store.get($0)) }
    }
}

/// Writes an extra field through `encodeFields(to:)` that its `Codable` conformance lacks, and notes
/// whether it was decoded through `init(fields:)`: it shows which path a store takes.
private final class FCSpy: PersistentObject, FieldCodable {
    static let typeName = "fc.Spy"
    var label = "spy"
    var via: String?
    private enum CodingKeys: String, CodingKey { case label }
    init() {}
    func encodeFields(to fields: FieldWriter) throws {
        try fields.write(label, for: "label")
        try fields.write("fields", for: "via")
    }
    init(fields: FieldReader) throws {
        label = try fields.read(String.self, for: "label")
        via = try fields.readIfPresent(String.self, for: "via")
    }
}

/// Version 1 of a record; also the probe of the error tests (see `FCProbe`).
private final class FCRecordV1: PersistentObject, FieldCodable {
    static let typeName = "fc.Record"
    var name: String
    var obsolete: Int
    var value: Double
    init(name: String, obsolete: Int = 7, value: Double = 2.5) {
        self.name = name
        self.obsolete = obsolete
        self.value = value
    }
    func encodeFields(to fields: FieldWriter) throws {
        try fields.write(name, for: "name")
        try fields.write(obsolete, for: "obsolete")
        try fields.write(value, for: "value")
    }
    init(fields: FieldReader) throws {
        name = try fields.read(String.self, for: "name")
        obsolete = try fields.read(Int.self, for: "obsolete")
        value = try fields.read(Double.self, for: "value")
    }
}

/// Version 2: type renamed, `name` renamed `title`, `obsolete` removed, `pages`, `summary`, `links` added.
private final class FCRecordV2: PersistentObject, FieldCodable {
    static let typeName = "fc.Entry"
    static let typeAliases = ["fc.Record"]
    static let fieldAliases = ["title": ["name"]]
    var title: String
    var value: Double
    var pages: Int
    var summary: String?
    @ObjectList var links: [FCRecordV2]
    func encodeFields(to fields: FieldWriter) throws {
        try fields.write(title, for: "title")
        try fields.write(value, for: "value")
        try fields.write(pages, for: "pages")
        try fields.writeIfPresent(summary, for: "summary")
        try fields.write(_links, for: "links")
    }
    init(fields: FieldReader) throws {
        title = try fields.read(String.self, for: "title")
        value = try fields.read(Double.self, for: "value")
        pages = try fields.read(Int.self, for: "pages", default: 1)
        summary = try fields.readIfPresent(String.self, for: "summary")
        _links = try fields.read(ObjectList<FCRecordV2>.self, for: "links")
    }
}

/// An error of user code.
private struct FCUserError: Error {}

/// Reads version-1 records badly, as their `name` says: a required field they lack, `name` as a
/// `Double`, or an error of its own. Its `encodeFields(to:)` always throws.
private final class FCProbe: PersistentObject, FieldCodable {
    static let typeName = "fc.Record"
    var name: String
    init() { name = "new" }
    func encodeFields(to fields: FieldWriter) throws { throw FCUserError() }
    init(fields: FieldReader) throws {
        name = try fields.read(String.self, for: "name")
        switch name {
        case "missing": _ = try fields.read(Int.self, for: "absent")
        case "mismatch": _ = try fields.read(Double.self, for: "name")
        case "nested": _ = try fields.read(FCPoint.self, for: "value")
        default: throw FCUserError()
        }
    }
}

/// Written in order a…e, read out of order and some fields twice.
private final class FCScrambled: PersistentObject, FieldCodable {
    static let typeName = "fc.Scrambled"
    var a = 1
    var b = "bee"
    var c = FCPoint(x: 3, y: 4)
    var d = ["d1", "d2"]
    var e = 2.5
    var again: [String] = []
    var contains: [Bool] = []
    init() {}
    func encodeFields(to fields: FieldWriter) throws {
        try fields.write(a, for: "a")
        try fields.write(b, for: "b")
        try fields.write(c, for: "c")
        try fields.write(d, for: "d")
        try fields.write(e, for: "e")
    }
    init(fields: FieldReader) throws {
        let hasA = fields.contains("a")  // found at the cursor, left unread
        b = try fields.read(String.self, for: "b")  // the cursor skips the value of `a`
        a = try fields.read(Int.self, for: "a")  // behind the cursor
        d = try fields.read([String].self, for: "d")
        c = try fields.read(FCPoint.self, for: "c")
        e = try fields.read(Double.self, for: "e")
        let point = try fields.read(FCPoint.self, for: "c")
        again = [
            try fields.read(String.self, for: "b"), "\(point.x),\(point.y)",
            try fields.read([String].self, for: "d")[1],
        ]
        contains = [hasA, fields.contains("e"), fields.contains("zzz")]
    }
}

/// A FieldCodable base class.
private class FCShape: PersistentObject, FieldCodable {
    class var typeName: String { "fc.Shape" }
    var name: String
    init(name: String) { self.name = name }
    func encodeFields(to fields: FieldWriter) throws { try fields.write(name, for: "name") }
    required init(fields: FieldReader) throws { name = try fields.read(String.self, for: "name") }
}

/// A subclass: its fields and its superclass's in one container, in both coding paths.
private final class FCSquare: FCShape {
    override class var typeName: String { "fc.Square" }
    var side: Double
    private enum CodingKeys: String, CodingKey { case side }
    init(name: String, side: Double) {
        self.side = side
        super.init(name: name)
    }
    override func encodeFields(to fields: FieldWriter) throws {
        try fields.write(side, for: "side")
        try super.encodeFields(to: fields)
    }
    required init(fields: FieldReader) throws {
        side = try fields.read(Double.self, for: "side")
        try super.init(fields: fields)
    }
    override func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(side, forKey: .side)
        try super.encode(to: encoder)
    }
    required init(from decoder: any Decoder) throws {
        side = try decoder.container(keyedBy: CodingKeys.self).decode(Double.self, forKey: .side)
        try super.init(from: decoder)
    }
}

/// A FieldCodable class holding shapes of the hierarchy.
private final class FCCanvas: PersistentObject, FieldCodable {
    static let typeName = "fc.Canvas"
    var shapes: [FCShape]
    init(shapes: [FCShape]) { self.shapes = shapes }
    func encodeFields(to fields: FieldWriter) throws { try fields.write(shapes, for: "shapes") }
    init(fields: FieldReader) throws { shapes = try fields.read([FCShape].self, for: "shapes") }
}

/// A FieldCodable class with a plain (non-optional, unwrapped) reference to a FieldCodable class.
private final class FCLink: PersistentObject, FieldCodable {
    static let typeName = "fc.Link"
    var target: FCCodedItem
    @ObjectList var all: [FCCodedItem]
    init(target: FCCodedItem) {
        self.target = target
        self.all = [target]
    }
    func encodeFields(to fields: FieldWriter) throws {
        try fields.write(target, for: "target")
        try fields.write(_all, for: "all")
    }
    init(fields: FieldReader) throws {
        target = try fields.read(FCCodedItem.self, for: "target")
        _all = try fields.read(ObjectList<FCCodedItem>.self, for: "all")
    }
}

/// Dates through `FieldReader`/`FieldWriter`'s own `Date` methods, and through `Codable`.
private final class FCDated: PersistentObject, FieldCodable {
    static let typeName = "fc.Dated"
    var due = Date(timeIntervalSinceReferenceDate: 812_345_678.25)
    var done: Date? = Date(timeIntervalSinceReferenceDate: -1.5)
    var never: Date?
    init() {}

    func encodeFields(to fields: FieldWriter) throws {
        try fields.write(due, for: "due")
        try fields.writeIfPresent(done, for: "done")
        try fields.writeIfPresent(never, for: "never")
    }

    init(fields: FieldReader) throws {
        due = try fields.read(Date.self, for: "due")
        done = try fields.readIfPresent(Date.self, for: "done")
        never = try fields.readIfPresent(Date.self, for: "never")
    }
}

@Suite struct FieldCodingTests {
    /// A `Date` written by `FieldWriter` is the bytes `Codable` writes, and each path reads the other's.
    @Test func datesTakeTheirCodableForm() throws {
        #expect(
            try savedRecords(fieldCoding: true, types: [FCDated.self], FCDated.init)
                == savedRecords(fieldCoding: false, types: [FCDated.self], FCDated.init))
        for fieldCoding in [true, false] {
            let directory = TemporaryStore("field-coding-dates")
            let stored = FCDated()
            stored.due = Date(timeIntervalSinceReferenceDate: 1e9 + 0.125)
            try withStore(directory, fieldCoding: fieldCoding, types: [FCDated.self]) { objects in
                let context = objects.makeContext()
                try context.setRoot(stored, named: "dated")
                try context.save()
            }
            try withStore(directory, fieldCoding: !fieldCoding, types: [FCDated.self]) { objects in
                let dated = try #require(try objects.makeContext().root(named: "dated", as: FCDated.self))
                #expect(dated.due == stored.due && dated.done == stored.done && dated.never == nil)
            }
        }
    }

    /// Both coding paths write the same engine records: payloads, reference lists, field-name records.
    @Test func bothPathsWriteIdenticalRecords() throws {
        let fast = try savedRecords(fieldCoding: true, types: fcGraphTypes, fcGraph)
        let plain = try savedRecords(fieldCoding: false, types: fcGraphTypes, fcGraph)
        #expect(fast.count == 6, "5 objects and a field-name record")
        #expect(fast.map(\.id) == plain.map(\.id))
        for (one, other) in zip(fast, plain) {
            #expect(one == other, "record \(one.id): payload, references, type tag and pin flag")
        }
    }

    /// The switch really selects the path, when writing and when reading (so the test above compares two
    /// different coders).
    @Test func usesFieldCodingSelectsThePath() throws {
        for writeFast in [true, false] {
            let directory = TemporaryStore("field-coding-spy")
            let id = try withStore(directory, fieldCoding: writeFast, types: [FCSpy.self]) { objects in
                let context = objects.makeContext()
                let id = try context.insert(FCSpy())
                try context.save()
                return id
            }
            for readFast in [true, false] {
                let spy = try withStore(directory, fieldCoding: readFast, types: [FCSpy.self]) { objects in
                    try #require(try objects.makeContext().object(id: id, as: FCSpy.self))
                }
                #expect(spy.label == "spy")
                #expect(spy.via == (writeFast && readFast ? "fields" : nil), "written \(writeFast), read \(readFast)")
            }
        }
    }

    /// A store written by either path loads equal values through the other (two FieldCodable holders
    /// sharing one instance of the item they both reference), and re-saving writes nothing.
    @Test(arguments: [true, false]) func crossReading(writtenWithFieldCoding: Bool) throws {
        let directory = TemporaryStore("field-coding-cross")
        try withStore(directory, fieldCoding: writtenWithFieldCoding, types: fcGraphTypes) { objects in
            let context = objects.makeContext()
            try context.setRoot(fcGraph(), named: "root")
            #expect(try context.save().written == 5)
        }
        for fieldCoding in [!writtenWithFieldCoding, writtenWithFieldCoding] {
            try withStore(directory, fieldCoding: fieldCoding, types: fcGraphTypes) { objects in
                let context = objects.makeContext()
                let root = try #require(try context.root(named: "root", as: FCHolder.self))
                try checkGraph(root)
                let plainItems = try context.objects(of: FCPlainItem.self)
                #expect(plainItems.count == 2 && plainItems.contains { $0 === root.owner }, "queries share it too")
                let report = try context.save()
                #expect(report.written == 0 && report.unchanged == 5, "\(report)")
            }
        }
    }

    /// Old records (written by either path) read through FieldReader: a renamed type and field, a removed
    /// field skipped, added fields defaulted; a re-save migrates the record.
    @Test(arguments: [true, false]) func schemaEvolution(writtenWithFieldCoding: Bool) throws {
        let directory = TemporaryStore("field-coding-evolution")
        let id = try withStore(directory, fieldCoding: writtenWithFieldCoding, types: [FCRecordV1.self]) { objects in
            let context = objects.makeContext()
            let id = try context.insert(FCRecordV1(name: "old", value: -1.25))
            try context.save()
            return id
        }
        try withStore(directory, fieldCoding: true, types: [FCRecordV2.self]) { objects in
            let context = objects.makeContext()
            let record = try #require(try context.object(id: id, as: FCRecordV2.self))
            #expect(record.title == "old" && record.value == -1.25)
            #expect(record.pages == 1 && record.summary == nil && record.links.isEmpty)
            #expect(try context.count(of: FCRecordV2.self) == 1)
            record.pages = 3
            record.summary = "new"
            try context.save()
        }
        try withStore(directory, fieldCoding: true, types: [FCRecordV2.self]) { objects in
            let record = try #require(try objects.makeContext().object(id: id, as: FCRecordV2.self))
            #expect(record.title == "old" && record.value == -1.25 && record.pages == 3 && record.summary == "new")
            let stored = try #require(try objects.store.get(id))
            #expect(stored.typeTag == TypeNames.tag(for: "fc.Entry"), "rewritten under the new type name")
        }
    }

    /// Failures in `init(fields:)` and `encodeFields(to:)` are ObjectStoreErrors naming type, field, object.
    @Test func errorsNameTypeFieldAndObject() throws {
        let directory = TemporaryStore("field-coding-errors")
        let names = ["missing", "mismatch", "nested", "throw"]
        let ids = try withStore(directory, fieldCoding: true, types: [FCRecordV1.self]) { objects in
            let context = objects.makeContext()
            let ids = try names.map { try context.insert(FCRecordV1(name: $0)) }
            try context.save()
            return ids
        }
        try withStore(directory, fieldCoding: true, types: [FCProbe.self]) { objects in
            func failure(_ index: Int) throws -> ObjectStoreError {
                do {
                    _ = try objects.makeContext().object(id: ids[index], as: FCProbe.self)
                } catch {
                    #expect(error.typeName == "fc.Record" && error.objectID == ids[index], "\(error)")
                    return error
                }
                Issue.record("loading \(names[index]) did not fail")
                return ObjectStoreError(.store, "none")
            }
            let missing = try failure(0)
            #expect(missing.code == .missingField && missing.field == "absent", "\(missing)")
            let mismatch = try failure(1)
            #expect(mismatch.code == .typeMismatch && mismatch.field == "name", "\(mismatch)")
            let nested = try failure(2)
            #expect(nested.code == .typeMismatch && nested.field == "value", "\(nested)")
            let thrown = try failure(3)
            #expect(thrown.message.contains("FCUserError") && thrown.underlying != nil, "\(thrown)")

            let context = objects.makeContext()
            try context.insert(FCProbe())
            #expect {
                try context.save()
            } throws: { error in
                guard let error = error as? ObjectStoreError else { return false }
                return error.code == .encodingFailed && error.typeName == "fc.Record"
            }
        }
    }

    /// Fields read in another order than written, and twice, read right.
    @Test func fieldsReadOutOfOrderAndTwice() throws {
        let directory = TemporaryStore("field-coding-order")
        try withStore(directory, fieldCoding: true, types: [FCScrambled.self]) { objects in
            let original = FCScrambled()
            original.a = -9
            original.c = FCPoint(x: 5, y: -6)
            let context = objects.makeContext()
            let id = try context.insert(original)
            try context.save()
            let loaded = try #require(try objects.makeContext().object(id: id, as: FCScrambled.self))
            #expect(loaded.a == -9 && loaded.b == "bee" && loaded.c == FCPoint(x: 5, y: -6))
            #expect(loaded.d == ["d1", "d2"] && loaded.e == 2.5)
            #expect(loaded.again == ["bee", "5.0,-6.0", "d2"])
            #expect(loaded.contains == [true, true, false])
        }
    }

    /// A FieldCodable class written as a plain field of another FieldCodable class is a reference, as
    /// under Codable: the same records, and the shared instance on load, whichever path wrote the store.
    @Test func plainFieldOfFieldCodableClassIsAReference() throws {
        let types: [any PersistentObject.Type] = [FCLink.self, FCCodedItem.self]
        var records: [[Record]] = []
        for fieldCoding in [false, true] {
            let directory = TemporaryStore("field-coding-link")
            records.append(
                try withStore(directory, fieldCoding: fieldCoding, types: types) { objects in
                    let context = objects.makeContext()
                    try context.setRoot(FCLink(target: FCCodedItem("t", at: FCPoint(x: 1, y: 1))), named: "root")
                    try context.save()
                    return try objects.store.ids().map { try #require(try objects.store.get($0)) }
                })
            try withStore(directory, fieldCoding: true, types: types) { objects in
                let loaded = try #require(try objects.makeContext().root(named: "root", as: FCLink.self))
                #expect(loaded.target === loaded.all.first)
            }
        }
        #expect(records[0].count == 3, "link, item and field-name record")
        #expect(records[1] == records[0])
    }

    /// FieldCodable structs in arrays, optionals and dictionaries: the same bytes both ways, and back.
    @Test func fieldCodableValuesInCollections() throws {
        for type in [FCPolyline.self, FCCodablePolyline.self] as [any PersistentObject.Type] {
            let make: () -> any PersistentObject = {
                type == FCPolyline.self ? FCPolyline() : FCCodablePolyline()
            }
            #expect(
                try savedRecords(fieldCoding: true, types: [type], make)
                    == savedRecords(fieldCoding: false, types: [type], make))
        }
        for fieldCoding in [true, false] {
            let directory = TemporaryStore("field-coding-collections")
            try withStore(directory, fieldCoding: fieldCoding, types: [FCPolyline.self]) { objects in
                let context = objects.makeContext()
                try context.setRoot(FCPolyline(), named: "line")
                try context.save()
            }
            try withStore(directory, fieldCoding: !fieldCoding, types: [FCPolyline.self]) { objects in
                let context = objects.makeContext()
                let line = try #require(try context.root(named: "line", as: FCPolyline.self))
                #expect(line.points == [FCPoint(x: 1, y: 2), FCPoint(x: -3, y: 4.5)])
                #expect(line.anchor == FCPoint(x: 0, y: 0) && line.missing == nil)
                #expect(line.named == ["a": FCPoint(x: 1, y: 1), "b": FCPoint(x: 2, y: 2)])
                #expect(try context.save().written == 0)
            }
        }
    }

    /// Optionals written with `write(_:for:)` are left out when nil, as synthesized Codable does, and read
    /// back as nil or their value.
    @Test func optionalsAreWrittenOnlyWhenPresent() throws {
        // A new instance for each store: an instance belongs to the context that first saved it.
        let makers: [() -> FCNote] = [
            { FCNote(text: nil, count: nil, at: nil) }, { FCNote(text: "t", count: -4, at: FCPoint(x: 1, y: 2)) },
        ]
        for make in makers {
            let note = make()
            let records = try [true, false].map { fieldCoding in
                try savedRecords(fieldCoding: fieldCoding, types: [FCNote.self]) { make() }
            }
            #expect(records[0] == records[1])
            let directory = TemporaryStore("field-coding-optionals")
            let id = try withStore(directory, fieldCoding: true, types: [FCNote.self]) { objects in
                let context = objects.makeContext()
                let id = try context.insert(note)
                try context.save()
                return id
            }
            try withStore(directory, fieldCoding: true, types: [FCNote.self]) { objects in
                let loaded = try #require(try objects.makeContext().object(id: id, as: FCNote.self))
                #expect(loaded.text == note.text && loaded.count == note.count && loaded.at == note.at)
            }
        }
    }

    /// A field whose value failed to encode, its error swallowed with `try?`, fails the save instead of
    /// storing a payload that cannot be read back; on both paths.
    @Test func aSwallowedFieldErrorFailsTheSave() throws {
        for type in [FCSwallower.self, FCCodableSwallower.self] as [any PersistentObject.Type] {
            let directory = TemporaryStore("field-coding-swallowed")
            try withStore(directory, fieldCoding: true, types: [type]) { objects in
                let context = objects.makeContext()
                try context.insert(type == FCSwallower.self ? FCSwallower() : FCCodableSwallower())
                #expect {
                    try context.save()
                } throws: { error in
                    (error as? ObjectStoreError)?.code == .unregisteredClass
                }
                #expect(try objects.store.ids().count <= 1, "nothing but a field-name record was written")
            }
        }
    }

    /// A FieldCodable class hierarchy round-trips as its subclasses, and both paths write the same bytes.
    @Test func subclassesRoundTrip() throws {
        let types: [any PersistentObject.Type] = [FCCanvas.self, FCShape.self, FCSquare.self]
        func canvas() -> FCCanvas { FCCanvas(shapes: [FCShape(name: "blob"), FCSquare(name: "sq", side: 4)]) }
        #expect(
            try savedRecords(fieldCoding: true, types: types, canvas)
                == savedRecords(fieldCoding: false, types: types, canvas))
        for fieldCoding in [true, false] {
            let directory = TemporaryStore("field-coding-hierarchy")
            try withStore(directory, fieldCoding: fieldCoding, types: types) { objects in
                let context = objects.makeContext()
                try context.setRoot(canvas(), named: "canvas")
                try context.save()
            }
            try withStore(directory, fieldCoding: true, types: types) { objects in
                let context = objects.makeContext()
                let loaded = try #require(try context.root(named: "canvas", as: FCCanvas.self))
                #expect(loaded.shapes.map(\.name) == ["blob", "sq"])
                #expect(!(loaded.shapes[0] is FCSquare))
                #expect((loaded.shapes[1] as? FCSquare)?.side == 4)
                #expect(try context.count(of: FCShape.self) == 2 && context.count(of: FCSquare.self) == 1)
                #expect(try context.save().written == 0)
            }
        }
    }
}
