import Foundation
import Synchronization
import TestSupport
import Testing

@testable @_spi(Testing) import LogStore

/// More observers than are woken at once: they are woken a few at a time, and still each gets every
/// batch once, in order, as `write` reported it — whether the store syncs every commit (the leader wakes
/// them as it starts a sync) or not (a timer does).
@Suite struct ManyObserversTests {
    static let policies: [FsyncPolicy] = [.always, .never]

    @Test(arguments: policies) func everyObserverGetsEveryBatchOnceInOrder(policy: FsyncPolicy) async throws {
        let directory = TemporaryStore("feed-many")
        var options = testOptions(segmentSize: 1 << 16)
        options.compaction.background = false
        options.fsyncPolicy = policy
        let store = try directory.open(options: options)
        let observers = ChangeLog.wakesAtOnce * 3 + 1
        let feeds = try (0..<observers).map { _ in try store.changes() }
        let shared = Shared()
        let readers = feeds.map { feed in
            Task.detached { () -> [CommittedBatch] in
                var seen: [CommittedBatch] = []
                for await change in feed {
                    guard case .batch(let batch) = change else {
                        Issue.record("unexpected \(change)")
                        break
                    }
                    seen.append(batch)
                    let end = shared.last.load(ordering: .acquiring)
                    if end != 0, batch.sequence >= end { break }
                }
                return seen
            }
        }
        // Four writers, single puts and small batches, so groups form and the rolling wake runs.
        let writers = (0..<4).map { writer in
            Task.detached {
                for round in 0..<150 {
                    let batch = try store.write { batch in
                        for item in 0..<(1 + round % 3) {
                            batch.put(
                                store.newID(), typeTag: UInt32(writer + 1), payload: [UInt8(truncatingIfNeeded: item)])
                        }
                    }
                    shared.committed.withLock { $0.append(batch) }
                }
            }
        }
        for writer in writers { try await writer.value }
        let written = shared.committed.withLock { $0.sorted { $0.sequence < $1.sequence } }
        // A final batch marks the end for observers already past the others.
        let end = try store.write { $0.put(store.newID(), typeTag: 9, payload: [9]) }
        shared.last.store(end.sequence, ordering: .releasing)
        let marker = try store.write { $0.put(store.newID(), typeTag: 9, payload: [10]) }
        let expected = written + [end, marker]
        // An observer left waiting would hang the test: after 30 s each is cancelled, and fails below.
        let watchdog = Task {
            try await Task.sleep(for: .seconds(30))
            for reader in readers { reader.cancel() }
        }
        defer { watchdog.cancel() }
        for reader in readers {
            let seen = await reader.value
            #expect(seen.count >= written.count + 1)
            #expect(Array(seen.prefix(expected.count)) == Array(expected.prefix(seen.count)))
        }
        try store.close()
    }

    /// What the writers and the observers share.
    final class Shared: Sendable {
        /// The batches the writers committed, as `write` reported them.
        let committed = Mutex<[CommittedBatch]>([])
        /// The sequence after which observers stop, once known.
        let last = Atomic<UInt64>(0)
    }
}
