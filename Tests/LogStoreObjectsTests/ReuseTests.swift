import LogStore
import LogStoreObjects
import TestSupport
import Testing

/// A value that asks for its keyed container twice, and uses the first one after the second.
struct Pair: Codable, Equatable {
    var number: Int
    var name: String
    var inner: [Pair]

    init(_ number: Int, _ name: String, inner: [Pair] = []) {
        self.number = number
        self.name = name
        self.inner = inner
    }

    private enum CodingKeys: String, CodingKey { case number, name, inner }

    init(from decoder: any Decoder) throws {
        let first = try decoder.container(keyedBy: CodingKeys.self)
        let second = try decoder.container(keyedBy: CodingKeys.self)
        name = try second.decode(String.self, forKey: .name)
        inner = try second.decode([Pair].self, forKey: .inner)
        number = try first.decode(Int.self, forKey: .number)
    }

    func encode(to encoder: any Encoder) throws {
        var first = encoder.container(keyedBy: CodingKeys.self)
        var second = encoder.container(keyedBy: CodingKeys.self)
        try second.encode(name, forKey: .name)
        try second.encode(inner, forKey: .inner)
        try first.encode(number, forKey: .number)
    }
}

/// Sibling and nested values of one key type, the case pooled containers must keep apart.
final class Pairs: PersistentObject {
    static let typeName = "test.Pairs"
    var left: Pair
    var right: Pair
    var all: [Pair]

    init(left: Pair, right: Pair, all: [Pair]) {
        self.left = left
        self.right = right
        self.all = all
    }
}

@Suite struct ReuseTests {
    @Test func pooledContainersKeepSiblingAndNestedValuesApart() throws {
        let directory = TemporaryStore("pooled")
        try withObjects(directory, types: [Pairs.self]) { objects in
            let context = objects.makeContext()
            var ids: [ObjectID] = []
            for index in 0..<50 {
                let nested = Pair(
                    index, "n\(index)", inner: [Pair(index + 1, "a"), Pair(index + 2, "b", inner: [Pair(-1, "c")])])
                ids.append(
                    try context.insert(
                        Pairs(left: Pair(index, "left"), right: nested, all: [nested, Pair(7, "seven"), nested])))
            }
            try context.save()
            let fresh = objects.makeContext()
            for (index, id) in ids.enumerated() {
                let loaded = try #require(try fresh.object(id: id, as: Pairs.self))
                let nested = Pair(
                    index, "n\(index)", inner: [Pair(index + 1, "a"), Pair(index + 2, "b", inner: [Pair(-1, "c")])])
                #expect(loaded.left == Pair(index, "left"))
                #expect(loaded.right == nested)
                #expect(loaded.all == [nested, Pair(7, "seven"), nested])
            }
            #expect(try objects.makeContext().save().written == 0, "re-encoding gives the same bytes")
        }
    }
}
