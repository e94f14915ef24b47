import Foundation
@_spi(Engine) import LogStoreFormat
import Synchronization
import TestSupport
import Testing

@testable @_spi(Testing) import LogStore

/// Every listing, count and query of a snapshot (and of the store) is of one moment: objects of a batch
/// that is not yet durable are in none of them.
@Suite struct SnapshotConsistencyTests {
    /// Puts a new object and, while its batch is being made durable (just before the segment's sync),
    /// asks the store and a snapshot every listing and count: the new object is in none of them.
    @Test func aBatchBeingMadeDurableIsInNoListing() throws {
        let directory = TemporaryStore("snapshot-pending")
        let faults = FaultInjector()
        var options = testOptions(fsync: .always, faults: faults)
        options.compaction.background = false
        let store = try directory.open(options: options)
        let old = try store.put(typeTag: 1, payload: [1])
        let new = store.newID()
        let seen = Shared<[String]>([])
        faults.perform(before: .sync, pathSuffix: "." + LogFormat.segmentExtension) { _ in
            do {
                let view = try store.snapshot()
                let answers = [
                    "store.ids \(try store.ids())", "store.ids(ofType: 2) \(try store.ids(ofType: 2))",
                    "store.count \(try store.count())", "store.contains \(try store.contains(new))",
                    "view.ids \(view.ids())", "view.ids(ofType: 2) \(view.ids(ofType: 2))",
                    "view.count \(view.count())", "view.contains \(view.contains(new))",
                    "view.spaceByType \(view.spaceByType().mapValues(\.records))",
                ]
                seen.withLock { $0 = answers }
            } catch {
                seen.withLock { $0 = ["\(error)"] }
            }
        }
        try store.put(new, typeTag: 2, payload: [2])
        #expect(
            seen.withLock { $0 } == [
                "store.ids \([old])", "store.ids(ofType: 2) []", "store.count 1", "store.contains false",
                "view.ids \([old])", "view.ids(ofType: 2) []", "view.count 1", "view.contains false",
                "view.spaceByType [1: 1]",
            ])
        #expect(try store.ids() == [old, new])
        try store.close()
    }

    /// Two writers put, replace and delete objects, alone and in batches (one of them compacting now and
    /// then), while a reader takes snapshot after snapshot and checks each against itself: the listing is
    /// exactly the ids it contains, every count agrees with it, every listed id reads the same record twice,
    /// and a sample of snapshots reads the same again once the writers are done.
    @Test func everyQueryOfASnapshotIsOfItsMoment() throws {
        let seed = testSeed("SnapshotConsistencyTests", default: UInt64.random(in: 0...UInt64.max))
        let directory = TemporaryStore("snapshot-consistency")
        var options = testOptions(segmentSize: 1 << 16, fsync: .always)
        options.compaction.background = false
        let store = try directory.open(options: options)
        let typeTags: [UInt32] = [1, 2, 70]  // 70: counted outside the small-tag table
        let stop = Atomic<Bool>(false)
        let writerFailures = Shared<[String]>([])
        let writers = ThreadGroup()
        writers.start(2) { writer in
            var random = SplitMix64(seed: seed &+ UInt64(writer))
            var mine: [ObjectID] = []
            var serial: UInt64 = 0
            func payload() -> [UInt8] {
                serial += 1
                return withUnsafeBytes(of: (UInt64(writer) << 56) | serial) { Array($0) }
                    + Array(repeating: UInt8(truncatingIfNeeded: serial), count: Int(random.next() % 200))
            }
            func tag() -> UInt32 { typeTags[Int(random.next() % UInt64(typeTags.count))] }
            func takeOne() -> ObjectID? {
                mine.isEmpty ? nil : mine.remove(at: Int(random.next() % UInt64(mine.count)))
            }
            do {
                while !stop.load(ordering: .relaxed) {
                    switch random.next() % 10 {
                    case 0..<4:
                        mine.append(try store.put(typeTag: tag(), payload: payload()))
                    case 4..<6:
                        guard let id = takeOne() else { continue }
                        try store.put(id, typeTag: tag(), payload: payload())
                        mine.append(id)
                    case 6..<8:
                        guard let id = takeOne() else { continue }
                        try store.delete(id)
                    case 8:
                        var added: [ObjectID] = []
                        try store.write { batch in
                            for _ in 0..<(1 + random.next() % 8) {
                                switch random.next() % 3 {
                                case 0:
                                    if let id = takeOne() { batch.delete(id) }
                                default:
                                    let id = takeOne() ?? store.newID()
                                    batch.put(id, typeTag: tag(), payload: payload())
                                    added.append(id)
                                }
                            }
                        }
                        mine += added
                    default:
                        if writer == 0, random.next() % 8 == 0 { _ = try store.compact() }
                    }
                }
            } catch {
                writerFailures.withLock { $0.append("writer \(writer): \(error)") }
            }
        }

        var problems: [String] = []
        func problem(_ text: String) { if problems.count < 20 { problems.append(text) } }
        /// What a snapshot listed, to read it again at the end.
        var kept: [(view: Snapshot, records: [ObjectID: Record])] = []
        var snapshots = 0
        let start = ContinuousClock.now
        while ContinuousClock.now - start < .milliseconds(1500) || snapshots < 30, problems.isEmpty,
            ContinuousClock.now - start < .seconds(20)
        {
            let view = try store.snapshot()
            snapshots += 1
            let ids = view.ids()
            if ids != ids.sorted() || Set(ids).count != ids.count { problem("ids not increasing") }
            if view.count() != ids.count { problem("count \(view.count()) but \(ids.count) ids listed") }
            var records: [ObjectID: Record] = [:]
            for id in ids {
                guard view.contains(id), let record = try view.get(id) else {
                    problem("listed \(id), but contains \(view.contains(id)), get nil (sequence \(view.sequence))")
                    continue
                }
                if try view.get(id) != record { problem("\(id) read twice differs") }
                records[id] = record
            }
            let highest = ids.last?.rawValue ?? 0
            for raw in 1...(highest + 16) where records[ObjectID(raw)] == nil && view.contains(ObjectID(raw)) {
                problem("\(raw) contained but not listed")
            }
            let counts = view.countsByType()
            if counts.values.reduce(0, +) != ids.count { problem("countsByType \(counts) sum != \(ids.count)") }
            for tag in Set(typeTags).union(counts.keys) {
                let ofType = view.ids(ofType: tag)
                let expected = ids.filter { records[$0]?.typeTag == tag }
                if ofType != expected { problem("ids(ofType: \(tag)) \(ofType.count) != \(expected.count)") }
                if view.count(ofType: tag) != ofType.count || (counts[tag] ?? 0) != ofType.count {
                    problem("count(ofType: \(tag)) \(view.count(ofType: tag)), countsByType \(counts[tag] ?? 0)")
                }
            }
            if view.spaceByType().mapValues(\.records) != counts {
                problem("spaceByType \(view.spaceByType().mapValues(\.records)) != countsByType \(counts)")
            }
            if snapshots % 16 == 0, kept.count < 24 { kept.append((view, records)) }
        }
        // More writes happened since every kept snapshot was taken; after a last compaction, each still
        // reads as it did.
        stop.store(true, ordering: .relaxed)
        writers.join()
        _ = try store.compact()
        for (view, records) in kept {
            if view.ids() != records.keys.sorted() || view.count() != records.count {
                problem("snapshot \(view.sequence) lists differently later")
            }
            for (id, record) in records where try view.get(id) != record {
                problem("snapshot \(view.sequence) reads \(id) differently later")
            }
        }
        #expect(writerFailures.withLock { $0 }.isEmpty, "\(writerFailures.withLock { $0 })")
        #expect(problems.isEmpty, "seed \(seed), \(snapshots) snapshots: \(problems)")
        #expect(!problems.isEmpty || (snapshots >= 30 && !kept.isEmpty))
        try store.close()
    }
}
