import Foundation
import Synchronization
import TestSupport
import Testing

@testable @_spi(Testing) import LogStore

/// Random batches on a writer, refreshes of a follower at random points, and the follower's change feed
/// read meanwhile: without compaction, what the refreshes return, and what the feed delivers, is exactly
/// what the writer's `write` returned (and its mark-sweep passes committed), batch for batch.
extension FollowerTests {
    /// The writer's side of the property test: the objects it keeps, and what each commit returned.
    private struct Model {
        var random: SplitMix64
        /// Pinned objects, and unpinned ones a pinned parent holds (parent → child).
        var pinned: [ObjectID] = []
        var children: [ObjectID: ObjectID] = [:]
        var committed: [CommittedBatch] = []

        mutating func pick(_ ids: [ObjectID]) -> ObjectID? {
            ids.isEmpty ? nil : ids[Int(random.next() % UInt64(ids.count))]
        }

        mutating func payload() -> [UInt8] {
            let size = 16 + Int(random.next() % 700)
            return payloadBytes(size, seed: random.next(), compressible: random.next() % 2 == 0)
        }
    }

    @Test func refreshesAndTheFeedReturnExactlyTheWritersBatches() async throws {
        let seed = testSeed("FollowerTests.property", default: 0xF011_0E55)
        let directory = TemporaryStore("follow-property")
        let writer = try directory.open(options: Self.writerOptions())
        let follower = try directory.open(options: Self.followerOptions())
        let delivered = Mutex<[StoreChange]>([])
        let feed = try follower.changes()
        let consumer = Task {
            for await change in feed { delivered.withLock { $0.append(change) } }
        }
        defer { consumer.cancel() }

        var model = Model(random: SplitMix64(seed: seed))
        var refreshed: [CommittedBatch] = []
        for step in 0..<400 {
            do {
                try commitRandomBatch(writer, &model)
            } catch let error as LogStoreError where error.code == .stillReferenced {
                // A delete the graph refuses writes nothing.
            }
            if model.random.next() % 5 == 0 {
                refreshed += try follower.refresh()
                #expect(
                    refreshed == model.committed,
                    "step \(step), seed \(seed): \(difference(refreshed, model.committed))")
            }
        }
        refreshed += try follower.refresh()
        #expect(refreshed == model.committed, "seed \(seed): \(difference(refreshed, model.committed))")
        #expect(model.committed.contains { $0.freedBy == .markSweep }, "seed \(seed): no mark-sweep batch")
        #expect(model.committed.contains { $0.freedBy == .referenceCounting && !$0.freed.isEmpty })
        try Self.expectSameContents(follower, as: writer, "seed \(seed)")
        #expect(follower.followerReloads.count == 0, "\(follower.followerReloads)")

