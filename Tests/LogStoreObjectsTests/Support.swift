import Foundation
import LogStore
import LogStoreExamples
import LogStoreObjects
import TestSupport
import Testing

/// Every class the tests register.
let allTestTypes: [any PersistentObject.Type] =
    drawingTypes + geometryTypes + recordTypes + [Node.self, Note.self, Bag.self]

/// The protocols the tests query by.
let allTestProtocols = [QueryableProtocol((any Shape).self) { $0 is any Shape.Type }]

/// Opens an object store in `directory` with small segments, registering `types` and the protocols the
/// tests query by; the directory's teardown closes it if it is still open.
func openObjects(
    _ directory: TemporaryStore, types: [any PersistentObject.Type] = allTestTypes,
    tuning: ObjectStoreTuning = ObjectStoreTuning()
) throws -> ObjectStore {
    let objects = try ObjectStore.open(
        at: directory.path, options: StoreOptions(segmentSize: 1 << 20, fsyncPolicy: .never), types: types,
        protocols: allTestProtocols, tuning: tuning)
    return directory.closesAtTeardown(objects) { try $0.close() }
}

/// Runs `body` with a freshly opened object store and closes it afterwards (the directory's teardown
/// verifies the engine store).
func withObjects<Result>(
    _ directory: TemporaryStore, types: [any PersistentObject.Type] = allTestTypes,
    tuning: ObjectStoreTuning = ObjectStoreTuning(), _ body: (ObjectStore) throws -> Result
) throws -> Result {
    let objects = try openObjects(directory, types: types, tuning: tuning)
    let result: Result
    do {
        result = try body(objects)
    } catch {
        try? objects.close()
        throw error
    }
    try objects.close()
    return result
}

/// A general-purpose graph node: a value, eager links (which may form cycles) and an optional lazy link.
final class Node: PersistentObject {
    static let typeName = "test.Node"
    var label: String
    @ObjectRef var next: Node?
    @ObjectList var links: [Node]

    init(_ label: String) {
        self.label = label
    }
}

/// An object with value fields of many kinds.
final class Note: PersistentObject {
    static let typeName = "test.Note"
    var title: String
    var created: Date
    var data: Data
    var identifier: UUID
    var link: URL
    var counts: [String: Int]
    var tags: Set<String>
    var flags: [Bool]
    var optionalText: String?
    var nested: [[Int8]]
    var kind: Kind
    var amount: Decimal

    enum Kind: Codable, Equatable {
        case plain
        case reminder(at: Date)
        case tagged(String, priority: Int)
    }

    init() {
        title = "groceries"
        created = Date(timeIntervalSince1970: 1_700_000_000.25)
        data = Data([0, 1, 2, 255])
        identifier = UUID(uuidString: "E621E1F8-C36C-495A-93FC-0C247A3E6E5F") ?? UUID()
        link = URL(string: "https://example.com/a?b=c") ?? URL(fileURLWithPath: "/")
        counts = ["apples": 3, "pears": -2]
        tags = ["food", "weekly"]
        flags = [true, false, true]
        optionalText = nil
        nested = [[1, -2], [], [127]]
        kind = .tagged("x", priority: 2)
        amount = Decimal(string: "12.345") ?? 0
    }
}

/// A dictionary of persistent objects, by name.
final class Bag: PersistentObject {
    static let typeName = "test.Bag"
    var items: [String: Node]
    init(items: [String: Node]) { self.items = items }
}
