import Foundation
import LogStore
import LogStoreExamples
import Testing

@testable import LogStoreObjects

/// The id-keyed hash table: random operations against a `Dictionary` model, growth, removal runs.
@Suite struct IDTableTests {
    /// Random inserts, replacements, removals, lookups and walks agree with a `Dictionary` after every
    /// step; ids come from a small dense range (long probe runs), a wide one, and include 0 and the
    /// largest id. The seed is printed; set `LOGSTORE_SEED` to replay one.
    @Test func agreesWithADictionaryUnderRandomOperations() {
        let seed =
            ProcessInfo.processInfo.environment["LOGSTORE_SEED"].flatMap(UInt64.init) ?? UInt64.random(in: 1...1 << 40)
        print("IDTableTests seed \(seed) (replay with LOGSTORE_SEED=\(seed))")
        var random = SplitMix64(seed: seed)
        var table = IDTable<Int>()
        var model: [UInt64: Int] = [:]
        func randomID() -> UInt64 {
            switch random.next() % 8 {
            case 0: [0, 1, UInt64.max, UInt64(Int64.max)][Int(random.next() % 4)]
            case 1, 2: random.next()
            default: random.next() % 600
            }
        }
        for step in 0..<40_000 {
            let id = randomID()
            switch random.next() % 10 {
            case 0...3:
                let value = Int(truncatingIfNeeded: random.next())
                #expect(table.updateValue(value, forKey: ObjectID(id)) == model.updateValue(value, forKey: id))
            case 4, 5:
                #expect(table.removeValue(forKey: ObjectID(id)) == model.removeValue(forKey: id), "step \(step)")
            case 6:
                let value = Int(truncatingIfNeeded: random.next())
                table[ObjectID(id)] = value
                model[id] = value
            case 7:
                table[ObjectID(id)] = nil
                model[id] = nil
            default:
                #expect(table[ObjectID(id)] == model[id], "step \(step), id \(id)")
                #expect(table.contains(ObjectID(id)) == (model[id] != nil))
            }
            #expect(table.count == model.count)
            if step % 997 == 0 { check(table, model, "step \(step), seed \(seed)") }
            if step % 9_973 == 0 {
                for key in model.keys.shuffled(using: &random).prefix(model.count / 2) {
                    #expect(table.removeValue(forKey: ObjectID(key)) == model.removeValue(forKey: key))
                }
                check(table, model, "after removing half, step \(step), seed \(seed)")
            }
        }
        check(table, model, "end, seed \(seed)")
        table.removeAll(where: { id, value in id.rawValue % 3 == 0 || value % 2 == 0 })
        model = model.filter { id, value in !(id % 3 == 0 || value % 2 == 0) }
        check(table, model, "after removeAll(where:), seed \(seed)")
        table.removeAll(keepingCapacity: true)
        check(table, [:], "after removeAll(keepingCapacity:)")
        table[ObjectID(5)] = 5
        check(table, [5: 5], "reused after removeAll(keepingCapacity:)")
        table.removeAll()
        check(table, [:], "after removeAll()")
    }

    /// Grows from empty through many sizes (sequential ids, as the store hands them out), every entry
    /// found after each growth, then shrinks back to empty by removal in another order.
    @Test func growsAndEmptiesWithSequentialIDs() {
        var table = IDTable<UInt64>()
        #expect(table.isEmpty && table[ObjectID(1)] == nil && table.removeValue(forKey: ObjectID(1)) == nil)
        for id in UInt64(1)...20_000 {
            table[ObjectID(id)] = id * 2
            if id.nonzeroBitCount == 1 {
                for probe in UInt64(1)...id { #expect(table[ObjectID(probe)] == probe * 2) }
                #expect(table[ObjectID(id + 1)] == nil)
            }
        }
        #expect(table.count == 20_000)
        #expect(Set(table.ids.map(\.rawValue)) == Set(1...20_000))
        for id in stride(from: UInt64(20_000), through: 1, by: -1) {
            #expect(table.removeValue(forKey: ObjectID(id)) == id * 2)
            if id % 1_000 == 0 { #expect(table[ObjectID(id - 1)] == (id - 1) * 2) }
        }
        #expect(table.isEmpty)
        let presized = IDTable<Int>(minimumCapacity: 1_000)
        #expect(presized.isEmpty && presized.first(where: { _ in true }) == nil)
    }

    /// Every lookup, the count and a full walk agree with `model`.
    private func check(_ table: IDTable<Int>, _ model: [UInt64: Int], _ context: String) {
        #expect(table.count == model.count, "\(context)")
        #expect(table.isEmpty == model.isEmpty)
        var walked: [UInt64: Int] = [:]
        for (id, value) in table {
            #expect(walked.updateValue(value, forKey: id.rawValue) == nil, "\(context): \(id) walked twice")
        }
        #expect(walked == model, "\(context)")
        for (id, value) in model { #expect(table[ObjectID(id)] == value, "\(context): id \(id)") }
    }
}
