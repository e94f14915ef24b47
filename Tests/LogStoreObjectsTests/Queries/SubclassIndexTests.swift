import Foundation
import LogStore
import TestSupport
import Testing

@_spi(Testing) @testable import LogStoreObjects

/// A part with an index on its rank; ``Gear`` adds an index of its own.
class Part: PersistentObject {
    class var typeName: String { "test.Part" }
    class var indexes: [IndexDefinition] { [.ordered(\Part.rank, field: "rank")] }
    var name: String
    var rank: Int
    init(name: String, rank: Int) {
        self.name = name
        self.rank = rank
    }
}

/// A subclass that declares its own indexes besides the one it inherits: its objects are in both `Part`'s
/// indexes and its own.
final class Gear: Part {
    override class var typeName: String { "test.Gear" }
    override class var indexes: [IndexDefinition] {
        [.ordered(\Gear.rank, field: "rank"), .ordered(\Gear.teeth, field: "teeth")]
    }
    var teeth: Int

    init(name: String, rank: Int, teeth: Int) {
        self.teeth = teeth
        super.init(name: name, rank: rank)
    }

    private enum CodingKeys: String, CodingKey { case teeth }

    required init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        teeth = try container.decode(Int.self, forKey: .teeth)
        try super.init(from: decoder)
    }

    override func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(teeth, forKey: .teeth)
        try super.encode(to: encoder)
    }
}

/// A class and its subclass each with indexes of their own: every save keeps both up to date.
@Suite struct SubclassIndexTests {
    let types: [any PersistentObject.Type] = [Part.self, Gear.self]

    private func names(_ context: ObjectContext, rank: Int) throws -> [String] {
        let descriptor = FetchDescriptor<Part>(predicate: #Predicate { $0.rank == rank })
        #expect(try context.explain(descriptor).index == "rank")
        return try context.fetch(descriptor).map(\.name).sorted()
    }

    private func gearNames(_ context: ObjectContext, teeth: Int) throws -> [String] {
        let descriptor = FetchDescriptor<Gear>(predicate: #Predicate { $0.teeth == teeth })
        #expect(try context.explain(descriptor).index == "teeth")
        return try context.fetch(descriptor).map(\.name).sorted()
    }

    private func fill(_ objects: ObjectStore) throws {
        let context = objects.makeContext()
        for number in 0..<20 {
            try context.insert(Part(name: "p\(number)", rank: number % 4))
            try context.insert(Gear(name: "g\(number)", rank: number % 4, teeth: number % 3))
        }
        try context.save()
    }

    @Test func aSubclassChangeReachesTheSuperclassIndexAndItsOwn() throws {
        let directory = TemporaryStore("subclass-indexes")
        try withObjects(directory, types: types) { objects in
            try fill(objects)
            let context = objects.makeContext()
            // Both indexes built before the change, so the change reaches them through the commit hooks.
            #expect(try names(context, rank: 1).count == 10)
            #expect(try gearNames(context, teeth: 2).count == 6)
            let gears = try context.objects(of: Gear.self).filter { $0.name == "g1" || $0.name == "g2" }
            for gear in gears {
                gear.rank = 3
                gear.teeth = 7
            }
            try context.save()
            let fresh = objects.makeContext()
            #expect(!(try names(fresh, rank: 1)).contains("g1"))
            #expect(
                try names(fresh, rank: 3).filter { $0.hasPrefix("g") } == ["g1", "g11", "g15", "g19", "g2", "g3", "g7"])
            #expect(try gearNames(fresh, teeth: 7) == ["g1", "g2"])
            let deleted = try #require(try fresh.objects(of: Gear.self).first { $0.name == "g3" })
            fresh.delete(deleted)
            try fresh.save()
            #expect(!(try names(objects.makeContext(), rank: 3)).contains("g3"))
            #expect(!(try gearNames(objects.makeContext(), teeth: 0)).contains("g3"))
        }
        // Each class's file is read at the next open and answers as the records do; verify finds no damage.
        try withObjects(directory, types: types) { objects throws in
            let context = objects.makeContext()
            #expect(
                try names(context, rank: 3).filter { $0.hasPrefix("g") } == ["g1", "g11", "g15", "g19", "g2", "g7"])
            #expect(try gearNames(context, teeth: 7) == ["g1", "g2"])
            #expect(objects.indexFilesRead == 2)
            #expect(objects.indexFileNotes.isEmpty, "\(objects.indexFileNotes)")
        }
        let store = try Store.open(at: directory.path, options: StoreOptions(createIfMissing: false, readOnly: true))
        defer { try? store.close() }
        let reports = try IndexFileReport.reports(of: store)
        #expect(reports.count == 2)
        for report in reports {
            #expect(report.problems.isEmpty && report.notes.isEmpty && report.staleObjects == 0, "\(report)")
        }
        #expect(Set(reports.map(\.objects)) == [39, 19])
    }
}
