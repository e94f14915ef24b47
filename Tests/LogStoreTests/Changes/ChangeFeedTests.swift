import Foundation
import Synchronization
import TestSupport
import Testing

@testable @_spi(Testing) import LogStore

/// The change feed: every committed batch delivered once, in order, as `write` reported it; nothing for a
/// refused batch; bounded memory for observers that fall behind.
@Suite struct ChangeFeedTests {
    /// Options without background compaction or collection, so every batch is the test's own.
    func quietOptions(keptChanges: Int = 65_536) -> StoreOptions {
        var options = testOptions(segmentSize: 1 << 16)
        options.compaction.background = false
        options.keptChanges = keptChanges
        return options
    }

    /// Reads `count` elements of `feed`.
    func collect(_ feed: StoreChanges, count: Int) async -> [StoreChange] {
        var changes: [StoreChange] = []
        for await change in feed {
            changes.append(change)
            if changes.count == count { break }
        }
        return changes
    }

    @Test func writeReportsWhatItsBatchDid() throws {
        let directory = TemporaryStore("feed-report")
        let store = try directory.open(options: quietOptions())
        let leaf = try store.put(typeTag: 3, payload: [1], pinned: false)
        let parent = try store.put(typeTag: 2, references: [leaf], payload: [2])
        let root = store.newID()
        let set = try store.write { batch in
            batch.put(root, typeTag: 5, payload: [3])
            batch.setRoot("top", to: root)
        }
        #expect(set.written == [ObjectChange(id: root, typeTag: 5)])
        #expect(set.rootsSet == [RootChange(name: "top", target: root)])
        #expect(set.deleted.isEmpty && set.freed.isEmpty)
        // Deleting the parent frees the unpinned leaf only it referred to, by reference counting.
        let deleted = try store.write { $0.delete(parent) }
        #expect(deleted.deleted == [ObjectChange(id: parent, typeTag: 2)])
        #expect(deleted.freed == [ObjectChange(id: leaf, typeTag: 3)])
        #expect(deleted.freedBy == .referenceCounting)
        #expect(deleted.sequence == set.sequence + 1)
        let removed = try store.write { $0.removeRoot("top") }
        #expect(removed.rootsRemoved == ["top"])
        try store.close()
    }

    @Test func markSweepBatchesSayWhoFreed() async throws {
        let directory = TemporaryStore("feed-sweep")
        let store = try directory.open(options: quietOptions())
        let feed = try store.changes()
        // A cycle of unpinned objects nothing else refers to: only mark-sweep frees it.
        let a = store.newID()
        let b = store.newID()
        try store.write { batch in
            batch.put(a, typeTag: 7, references: [b], payload: [1], pinned: false)
            batch.put(b, typeTag: 8, references: [a], payload: [2], pinned: false)
        }
        let report = try store.collectGarbage()
        #expect(report.collected == 2)
        let changes = await collect(feed, count: 2)
        guard case .batch(let sweep) = changes.last else {
            Issue.record("expected a batch, got \(changes)")
            return
        }
        #expect(sweep.freedBy == .markSweep)
        #expect(Set(sweep.freed) == [ObjectChange(id: a, typeTag: 7), ObjectChange(id: b, typeTag: 8)])
        #expect(sweep.written.isEmpty && sweep.deleted.isEmpty)
        try store.close()
    }

