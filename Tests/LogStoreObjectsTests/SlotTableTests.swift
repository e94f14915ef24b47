import LogStore
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
