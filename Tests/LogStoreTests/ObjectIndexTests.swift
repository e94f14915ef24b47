import LogStoreExamples
import Testing

@testable import LogStore

/// The paged index against a dictionary, with dense, sparse and huge ids.
@Suite struct ObjectIndexTests {
    @Test func matchesADictionaryModel() {
        var index = ObjectIndex()
        var model: [UInt64: IndexEntry] = [:]
        var random = SplitMix64(seed: 7)
        let ranges: [ClosedRange<UInt64>] = [1...5000, 1 << 40...(1 << 40) + 3000, UInt64.max - 2000...UInt64.max]
        for step in 0..<40_000 {
            let range = ranges[Int(random.next() % 3)]
            let id = range.lowerBound + random.next() % (range.upperBound - range.lowerBound)
            if random.next() % 3 == 0 {
                #expect(index.remove(id) == model.removeValue(forKey: id), "step \(step)")
            } else {
                let entry = IndexEntry(
                    segment: UInt32(step), offset: UInt32(id & 0xFFFF), length: 44 + UInt32(step % 7), typeTag: 1)
                #expect(index.set(id, entry) == model.updateValue(entry, forKey: id), "step \(step)")
            }
            #expect(index.count == model.count)
        }
        for (id, entry) in model { #expect(index.entry(id) == entry) }
        var visited: [UInt64] = []
        index.forEachLive { id, _ in visited.append(id) }
        #expect(visited == model.keys.sorted())
        #expect(index.memoryBytes < 64 << 20)
    }

    /// `firstLive` finds the first match in id order, dense pages before sparse ones, and looks at no
    /// more live objects than its limit. (Results are compared as `UInt64`, 0 for none: the address
    /// sanitizer reports an overflow inside the runtime's conversion of an optional `UInt64` in `#expect`.)
    @Test func firstLiveStopsAtTheFirstMatchAndAtTheLimit() {
        var index = ObjectIndex()
        let ids: [UInt64] = Array(1...3000) + [1 << 40, (1 << 40) + 5]
        for id in ids { index.set(id, IndexEntry(segment: 1, offset: 64, length: 44, typeTag: UInt32(id % 7))) }
        var looked = 0
        let first =
            index.firstLive { id, _ in
                looked += 1
                return id == 1500
            } ?? 0
        #expect(first == 1500)
        #expect(looked == 1500)
        #expect((index.firstLive { _, entry in entry.typeTag == 3 }) ?? 0 == 3)
        #expect((index.firstLive { id, _ in id > 3000 }) ?? 0 == 1 << 40)
        looked = 0
        let limited =
            index.firstLive(limit: 100) { id, _ in
                looked += 1
                return id == 1500
            } ?? 0
        #expect(limited == 0)
        #expect(looked == 100)
        #expect((index.firstLive(limit: 3001) { id, _ in id == (1 << 40) + 5 }) ?? 0 == 0)
        #expect((index.firstLive(limit: 3002) { id, _ in id == (1 << 40) + 5 }) ?? 0 == (1 << 40) + 5)
    }
}
