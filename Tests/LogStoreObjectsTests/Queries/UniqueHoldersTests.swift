import Foundation
import LogStore
import LogStoreExamples
import Testing

@testable import LogStoreObjects

/// A unique index's table of hashes and holders: random inserts and removals against a model, with hashes
/// from a tiny set (long probe runs, equal hashes of different keys) and from all 64 bits.
@Suite struct UniqueHoldersTests {
    /// Each entry is a (hash, id) pair; a lookup asks for the holder among those stored under a hash that
    /// passes a test (as the index asks whether the object holds the key). The seed is printed; set
    /// `LOGSTORE_SEED` to replay one.
    @Test(arguments: [4, 1 << 62]) func agreesWithAModel(hashRange: UInt64) {
        let seed =
            ProcessInfo.processInfo.environment["LOGSTORE_SEED"].flatMap(UInt64.init) ?? UInt64.random(in: 1...1 << 40)
        print("UniqueHoldersTests seed \(seed), hashes below \(hashRange) (replay with LOGSTORE_SEED=\(seed))")
        var random = SplitMix64(seed: seed)
        var table = UniqueHolders()
        var model: [(hash: UInt64, id: ObjectID)] = []
        for step in 0..<20_000 {
            let hash = 1 + random.next() % hashRange
            let id = ObjectID(1 + random.next() % 500)
            switch random.next() % 3 {
            case 0 where !model.contains { $0.hash == hash && $0.id == id }:
                table.insert(id, hash: hash)
                model.append((hash, id))
            case 1:
                table.remove(id, hash: hash)
                if let at = model.firstIndex(where: { $0.hash == hash && $0.id == id }) { model.remove(at: at) }
            default:
                // The holder whose id is even (a test the index makes by reading the object's keys).
                let expected = model.filter { $0.hash == hash && $0.id.rawValue % 2 == 0 }.map(\.id)
                let found = table.holder(hash: hash) { $0.rawValue % 2 == 0 }
                #expect(found.map { expected.contains($0) } ?? expected.isEmpty, "step \(step), seed \(seed)")
            }
            #expect(table.count == model.count, "step \(step), seed \(seed)")
            if step % 1_999 == 0 {
                for entry in model {
                    #expect(table.holder(hash: entry.hash) { $0 == entry.id } == entry.id, "step \(step), seed \(seed)")
                }
            }
        }
        for entry in model.shuffled(using: &random) { table.remove(entry.id, hash: entry.hash) }
        #expect(table.count == 0)
        #expect(table.holder(hash: 1) { _ in true } == nil)
    }

    /// A table reserved for many entries and one grown entry by entry find the same holders; a removal of a
    /// pair the table does not hold changes nothing.
    @Test func growsAndReserves() {
        var grown = UniqueHolders()
        var reserved = UniqueHolders()
        reserved.reserveCapacity(50_000)
        let keys = (0..<50_000).map { CompoundKey(.string("code-\($0)")) }
        for (number, key) in keys.enumerated() {
            grown.insert(ObjectID(UInt64(number + 1)), hash: UniqueHolders.hash(key))
            reserved.insert(ObjectID(UInt64(number + 1)), hash: UniqueHolders.hash(key))
        }
        grown.remove(ObjectID(999_999), hash: UniqueHolders.hash(keys[0]))
        #expect(grown.count == 50_000 && reserved.count == 50_000)
        for (number, key) in keys.enumerated() where number % 7 == 0 {
            let id = ObjectID(UInt64(number + 1))
            #expect(grown.holder(hash: UniqueHolders.hash(key)) { $0 == id } == id)
            #expect(reserved.holder(hash: UniqueHolders.hash(key)) { $0 == id } == id)
        }
        #expect(UniqueHolders.hash(CompoundKey(.int(1))) == UniqueHolders.hash(CompoundKey(.double(1))))
    }
}
