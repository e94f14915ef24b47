import Foundation
import LogStore
import LogStoreExamples
import Testing

@testable import LogStoreObjects

/// The identity cache's table of slots by id: dense pages, far-apart ids, removal and filtering.
@Suite struct SlotTableTests {
    private func slot(_ id: UInt64) -> ObjectSlot {
        ObjectSlot(id: ObjectID(id), object: nil, storedHash: nil, pinned: false)
    }

    /// Agrees with a dictionary through inserts, replacements and removals of dense and far-apart ids,
    /// including a far id whose page the dense table later grows to cover.
    @Test func behavesLikeADictionary() {
        var table = SlotTable()
        var model: [ObjectID: ObjectSlot] = [:]
        var generator = SystemRandomNumberGenerator()
        let far: [UInt64] = [1 << 40, 1 << 40 + 1, 300_000, 300_063, 5_000_000, UInt64.max]
        var ids: [UInt64] = Array(1...3_000) + far
        ids.shuffle(using: &generator)
        for id in ids {
            let value = slot(id)
            table[ObjectID(id)] = value
            model[ObjectID(id)] = value
        }
        for id in ids where id % 3 == 0 {
            table[ObjectID(id)] = nil
            model[ObjectID(id)] = nil
        }
        for id in ids where id % 5 == 0 {
            let value = slot(id)
            table[ObjectID(id)] = value
            model[ObjectID(id)] = value
        }
        // Dense pages up to 300,063 now: the page the far id 300,000 went to must still be found.
        for id in stride(from: UInt64(3_001), through: 300_100, by: 64) {
            let value = slot(id)
            table[ObjectID(id)] = value
            model[ObjectID(id)] = value
        }
        #expect(table.count == model.count)
        for (id, value) in model { #expect(table[id] === value, "id \(id)") }
        for id in [UInt64(0), 3, 9, 1 << 41, 299_999] where model[ObjectID(id)] == nil {
            #expect(table[ObjectID(id)] == nil)
        }
        #expect(Set(table.entries.map(\.0)) == Set(model.keys))
        #expect(table.entries.allSatisfy { id, slot in slot.id == id })
    }

    /// Random inserts, replacements, removals, copies and filters agree with a `Dictionary` after every
    /// step, with ids scattered one per page number (a query's results: each held alone, without a page),
    /// neighbours that turn a lone slot into a page, and far-apart ids. The seed is printed; set
    /// `LOGSTORE_SEED` to replay one.
    @Test func loneSlotsAndPagesAgreeWithADictionary() {
        let seed =
            ProcessInfo.processInfo.environment["LOGSTORE_SEED"].flatMap(UInt64.init) ?? UInt64.random(in: 1...1 << 40)
        print("SlotTableTests seed \(seed) (replay with LOGSTORE_SEED=\(seed))")
        var random = SplitMix64(seed: seed)
        var table = SlotTable()
        var model: [ObjectID: ObjectSlot] = [:]
        var copies: [(SlotTable, [ObjectID: ObjectSlot])] = []
        func randomID() -> UInt64 {
            switch random.next() % 8 {
            case 0: [0, 15, 16, 17, UInt64.max][Int(random.next() % 5)]
            case 1: 1 << 40 + random.next() % 64
            case 2, 3: random.next() % 2_000  // neighbours: shared page numbers
            default: (random.next() % 50_000) * 16 + random.next() % 16  // one per page number, mostly
            }
        }
        func check(_ table: SlotTable, _ model: [ObjectID: ObjectSlot], _ context: String) {
            #expect(table.count == model.count, "\(context)")
            for (id, value) in model { #expect(table[id] === value, "\(context), id \(id)") }
            #expect(Set(table.entries.map(\.0)) == Set(model.keys), "\(context)")
        }
        for step in 0..<30_000 {
            let id = ObjectID(randomID())
            switch random.next() % 10 {
            case 0...4:
                let value = slot(id.rawValue)
                table[id] = value
                model[id] = value
            case 5, 6:
                table[id] = nil
                model[id] = nil
            case 7:
                if copies.count < 4 { copies.append((table, model)) }
            default:
                #expect(table[id] === model[id], "step \(step), id \(id), seed \(seed)")
            }
            #expect(table.count == model.count, "step \(step), seed \(seed)")
            if step % 4_999 == 0 {
                let modulus = UInt64(2 + random.next() % 3)
                table.filter { $0.id.rawValue % modulus != 0 }
                model = model.filter { $0.key.rawValue % modulus != 0 }
                check(table, model, "after a filter, step \(step), seed \(seed)")
            }
        }
        check(table, model, "end, seed \(seed)")
        // Copies taken along the way still hold what they held, whatever the original did since.
        for (index, (copy, expected)) in copies.enumerated() { check(copy, expected, "copy \(index), seed \(seed)") }
        for id in Array(model.keys) { table[id] = nil }
        #expect(table.count == 0 && table.entries.isEmpty)
    }

    /// A lone slot becomes a page when a neighbour arrives, and a copy taken before keeps the lone slot.
    @Test func aLoneSlotBecomesAPageWithItsNeighbour() {
        var table = SlotTable()
        let first = slot(160_001)
        table[ObjectID(160_001)] = first
        let copy = table
        let neighbour = slot(160_002)
        table[ObjectID(160_002)] = neighbour
        #expect(table[ObjectID(160_001)] === first && table[ObjectID(160_002)] === neighbour)
        #expect(table[ObjectID(160_003)] == nil && table.count == 2)
        #expect(copy[ObjectID(160_001)] === first && copy[ObjectID(160_002)] == nil && copy.count == 1)
        table[ObjectID(160_001)] = nil
        table[ObjectID(160_002)] = nil
        #expect(table.count == 0 && table[ObjectID(160_002)] == nil)
    }

    /// Filtering keeps exactly the chosen slots, and the table keeps working afterwards.
    @Test func filterKeepsTheChosenSlots() {
        var table = SlotTable()
        for id in UInt64(1)...1_000 { table[ObjectID(id)] = slot(id) }
        table[ObjectID(1 << 50)] = slot(1 << 50)
        table.filter { $0.id.rawValue % 10 == 0 }
        #expect(table.count == 100)
        #expect(table[ObjectID(10)]?.id == ObjectID(10) && table[ObjectID(11)] == nil)
        #expect(table[ObjectID(1 << 50)] == nil)
        table[ObjectID(11)] = slot(11)
        #expect(table.count == 101 && table[ObjectID(11)]?.id == ObjectID(11))
    }

    /// A copy of a table keeps its slots when the original changes, and the other way round, for dense
    /// and far-apart pages alike (pages are shared by copies until one of them writes).
    @Test func copiesAreIndependent() {
        var original = SlotTable()
        let ids: [UInt64] = [1, 2, 17, 1_000, 1 << 40, 1 << 40 + 3]
        for id in ids { original[ObjectID(id)] = slot(id) }
        var copy = original
        let replaced = slot(2)
        original[ObjectID(2)] = replaced
        original[ObjectID(1 << 40)] = nil
        original[ObjectID(18)] = slot(18)
        copy[ObjectID(1)] = nil
        copy[ObjectID(1 << 40 + 4)] = slot(1 << 40 + 4)
        #expect(original[ObjectID(1)]?.id == ObjectID(1))
        #expect(original[ObjectID(2)] === replaced)
        #expect(original[ObjectID(1 << 40)] == nil && original[ObjectID(18)] != nil)
        #expect(original[ObjectID(1 << 40 + 4)] == nil)
        #expect(copy[ObjectID(1)] == nil)
        #expect(copy[ObjectID(2)] !== replaced && copy[ObjectID(2)]?.id == ObjectID(2))
        #expect(copy[ObjectID(1 << 40)]?.id == ObjectID(1 << 40) && copy[ObjectID(18)] == nil)
        #expect(copy[ObjectID(1 << 40 + 4)] != nil)
        #expect(original.count == 6 && copy.count == 6)
    }

    /// Slots leave with their table: a dropped table releases every slot it held.
    @Test func aDroppedTableReleasesItsSlots() {
        weak var watched: ObjectSlot?
        do {
            var table = SlotTable()
            let held = slot(5)
            watched = held
            table[ObjectID(5)] = held
            table[ObjectID(1 << 40)] = slot(1 << 40)
            #expect(table.count == 2)
        }
        #expect(watched == nil)
    }

    /// A context that loads and drops objects again and again keeps its list of not yet indexed slots
    /// within the live slots.
    @Test func loadedSlotsWaitingForTheIndexStayBounded() {
        let cache = IdentityCache()
        for _ in 0..<30 {
            for id in UInt64(1)...1_000 {
                let slot = cache.insert(nil, id: ObjectID(id), storedHash: nil, pinned: false)
                cache.attach(Dropped(), to: slot)  // released at once, as a dropped graph is
            }
        }
        #expect(cache.unindexedCount <= 4096)
        let kept = Dropped()
        let slot = cache.insert(nil, id: ObjectID(5), storedHash: nil, pinned: false)
        cache.attach(kept, to: slot)
        #expect(cache.slot(of: kept) === slot)
    }
}

/// A persistent object nothing keeps.
private final class Dropped: PersistentObject {
    static let typeName = "slots.Dropped"
    init() {}
}
