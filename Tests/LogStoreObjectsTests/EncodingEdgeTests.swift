import LogStore
import LogStoreObjects
import TestSupport
import Testing

/// Values whose Codable conformances use the Encoder API in less common ways.
final class Edges: PersistentObject {
    static let typeName = "test.Edges"
    var optionalMaps: [[String: Int]?]
    var wrapped: Tags
    var maybeSet: Set<String>?
    var chain: Chain

    init(optionalMaps: [[String: Int]?], wrapped: Tags, maybeSet: Set<String>?, chain: Chain) {
        self.optionalMaps = optionalMaps
        self.wrapped = wrapped
        self.maybeSet = maybeSet
        self.chain = chain
    }
}

/// A newtype that encodes its set through a single-value container.
struct Tags: Codable, Equatable {
    var set: Set<String>
    init(_ set: Set<String>) { self.set = set }
    init(from decoder: any Decoder) throws { set = try decoder.singleValueContainer().decode(Set<String>.self) }
    func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(set)
    }
}

/// A recursive value: each link nests two containers.
indirect enum Chain: Codable, Equatable {
    case end
    case link(Chain)

    init(length: Int) {
        var chain = Chain.end
        for _ in 0..<length { chain = .link(chain) }
        self = chain
    }
}

/// Uses `superEncoder()` of an unkeyed container, which the format cannot store in order.
final class UnkeyedSuper: PersistentObject {
    static let typeName = "test.UnkeyedSuper"
    var a = 1
    var b = 2
    init() {}
    init(from decoder: any Decoder) throws {
        var container = try decoder.unkeyedContainer()
        a = try container.superDecoder().singleValueContainer().decode(Int.self)
        b = try container.decode(Int.self)
    }
    func encode(to encoder: any Encoder) throws {
        var container = encoder.unkeyedContainer()
        let superEncoder = container.superEncoder()
        try container.encode(b)
        var single = superEncoder.singleValueContainer()
        try single.encode(a)
    }
}

@Suite struct EncodingEdgeTests {
    let types: [any PersistentObject.Type] = [Edges.self, UnkeyedSuper.self]

    @Test func specialValuesThroughSingleValueContainersRoundTrip() throws {
        let directory = TemporaryStore("edges")
        try withObjects(directory, types: types) { objects in
            let context = objects.makeContext()
            let edges = Edges(
                optionalMaps: [["a": 1, "b": 2], nil, [:]], wrapped: Tags(["x", "y", "z"]), maybeSet: ["only"],
                chain: Chain(length: 100))
            let id = try context.insert(edges)
            try context.save()
            let loaded = try #require(try objects.makeContext().object(id: id, as: Edges.self))
            #expect(loaded.optionalMaps == [["a": 1, "b": 2], nil, [:]])
            #expect(loaded.wrapped == Tags(["x", "y", "z"]) && loaded.maybeSet == ["only"])
            #expect(loaded.chain == Chain(length: 100))
            #expect(try objects.makeContext().save().written == 0)
        }
    }

    @Test func valuesTooDeepToReadAreRefusedWhenSaving() throws {
        let directory = TemporaryStore("deep")
        try withObjects(directory, types: types) { objects in
            let context = objects.makeContext()
            try context.insert(Edges(optionalMaps: [], wrapped: Tags([]), maybeSet: nil, chain: Chain(length: 300)))
            #expect {
                try context.save()
            } throws: { error in
                (error as? ObjectStoreError)?.code == .encodingFailed && "\(error)".contains("deep")
            }
            #expect(try context.count() == 0, "nothing was written")
        }
    }

    @Test func unkeyedSuperEncoderIsRefusedNotReordered() throws {
        let directory = TemporaryStore("unkeyed-super")
        try withObjects(directory, types: types) { objects in
            let context = objects.makeContext()
            try context.insert(UnkeyedSuper())
            #expect { try context.save() } throws: { ($0 as? ObjectStoreError)?.code == .encodingFailed }
        }
    }
}