        // The feed, read meanwhile, delivered the same batches, and nothing was missed.
        let newest = model.committed.last?.sequence ?? 0
        let deadline = ContinuousClock.now + .seconds(20)
        while delivered.withLock({ $0.last?.sequence ?? 0 }) < newest, ContinuousClock.now < deadline {
            try await Task.sleep(for: .milliseconds(5))
        }
        let changes = delivered.withLock { $0 }
        let batches = changes.compactMap { change -> CommittedBatch? in
            if case .batch(let batch) = change { batch } else { nil }
        }
        #expect(
            batches.count == changes.count,
            "seed \(seed): the feed missed batches: \(changes.filter { $0.sequence == 0 })")
        #expect(batches == model.committed, "seed \(seed): \(difference(batches, model.committed))")
    }

    /// With compaction passes among the random batches, the follower's feed still accounts for every batch
    /// once, in order: each delivered batch is the writer's, and the runs it reports missed (a load of the
    /// whole store after a pass) fill the gaps between them.
    @Test func theFeedAccountsForEveryBatchAcrossCompactions() async throws {
        let seed = testSeed("FollowerTests.compaction", default: 0xC0_4AC7)
        let directory = TemporaryStore("follow-property-compaction")
        let writer = try directory.open(options: Self.writerOptions())
        let follower = try directory.open(options: Self.followerOptions())
        let start = try follower.snapshot().sequence
        let delivered = Mutex<[StoreChange]>([])
        let feed = try follower.changes()
        let consumer = Task {
            for await change in feed { delivered.withLock { $0.append(change) } }
        }
        defer { consumer.cancel() }

        var model = Model(random: SplitMix64(seed: seed))
        var passes = 0
        for _ in 0..<300 {
            do {
                try commitRandomBatch(writer, &model)
            } catch let error as LogStoreError where error.code == .stillReferenced {}
            if model.random.next() % 40 == 0, try writer.compact().segmentsCompacted > 0 { passes += 1 }
        }
        #expect(passes > 0, "seed \(seed): no pass compacted anything")
        let newest = try writer.snapshot().sequence
        let deadline = ContinuousClock.now + .seconds(20)
        while delivered.withLock({ $0.last?.sequence ?? 0 }) < newest, ContinuousClock.now < deadline {
            try await Task.sleep(for: .milliseconds(5))
        }
        let expected = Dictionary(uniqueKeysWithValues: model.committed.map { ($0.sequence, $0) })
        var covered = start
        for change in delivered.withLock({ $0 }) {
            switch change {
            case .batch(let batch):
                #expect(batch.sequence == covered + 1, "seed \(seed): batch \(batch.sequence) after \(covered)")
                #expect(batch == expected[batch.sequence], "seed \(seed): batch \(batch.sequence)")
            case .missed(let after, let through):
                #expect(
                    after == covered && through > after, "seed \(seed): missed \(after)…\(through) after \(covered)")
            case .rewound(let to):
                Issue.record("seed \(seed): the store never goes back here, yet the feed says it went back to \(to)")
            }
            covered = change.sequence
        }
        #expect(covered == newest, "seed \(seed)")
        try Self.expectSameContents(follower, as: writer, "seed \(seed)")
        print("seed \(seed): \(passes) compaction passes, \(follower.followerReloads.count) loads of the whole store")
    }

    /// Where two lists of batches part, in words.
    func difference(_ found: [CommittedBatch], _ expected: [CommittedBatch]) -> String {
        guard let index = zip(found, expected).enumerated().first(where: { $0.element.0 != $0.element.1 })?.offset
        else {
            return found.count == expected.count
                ? "equal" : "\(found.count) batches where \(expected.count) were expected (equal up to the shorter)"
        }
        return "batch #\(index): found \(found[index]), expected \(expected[index])"
    }

    /// Commits one random batch on `writer` and records what it returned in `model`.
    private func commitRandomBatch(_ writer: Store, _ model: inout Model) throws {
        let choice = model.random.next() % 10
        switch choice {
        case 0, 1, 2:
            // New pinned objects, referring to older ones.
            var batch = WriteBatch()
            var added: [ObjectID] = []
            for _ in 0..<(1 + model.random.next() % 5) {
                let id = writer.newID()
                let references = model.pick(model.pinned).map { [$0] } ?? []
                batch.put(
                    id, typeTag: UInt32(model.random.next() % 6), references: references, payload: model.payload())
                added.append(id)
            }
            model.committed.append(try writer.write(batch))
            model.pinned += added
        case 3:
            // Overwrites, without references (nothing is freed).
            var batch = WriteBatch()
            for _ in 0..<(1 + model.random.next() % 4) {
                guard let id = model.pick(model.pinned) else { break }
                batch.put(id, typeTag: UInt32(model.random.next() % 6), payload: model.payload())
            }
            if batch.operations.isEmpty { return }
            model.committed.append(try writer.write(batch))
        case 4:
            // A parent holding an unpinned child.
            let (parent, child) = (writer.newID(), writer.newID())
            model.committed.append(
                try writer.write { batch in
                    batch.put(child, typeTag: 10, payload: model.payload(), pinned: false)
                    batch.put(parent, typeTag: 11, references: [child], payload: model.payload())
                })
            model.pinned.append(parent)
            model.children[parent] = child
        case 5:
            // A delete: when it held a child, reference counting frees the child with it.
            guard let id = model.pick(model.pinned) else { return }
            let committed = try writer.write { $0.delete(id) }
            model.committed.append(committed)
            model.pinned.removeAll { $0 == id }
            model.children[id] = nil
        case 6:
            // Roots, set and removed (also names that are not there).
            let name = "root-\(model.random.next() % 4)"
            if model.random.next() % 3 == 0 {
                model.committed.append(try writer.write { $0.removeRoot(name) })
            } else if let id = model.pick(model.pinned) {
                model.committed.append(try writer.write { $0.setRoot(name, to: id) })
            }
        case 7:
            // An unreachable cycle of unpinned objects, for mark-sweep.
            let (a, b) = (writer.newID(), writer.newID())
            model.committed.append(
                try writer.write { batch in
                    batch.put(a, typeTag: 20, references: [b], payload: model.payload(), pinned: false)
                    batch.put(b, typeTag: 21, references: [a], payload: model.payload(), pinned: false)
                })
        case 8:
            // A mark-sweep pass: its batch is the writer's own, read from the writer's change log.
            let before = try writer.snapshot().sequence
            guard try writer.collectGarbage().collected > 0 else { return }
            guard let swept = writer.pipeline.changes.batches(after: before).first else {
                Issue.record("the mark-sweep batch is not in the writer's change log")
                return
            }
            model.committed.append(swept)
        default:
            // A batch that puts an unpinned object and replaces its only referrer in the same batch.
            guard let parent = model.pick(Array(model.children.keys)) else { return }
            model.committed.append(
                try writer.write { batch in
                    batch.put(parent, typeTag: 11, payload: model.payload())
                })
            model.children[parent] = nil
        }
    }
}
