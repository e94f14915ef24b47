import LogStore
import LogStoreObjects
import TestSupport
import Testing

/// A persistent class usable as a set element and a dictionary key (equal when identical).
final class Tag: PersistentObject, Hashable {
    static let typeName = "test.Tag"
    var name: String
    init(_ name: String) { self.name = name }
    static func == (lhs: Tag, rhs: Tag) -> Bool { lhs === rhs }
    func hash(into hasher: inout Hasher) { hasher.combine(ObjectIdentifier(self)) }
}

/// Unordered collections holding references: as values, as keys and as elements.
final class Tagging: PersistentObject {
    static let typeName = "test.Tagging"
    var byName: [String: Tag]
    var counts: [Tag: Int]
    var set: Set<Tag>
    init(byName: [String: Tag], counts: [Tag: Int], set: Set<Tag>) {
        self.byName = byName
        self.counts = counts
        self.set = set
    }
}

@Suite struct CanonicalEncodingTests {
    let types: [any PersistentObject.Type] = [Tag.self, Tagging.self]

    /// The same content built in different orders (and capacities, so the iteration orders differ)
    /// encodes to the same bytes and the same reference list; reloaded, it re-encodes unchanged.
    @Test func unorderedCollectionsOfReferencesEncodeTheSameWhateverTheirOrder() throws {
        let directory = TemporaryStore("canonical")
        try withObjects(directory, types: types) { objects in
            let context = objects.makeContext()
            let tags = (0..<40).map { Tag("t\($0)") }
            func tagging(_ order: [Int], capacity: Int) -> Tagging {
                var byName = [String: Tag](minimumCapacity: capacity)
                var counts = [Tag: Int](minimumCapacity: capacity)
                var set = Set<Tag>(minimumCapacity: capacity)
                for index in order {
                    byName["n\(index)"] = tags[index]
                    counts[tags[index]] = index
                    set.insert(tags[index])
                }
                return Tagging(byName: byName, counts: counts, set: set)
            }
            let forward = tagging(Array(0..<40), capacity: 0)
            let backward = tagging(Array((0..<40).reversed()), capacity: 500)
            // The tags get their ids first, so both objects refer to the same ids.
            for tag in tags { try context.insert(tag) }
            let first = try context.insert(forward)
            let second = try context.insert(backward)
            try context.save()

            let one = try #require(try objects.store.get(first))
            let other = try #require(try objects.store.get(second))
            #expect(one.payload == other.payload)
            #expect(one.references == other.references)
            #expect(Set(one.references) == Set(try tags.map { try #require(context.id(of: $0)) }))

            for _ in 0..<3 {
                let fresh = objects.makeContext()
                let loaded = try #require(try fresh.object(id: first, as: Tagging.self))
                #expect(loaded.byName.count == 40 && loaded.counts.count == 40 && loaded.set.count == 40)
                #expect(loaded.byName["n7"]?.name == "t7")
                #expect(loaded.counts.first { $0.key.name == "t9" }?.value == 9)
                #expect(try fresh.save().written == 0, "a reloaded object encodes as it was stored")
            }
        }
    }
}
