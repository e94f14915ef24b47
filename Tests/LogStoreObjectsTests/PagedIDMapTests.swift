import Foundation
import LogStore
import LogStoreExamples
import Testing

@testable import LogStoreObjects

/// The paged id map of the indexes: random operations against a `Dictionary` model, pages allocated and
/// freed, ids far apart, copies.
@Suite struct PagedIDMapTests {
    /// Random inserts, replacements, removals, lookups and walks agree with a `Dictionary` after every
    /// step; ids come from a dense range, a wide one (sparse pages), and include 0 and the largest id. The
    /// seed is printed; set `LOGSTORE_SEED` to replay one.
    @Test func agreesWithADictionaryUnderRandomOperations() {
        let seed =
            ProcessInfo.processInfo.environment["LOGSTORE_SEED"].flatMap(UInt64.init) ?? UInt64.random(in: 1...1 << 40)
        print("PagedIDMapTests seed \(seed) (replay with LOGSTORE_SEED=\(seed))")
        var random = SplitMix64(seed: seed)
        var map = PagedIDMap<Int>()
        var model: [UInt64: Int] = [:]
        func randomID() -> UInt64 {
            switch random.next() % 8 {
            case 0: [0, 1, 63, 64, UInt64.max, UInt64(Int64.max)][Int(random.next() % 6)]
            case 1: random.next()
            case 2: 1 << 40 + random.next() % 5_000
            default: random.next() % 3_000
            }
        }
        for step in 0..<40_000 {
            let id = randomID()
            switch random.next() % 10 {
            case 0...3:
                let value = Int(truncatingIfNeeded: random.next())
                #expect(map.updateValue(value, forKey: ObjectID(id)) == model.updateValue(value, forKey: id))
            case 4, 5:
                #expect(map.removeValue(forKey: ObjectID(id)) == model.removeValue(forKey: id), "step \(step)")
            case 6:
                let value = Int(truncatingIfNeeded: random.next())
                map[ObjectID(id)] = value
                model[id] = value
            case 7:
                map[ObjectID(id)] = nil
                model[id] = nil
            default:
                #expect(map[ObjectID(id)] == model[id], "step \(step), id \(id)")
            }
            #expect(map.count == model.count)
            if step % 997 == 0 { check(map, model, "step \(step), seed \(seed)") }
            if step % 9_973 == 0 {
                for key in model.keys.shuffled(using: &random).prefix(model.count / 2) {
                    #expect(map.removeValue(forKey: ObjectID(key)) == model.removeValue(forKey: key))
                }
                check(map, model, "after removing half, step \(step), seed \(seed)")
            }
        }
        check(map, model, "end, seed \(seed)")
        for key in Array(model.keys) {
            #expect(map.removeValue(forKey: ObjectID(key)) == model.removeValue(forKey: key))
        }
        check(map, [:], "emptied, seed \(seed)")
        #expect(map.pagesInUse == 0, "every page is freed when its last value goes")
    }

    /// Sequential ids fill whole pages (one per 64 ids); removing them frees the pages; an id far beyond
    /// the others takes one page of its own, and ids between them later fill the dense table.
    @Test func pagesFollowTheIDs() {
        var map = PagedIDMap<UInt64>()
        #expect(map.isEmpty && map[ObjectID(1)] == nil && map.removeValue(forKey: ObjectID(1)) == nil)
        for id in UInt64(0)..<6_400 { map[ObjectID(id)] = id * 3 }
        #expect(map.count == 6_400 && map.pagesInUse == 100)
        map[ObjectID(1 << 50)] = 7
        #expect(map.pagesInUse == 101 && map[ObjectID(1 << 50)] == 7 && map[ObjectID(1 << 50 + 1)] == nil)
        for id in UInt64(6_400)..<2_000_000 where id % 64 == 0 { map[ObjectID(id)] = id * 3 }
        #expect(map.pagesInUse == 101 + (2_000_000 - 6_400) / 64)
        #expect(map.ids.count == map.count)
        #expect(map.ids.filter { $0.rawValue < 6_400 } == (0..<6_400).map { ObjectID($0) }, "in id order")
        for id in UInt64(0)..<6_400 { #expect(map.removeValue(forKey: ObjectID(id)) == id * 3) }
        #expect(map.pagesInUse == 1 + (2_000_000 - 6_400) / 64)
        #expect(map.firstID { $0.rawValue > 1_000_000 } == ObjectID(1_000_064))
        #expect(map[ObjectID(1 << 50)] == 7)
    }

    /// Ids interleaved with other classes' (one in every 16, then one in every 64) fill pages partly: each
    /// page holds only its values, and removing every other value keeps the rest in place.
    @Test func partlyFilledPagesHoldTheirValues() {
        var map = PagedIDMap<Int>()
        for id in stride(from: UInt64(3), to: 64_000, by: 16) { map[ObjectID(id)] = Int(id) }
        for id in stride(from: UInt64(64_005), to: 640_000, by: 64) { map[ObjectID(id)] = Int(id) }
        #expect(map.count == 4_000 + 9_000 && map.pagesInUse == 1_000 + 9_000)
        for id in stride(from: UInt64(3), to: 64_000, by: 32) {
            #expect(map.removeValue(forKey: ObjectID(id)) == Int(id))
        }
        for id in stride(from: UInt64(19), to: 64_000, by: 32) { #expect(map[ObjectID(id)] == Int(id)) }
        #expect(map[ObjectID(4)] == nil && map[ObjectID(64_006)] == nil && map[ObjectID(64_005)] == 64_005)
        var previous: ObjectID?
        map.forEachEntry { id, value in
            #expect(value == Int(id.rawValue))
            if let previous { #expect(previous < id, "in id order") }
            previous = id
        }
    }

    /// A copy keeps its values while the original changes, and the other way round.
    @Test func copiesAreIndependent() {
        var original = PagedIDMap<String>()
        for id in UInt64(1)...300 { original[ObjectID(id)] = "v\(id)" }
        original[ObjectID(1 << 45)] = "far"
        var copy = original
        copy[ObjectID(5)] = "changed"
        copy[ObjectID(1 << 45)] = nil
        original[ObjectID(6)] = nil
        #expect(original[ObjectID(5)] == "v5" && original[ObjectID(1 << 45)] == "far" && original.count == 300)
        #expect(copy[ObjectID(5)] == "changed" && copy[ObjectID(6)] == "v6" && copy[ObjectID(1 << 45)] == nil)
        #expect(copy.count == 300)
    }

    /// Every lookup, the count and a full walk agree with `model`.
    private func check(_ map: PagedIDMap<Int>, _ model: [UInt64: Int], _ context: String) {
        #expect(map.count == model.count, "\(context)")
        #expect(map.isEmpty == model.isEmpty)
        var walked: [UInt64: Int] = [:]
        map.forEachEntry { id, value in
            #expect(walked.updateValue(value, forKey: id.rawValue) == nil, "\(context): \(id) walked twice")
        }
        #expect(walked == model, "\(context)")
        #expect(Set(map.ids.map(\.rawValue)) == Set(model.keys), "\(context)")
        for (id, value) in model { #expect(map[ObjectID(id)] == value, "\(context): id \(id)") }
    }
}
