import Foundation
import LogStoreExamples
import Synchronization
import TestSupport
import Testing

@testable @_spi(Testing) import LogStore

/// Readers, writers and group commit running at once.
@Suite struct ConcurrencyTests {
    /// A payload that names its object and version, so a reader can tell a right one from a wrong one.
    static func payload(id: ObjectID, version: UInt64) -> [UInt8] {
        var bytes: [UInt8] = []
        withUnsafeBytes(of: id.rawValue.littleEndian) { bytes.append(contentsOf: $0) }
        withUnsafeBytes(of: version.littleEndian) { bytes.append(contentsOf: $0) }
        bytes.append(contentsOf: payloadBytes(Int((id.rawValue &* 31 &+ version) % 400), seed: id.rawValue ^ version))
        return bytes
    }

    static func isValid(_ payload: [UInt8], id: ObjectID) -> Bool {
        guard payload.count >= 16 else { return false }
        let number = { (range: Range<Int>) in
            payload[range].enumerated().reduce(UInt64(0)) { $0 | UInt64($1.element) << (8 * UInt64($1.offset)) }
        }
        return number(0..<8) == id.rawValue && payload == Self.payload(id: id, version: number(8..<16))
    }

    @Test func readersSeeOnlyCompleteConsistentRecordsWhileWritersRun() throws {
        let directory = TemporaryStore("concurrency")
        let store = try directory.open(options: testOptions(segmentSize: 1 << 18))
        let stop = Atomic<Bool>(false)
        let failures = Shared<[String]>([])
        let reads = Atomic<Int>(0)
        let batches = Atomic<Int>(0)
        let highest = Atomic<UInt64>(0)
        let writerCount = 2
        let group = ThreadGroup()

        group.start(writerCount) { writer in
            var random = SplitMix64(seed: UInt64(writer) + 1)
            var mine: [ObjectID] = []
            var version: UInt64 = 0
            while !stop.load(ordering: .relaxed) {
                version += 1
                var batch = WriteBatch()
                var members: [ObjectID] = []
                for _ in 0..<(1 + Int(random.next() % 20)) {
                    let reuse = !mine.isEmpty && random.next() % 3 == 0
                    let id = reuse ? mine[Int(random.next() % UInt64(mine.count))] : store.newID()
                    if !reuse { mine.append(id) }
                    guard !members.contains(id) else { continue }
                    members.append(id)
                    batch.put(id, typeTag: UInt32(writer), payload: Self.payload(id: id, version: version))
                }
                let manifest = store.newID()
                batch.put(manifest, typeTag: 99, references: members, payload: [])
                batch.setRoot("writer-\(writer)", to: manifest)
                do {
                    try store.write(batch)
                    batches.add(1, ordering: .relaxed)
                    highest.max(manifest.rawValue, ordering: .relaxed)
                } catch {
                    failures.withLock { $0.append("write: \(error)") }
                    return
                }
            }
        }
        group.start(3) { reader in
            var random = SplitMix64(seed: 1000 + UInt64(reader))
            while !stop.load(ordering: .relaxed) {
                do {
                    let limit = highest.load(ordering: .relaxed)
                    if limit > 0 {
                        let id = ObjectID(1 + random.next() % limit)
                        if let record = try store.get(id), record.typeTag != 99, !Self.isValid(record.payload, id: id) {
                            failures.withLock { $0.append("wrong payload for \(id)") }
                        }
                    }
                    // Every member of a batch is visible together with its manifest.
                    let root = "writer-\(random.next() % UInt64(writerCount))"
                    if let manifest = try store.root(named: root), let header = try store.header(of: manifest) {
                        for member in header.references where try !store.contains(member) {
                            failures.withLock { $0.append("batch member \(member) of \(manifest) missing") }
                        }
                    }
                    reads.add(1, ordering: .relaxed)
                } catch {
                    failures.withLock { $0.append("read: \(error)") }
                    return
                }
            }
        }
        group.run(
            until: { reads.load(ordering: .relaxed) >= 1000 && batches.load(ordering: .relaxed) >= 50 }, thenStop: stop)
        #expect(failures.withLock { $0 }.isEmpty, "\(failures.withLock { $0.prefix(5) })")
        #expect(reads.load(ordering: .relaxed) >= 1000)
        #expect(batches.load(ordering: .relaxed) >= 50)
        try store.close()
        #expect(try Store.verify(at: directory.path).isSound)
    }

    /// With committers that spin while they wait (the default) and with committers that sleep.
    @Test(arguments: [Duration.microseconds(500), .zero])
    func concurrentDurablePutsShareSyncsAndAllSurvive(spinLimit: Duration) throws {
        let directory = TemporaryStore("group")
        let faults = FaultInjector()
        var options = testOptions(segmentSize: 1 << 20, faults: faults)
        options.tuning.commitSpinLimit = spinLimit
        let store = try directory.open(options: options)
        try store.put(typeTag: 1, payload: [])  // creates the segment: the syncs counted below are commits only
        let syncsBefore = faults.calls(.sync)
        let written = Shared<[ObjectID: [UInt8]]>([:])
        let threads = 8
        let perThread = 40
        let group = ThreadGroup()
        group.start(threads) { thread in
            for index in 0..<perThread {
                let payload = payloadBytes(64, seed: UInt64(thread * 1000 + index))
                if let id = try? store.put(typeTag: 1, payload: payload) {
                    written.withLock { $0[id] = payload }
                }
            }
        }
        group.join()
        let all = written.withLock { $0 }
        #expect(all.count == threads * perThread)
        // Group commit: committers share syncs (one commit per sync would need 320).
        #expect(faults.calls(.sync) - syncsBefore < threads * perThread * 3 / 4)
        try store.close()
        let reopened = try directory.open(options: testOptions())
        for (id, payload) in all { #expect(try reopened.get(id)?.payload == payload) }
        try reopened.close()
    }
}
