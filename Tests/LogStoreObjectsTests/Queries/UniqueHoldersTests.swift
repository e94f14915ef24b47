import Foundation
import LogStore
import LogStoreExamples
import Testing

@testable import LogStoreObjects

/// A unique index's table of holders: random inserts (plain, and through `holderOrInsert`), removals and
/// lookups against a model, with hashes from a tiny set (long probe runs, one hash for several keys) and
/// from all 64 bits.
@Suite struct UniqueHoldersTests {
    /// Keys are numbered strings; each is stored under a hash made from its number modulo `hashRange` (the
    /// table is given hashes, so equal hashes of different keys are easy to make). The seed is printed;
    /// set `LOGSTORE_SEED` to replay one.
    @Test(arguments: [UInt64(3), 1 << 62]) func agreesWithAModel(hashRange: UInt64) {
        let seed =
            ProcessInfo.processInfo.environment["LOGSTORE_SEED"].flatMap(UInt64.init) ?? UInt64.random(in: 1...1 << 40)
        print("UniqueHoldersTests seed \(seed), hashes below \(hashRange) (replay with LOGSTORE_SEED=\(seed))")
        var random = SplitMix64(seed: seed)
        var table = UniqueHolders()
        var model: [Int: ObjectID] = [:]
        func key(_ number: Int) -> CompoundKey { CompoundKey(.string("key-\(number)")) }
        func hash(_ number: Int) -> UInt64 {
            hashRange < 1 << 62 ? 1 + UInt64(number) % hashRange : UniqueHolders.hash(key(number))
        }
        for step in 0..<20_000 {
            let number = Int(random.next() % 2_000)
            let id = ObjectID(1 + random.next() % 500)
            switch random.next() % 4 {
            case 0 where model[number] == nil:
                table.insert(id, key: key(number), hash: hash(number))
                model[number] = id
            case 3:
                // The holder when there is one (nothing inserted), else the object inserted.
                let found = table.holderOrInsert(id, key: key(number), hash: hash(number))
                #expect(found == model[number], "step \(step), seed \(seed)")
                if model[number] == nil { model[number] = id }
            case 1:
                // A removal names the holder; naming another object removes nothing.
                let named = random.next() % 4 == 0 ? id : (model[number] ?? id)
                table.remove(named, key: key(number), hash: hash(number))
                if model[number] == named { model[number] = nil }
            default:
                let found = table.holder(of: key(number), hash: hash(number))
                #expect(found == model[number], "step \(step), seed \(seed)")
            }
            #expect(table.count == model.count, "step \(step), seed \(seed)")
            if step % 1_999 == 0 {
                for (number, id) in model {
                    #expect(table.holder(of: key(number), hash: hash(number)) == id, "step \(step), seed \(seed)")
                }
            }
        }
        for (number, id) in model.shuffled(using: &random) { table.remove(id, key: key(number), hash: hash(number)) }
        #expect(table.count == 0)
        #expect(table.holder(of: key(1), hash: hash(1)) == nil)
    }

    /// A table reserved for many entries and one grown entry by entry find the same holders; numbers equal
    /// in the index's order (1 and 1.0) are one key.
    @Test func growsAndReserves() {
        var grown = UniqueHolders()
        var reserved = UniqueHolders()
        reserved.reserveCapacity(50_000)
        let keys = (0..<50_000).map { CompoundKey(.string("code-\($0)")) }
        for (number, key) in keys.enumerated() {
            grown.insert(ObjectID(UInt64(number + 1)), key: key, hash: UniqueHolders.hash(key))
            reserved.insert(ObjectID(UInt64(number + 1)), key: key, hash: UniqueHolders.hash(key))
        }
        #expect(grown.count == 50_000 && reserved.count == 50_000)
        for (number, key) in keys.enumerated() where number % 7 == 0 {
            #expect(grown.holder(of: key, hash: UniqueHolders.hash(key)) == ObjectID(UInt64(number + 1)))
            #expect(reserved.holder(of: key, hash: UniqueHolders.hash(key)) == ObjectID(UInt64(number + 1)))
        }
        let one = CompoundKey(.int(1))
        grown.insert(ObjectID(7), key: one, hash: UniqueHolders.hash(one))
        let sameNumber = CompoundKey(.double(1))
        #expect(grown.holder(of: sameNumber, hash: UniqueHolders.hash(sameNumber)) == ObjectID(7))
    }
}