    /// A model-based property test: random batches, some refused; the feed delivers exactly the batches
    /// `write` acknowledged, in order, with what `write` reported, and their frees match a recount of the
    /// model's reachability.
    @Test func feedDeliversEveryAcknowledgedBatchOnceInOrder() async throws {
        var random = SplitMix64(seed: testSeed("ChangeFeedTests", default: UInt64.random(in: 0...UInt64.max)))
        let directory = TemporaryStore("feed-property")
        let store = try directory.open(options: quietOptions())
        let feed = try store.changes()
        var acknowledged: [CommittedBatch] = []
        var live: [ObjectID: (tag: UInt32, references: [ObjectID], pinned: Bool)] = [:]
        var refused = 0
        for _ in 0..<300 {
            var batch = WriteBatch()
            let operations = 1 + Int(random.next() % 4)
            for _ in 0..<operations {
                let roll = random.next() % 10
                let liveIDs = Array(live.keys)
                if roll < 5 || liveIDs.isEmpty {
                    let id = store.newID()
                    let references = (0..<Int(random.next() % 3)).compactMap { _ in
                        liveIDs.randomElement(using: &random)
                    }
                    batch.put(
                        id, typeTag: UInt32(random.next() % 5), references: references, payload: [UInt8(roll)],
                        pinned: random.next() % 3 != 0)
                } else if roll < 8, let id = liveIDs.randomElement(using: &random) {
                    // May be refused (still referenced) or name a dead object (not found).
                    batch.delete(id)
                } else if let id = liveIDs.randomElement(using: &random) {
                    batch.setRoot("r\(random.next() % 3)", to: id)
                }
            }
            do {
                let committed = try await store.write(batch)
                acknowledged.append(committed)
                for change in committed.written {
                    for operation in batch.operations {
                        if case .put(let record) = operation, record.id == change.id {
                            live[change.id] = (record.typeTag, record.references, record.isPinned)
                        }
                    }
                }
                for change in Array(committed.deleted) + Array(committed.freed) {
                    #expect(live[change.id]?.tag == change.typeTag, "type tag of \(change.id)")
                    live[change.id] = nil
                }
            } catch {
                refused += 1
            }
            if random.next() % 40 == 0 {
                // Mark-sweep frees what nothing reaches (cycles, unpinned objects never referenced): its batch
                // is delivered like any other, and the model follows it.
                let before = acknowledged.count
                let report = try store.collectGarbage()
                // A pass that frees nothing writes no batch: there is nothing to read then.
                let sweeps =
                    report.collected > 0
                    ? await collect(try store.changes(after: acknowledged.last?.sequence ?? 0), count: 1) : []
                if case .batch(let sweep) = sweeps.first {
                    #expect(sweep.freedBy == .markSweep && sweep.freed.count == report.collected)
                    acknowledged.append(sweep)
                    for change in sweep.freed {
                        #expect(live[change.id]?.tag == change.typeTag, "type tag of \(change.id)")
                        live[change.id] = nil
                    }
                }
                #expect(acknowledged.count == before + (report.collected > 0 ? 1 : 0))
            }
            // The batches' deleted and freed lists are complete: the model holds exactly what the store does.
            #expect(try store.count() == live.count)
        }
        // What the engine says is live is what the feed's batches leave live.
        for (id, object) in live { #expect(try store.get(id)?.typeTag == object.tag, "object \(id)") }
        #expect(try store.count() == live.count)
        let delivered = await collect(feed, count: acknowledged.count)
        #expect(delivered == acknowledged.map { StoreChange.batch($0) })
        let sequences = delivered.map(\.sequence)
        #expect(sequences == sequences.sorted() && Set(sequences).count == sequences.count)
        #expect(refused > 0, "the workload should include refused batches")
        try store.close()
    }

    @Test func refusedBatchesAreNotDelivered() async throws {
        let directory = TemporaryStore("feed-refused")
        let store = try directory.open(options: quietOptions())
        let target = try store.put(typeTag: 1, payload: [1])
        let holder = try store.put(typeTag: 1, references: [target], payload: [2])
        let feed = try store.changes()
        #expect(throws: LogStoreError.self) { try store.delete(target) }  // still referenced
        #expect(throws: LogStoreError.self) { try store.delete(ObjectID(999_999)) }  // not live
        var stale = WriteBatch()
        stale.expect(holder, version: 1)
        stale.put(holder, typeTag: 1, payload: [3])
        #expect(throws: LogStoreError.self) { try store.write(stale) }  // conflict
        let good = try store.put(typeTag: 9, payload: [4])
        let delivered = await collect(feed, count: 1)
        guard case .batch(let batch) = delivered.first else {
            Issue.record("expected a batch")
            return
        }
        #expect(batch.written == [ObjectChange(id: good, typeTag: 9)])
        try store.close()
    }

    @Test func observerThatFallsBehindGetsMissedAndBoundedMemory() async throws {
        let directory = TemporaryStore("feed-behind")
        let store = try directory.open(options: quietOptions(keptChanges: 100))
        let start = try store.changes()
        for round in 0..<50 {
            try store.write { batch in
                for index in 0..<10 { batch.put(store.newID(), typeTag: 1, payload: [UInt8(round), UInt8(index)]) }
            }
        }
        // 500 changes written, 100 kept: the first element says which batches were missed.
        let delivered = await collect(start, count: 11)
        guard case .missed(let after, let through) = delivered.first else {
            Issue.record("expected missed, got \(String(describing: delivered.first))")
            return
        }
        #expect(through > after)
        let batches = delivered.dropFirst().compactMap { change -> CommittedBatch? in
            if case .batch(let batch) = change { return batch } else { return nil }
        }
        #expect(batches.count == 10)
        #expect(batches.first?.sequence == through + 1)
        #expect(batches.last?.sequence == store.pipeline.changes.newest)
        #expect(throws: LogStoreError.self) { try store.changes(after: after) }
        try store.close()
    }

    @Test func feedStartsAfterAKeptSequence() async throws {
        let directory = TemporaryStore("feed-after")
        let store = try directory.open(options: quietOptions())
        let first = try store.write { $0.put(store.newID(), typeTag: 1, payload: [1]) }
        let second = try store.write { $0.put(store.newID(), typeTag: 2, payload: [2]) }
        let delivered = await collect(try store.changes(after: first.sequence), count: 1)
        #expect(delivered == [.batch(second)])
        let error = #expect(throws: LogStoreError.self) { try store.changes(after: second.sequence + 5) }
        #expect(error?.code == .invalidArgument)
        try store.close()
        // Batches before the open are not kept in memory.
        let reopened = try directory.open(options: quietOptions())
        let old = #expect(throws: LogStoreError.self) { try reopened.changes(after: first.sequence) }
        #expect(old?.code == .historyUnavailable)
        try reopened.close()
    }

    @Test func closingTheStoreEndsTheFeedAndCancellingStopsAWait() async throws {
        let directory = TemporaryStore("feed-end")
        let store = try directory.open(options: quietOptions())
        let feed = try store.changes()
        let waiting = Task { await collect(feed, count: 5) }
        try store.put(typeTag: 1, payload: [1])
        try await Task.sleep(for: .milliseconds(20))
        try store.close()
        let delivered = await waiting.value
        #expect(delivered.count == 1)
        let other = try directory.open(options: quietOptions())
        let cancelled = Task { await collect(try other.changes(), count: 1) }
        try await Task.sleep(for: .milliseconds(20))
        cancelled.cancel()
        #expect(try await cancelled.value.isEmpty)
        try other.close()
    }

    /// A reader that never reads does not stall writers: many batches commit while it holds its feed, and
    /// the log keeps no more than its limit.
    @Test func idleObserversDoNotStallWriters() throws {
        let directory = TemporaryStore("feed-idle")
        let store = try directory.open(options: quietOptions(keptChanges: 64))
        let feeds = try (0..<100).map { _ in try store.changes() }
        for round in 0..<2_000 { try store.put(typeTag: 1, payload: [UInt8(truncatingIfNeeded: round)]) }
        #expect(store.pipeline.changes.oldestPosition >= store.pipeline.changes.newest - 64)
        withExtendedLifetime(feeds) {}
        try store.close()
    }
}
