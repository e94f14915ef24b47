import Foundation
import LogStoreExamples
import TestSupport
import Testing

@testable @_spi(Testing) import LogStore

/// Random sequences of puts, deletes, batches, root changes and reopens, checked against a plain
/// in-memory model after every step. The seed is printed; set `LOGSTORE_SEED` to replay one.
@Suite struct PropertyTests {
    struct Model {
        var records: [ObjectID: Record] = [:]
        var roots: [String: ObjectID] = [:]

        /// Whether a live record (other than `id` itself) or a root refers to `id`.
        func isReferenced(_ id: ObjectID) -> Bool {
            roots.values.contains(id) || records.values.contains { $0.id != id && $0.references.contains(id) }
        }
    }

    /// Round 3 runs on an encrypted store, and reopens it sometimes without its hint files (so that the
    /// segments are decrypted and scanned).
    @Test(arguments: [0, 1, 2, 3])
    func randomOperationsMatchTheModel(round: Int) throws {
        let seed = testSeed("PropertyTests", default: 0xC0FFEE + UInt64(round) * 7919)
        var random = SplitMix64(seed: seed)
        let directory = TemporaryStore("property")
        let fsync: FsyncPolicy = [.always, .never, .interval(.milliseconds(5))][round % 3]
        let encrypted = round == 3
        var options = testOptions(segmentSize: 1 << 16, fsync: fsync)
        if encrypted {
            options.cipher = testCipher()
            directory.verifies(with: testCipher())
        }
        var store = try directory.open(options: options)
        var model = Model()

        func randomRecord(_ id: ObjectID, among live: [ObjectID]) -> Record {
            let size = [0, 1, 17, 200, 700, 3000][Int(random.next() % 6)]
            let references =
                live.isEmpty
                ? [] : (0..<Int(random.next() % 5)).map { _ in live[Int(random.next() % UInt64(live.count))] }
            return Record(
                id: id, typeTag: UInt32(random.next() % 4), references: references,
                payload: payloadBytes(size, seed: random.next(), compressible: random.next() % 2 == 0))
        }
        func liveID() -> ObjectID? {
            model.records.isEmpty ? nil : model.records.keys.sorted()[Int(random.next() % UInt64(model.records.count))]
        }

        for step in 0..<600 {
            switch random.next() % 20 {
            case 0..<7:
                let record = randomRecord(store.newID(), among: model.records.keys.sorted())
                try store.put(
                    record.id, typeTag: record.typeTag, references: record.references, payload: record.payload)
                model.records[record.id] = record
            case 7..<10:
                guard let id = liveID() else { continue }
                let record = randomRecord(id, among: model.records.keys.sorted())
                try store.put(record)
                model.records[id] = record
            case 10..<12:
                guard let id = liveID() else { continue }
                if model.isReferenced(id) {
                    #expect(throws: LogStoreError.self) { try store.delete(id) }
                    continue
                }
                try store.delete(id)
                model.records[id] = nil
            case 12..<16:
                var batch = WriteBatch()
                var next = model
                for _ in 0..<(1 + Int(random.next() % 20)) {
                    switch random.next() % 4 {
                    case 0, 1:
                        let record = randomRecord(store.newID(), among: next.records.keys.sorted())
                        batch.put(record)
                        next.records[record.id] = record
                    case 2:
                        if let id = next.records.keys.sorted().first(where: { !next.isReferenced($0) }) {
                            batch.delete(id)
                            next.records[id] = nil
                        }
                    default:
                        let name = "root-\(random.next() % 5)"
                        if let id = next.records.keys.max() {
                            batch.setRoot(name, to: id)
                            next.roots[name] = id
                        }
                    }
                }
                try store.write(batch)
                model = next
            case 16:
                let name = "root-\(random.next() % 5)"
                try store.removeRoot(name)
                model.roots[name] = nil
            case 17:
                // A batch that fails validation changes nothing.
                var batch = WriteBatch()
                batch.put(randomRecord(store.newID(), among: model.records.keys.sorted()))
                batch.delete(ObjectID(UInt64.max - 1))
                #expect(throws: LogStoreError.self) { try store.write(batch) }
            default:
                try store.close()
                if encrypted, random.next() % 2 == 0 {
                    for name in directory.fileNames() where name.hasSuffix(".hint") {
                        try FileManager.default.removeItem(atPath: directory.path + "/" + name)
                    }
                }
                store = try directory.open(options: options)
                #expect(store.recovery == nil)
                try expectEqual(store, model, step: step, seed: seed)
            }
            if step % 50 == 0 { try expectEqual(store, model, step: step, seed: seed) }
        }
        try expectEqual(store, model, step: -1, seed: seed)
        try store.close()
        let report = try Store.verify(at: directory.path, cipher: encrypted ? testCipher() : nil)
        #expect(report.isSound, "\(report.problems)")
    }

    private func expectEqual(_ store: Store, _ model: Model, step: Int, seed: UInt64) throws {
        #expect(try store.ids() == model.records.keys.sorted(), "step \(step), seed \(seed)")
        for (id, record) in model.records {
            #expect(try store.get(id) == record, "step \(step), seed \(seed), id \(id)")
        }
        #expect(try store.roots() == model.roots, "step \(step), seed \(seed)")
        var counts: [UInt32: Int] = [:]
        for record in model.records.values { counts[record.typeTag, default: 0] += 1 }
        #expect(try store.countsByType() == counts, "step \(step), seed \(seed)")
    }
}
