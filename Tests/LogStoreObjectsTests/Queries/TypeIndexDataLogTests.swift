import Foundation
import LogStore
import LogStoreExamples
import TestSupport
import Testing

@testable import LogStoreObjects

/// The indexes of one class changed through their entry log: random sets and removals, with the entries
/// taken out (as the applier takes them) for stretches of the run, against a model. Index 0 is ordered over
/// an array field (several keys per object), index 1 unique over a small set of codes (so keys are shared
/// too). The seed is printed; set `LOGSTORE_SEED` to replay one.
@Suite struct TypeIndexDataLogTests {
    @Test func setsAndRemovalsWithTheEntriesTakenOutAgreeWithAModel() {
        let seed = testSeed("TypeIndexDataLogTests", default: UInt64.random(in: 1...1 << 40))
        var random = SplitMix64(seed: seed)
        var data = TypeIndexData(unique: [false, true], building: [])
        var model: [ObjectID: [[CompoundKey]]] = [:]
        var taken: (entries: [SortedEntries], log: [TypeIndexData.EntryChange])?
        var version: UInt64 = 0

        func check(_ step: Int) {
            // Entries in order, as the model gives them.
            for index in 0..<2 {
                var expected: [IndexEntryKey] = []
                for (id, keys) in model { for key in keys[index] { expected.append(IndexEntryKey(key: key, id: id)) } }
                expected.sort()
                var found: [IndexEntryKey] = []
                let entries = data.entries[index]
                entries.forEach(from: entries.startPosition, to: entries.endPosition) { entry in
                    found.append(entry)
                    return true
                }
                #expect(found == expected, "index \(index), step \(step), seed \(seed)")
            }
            // Holders of each code: the table answers alone when one object holds it.
            for code in 0..<12 {
                let key = CompoundKey(.string("code\(code)"))
                let holders = model.filter { $0.value[1].contains(key) }.keys.sorted()
                #expect(data.ids(withKey: key, in: 1) == holders, "code \(code), step \(step), seed \(seed)")
                let answer = data.holder(of: key, in: 1)
                #expect(answer.exact == (holders.count <= 1), "code \(code), step \(step), seed \(seed)")
                if answer.exact { #expect(answer.id == holders.first, "code \(code), step \(step), seed \(seed)") }
            }
            for (id, keys) in model {
                #expect(data.keys(of: id, in: 0) == keys[0], "id \(id), step \(step), seed \(seed)")
                #expect(data.keys(of: id, in: 1) == keys[1], "id \(id), step \(step), seed \(seed)")
            }
            #expect(data.objectCount == model.count, "step \(step), seed \(seed)")
        }

        for step in 0..<4_000 {
            let id = ObjectID(1 + random.next() % 60)
            switch random.next() % 10 {
            case 0...5:
                var tags: [CompoundKey] = []
                for _ in 0..<Int(random.next() % 3) {
                    let tag = CompoundKey(.int(Int64(random.next() % 8)))
                    if !tags.contains(tag) { tags.append(tag) }
                }
                let keys = [tags, [CompoundKey(.string("code\(random.next() % 12)"))]]
                version += 1
                data.set(id, version: version, keys: keys)
                model[id] = keys
            case 6...7:
                #expect(data.remove(id) == (model[id] != nil), "step \(step), seed \(seed)")
                model[id] = nil
            case 8:
                // The applier takes the entries and their log, or puts them back with the log applied.
                if var out = taken {
                    TypeIndexData.apply(out.log, to: &out.entries)
                    data.restoreEntries(out.entries)
                    taken = nil
                } else {
                    taken = data.takeEntries()
                }
            default:
                if taken == nil {
                    data.flushEntries()
                    check(step)
                }
            }
        }
        if var out = taken {
            TypeIndexData.apply(out.log, to: &out.entries)
            data.restoreEntries(out.entries)
        }
        data.flushEntries()
        check(4_000)
    }
}
