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
}
