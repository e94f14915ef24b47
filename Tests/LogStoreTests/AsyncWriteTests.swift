import Foundation
import TestSupport
import Testing

@testable @_spi(Testing) import LogStore

/// The engine's asynchronous ``Store/write(_:)`` and ``Store/sync()``: they commit and sync as the
/// synchronous forms do, throw the same errors, and leave Swift concurrency's cooperative pool free while
/// they wait.
@Suite(.serialized) struct AsyncWriteTests {
    @Test func anAsyncWriteCommitsTheBatch() async throws {
        let directory = TemporaryStore("async-engine-write")
        let store = try directory.open(options: testOptions())
        let id = store.newID()
        var batch = WriteBatch()
        batch.put(Record(id: id, typeTag: 3, payload: [1, 2, 3]))
        batch.setRoot("main", to: id)
        let committed = try await store.write(batch)
        #expect(committed.sequence > 0)
        #expect(committed.written == [ObjectChange(id: id, typeTag: 3)])
        #expect(committed.rootsSet == [RootChange(name: "main", target: id)])
        #expect(try store.get(id)?.payload == [1, 2, 3])
        #expect(try store.root(named: "main") == id)
        try await store.sync()
        try store.close()
    }

    @Test func anAsyncWriteThrowsWhatTheSynchronousOneThrows() async throws {
        let directory = TemporaryStore("async-engine-conflict")
        let store = try directory.open(options: testOptions(fsync: .never))
        let id = try store.put(typeTag: 1, payload: [1])
        var batch = WriteBatch()
        batch.put(Record(id: id, typeTag: 1, payload: [2]))
        batch.expect(id, version: nil)  // "not live", but it is
        do {
            try await store.write(batch)
            Issue.record("a batch whose expectation does not hold was written")
        } catch {
            #expect(error.code == .conflict)
            #expect(error.objects == [id])
        }
        #expect(try store.get(id)?.payload == [1])
        try store.close()
        await #expect(throws: LogStoreError.self) { try await store.sync() }
    }

    /// More writes at once than the pool has threads, every one waiting for a sync that lasts until a task
    /// on the pool has ticked: each sync ends only if the pool still runs tasks while the writes wait.
    @Test func waitingWritesLeaveThePoolFree() async throws {
        let directory = TemporaryStore("async-engine-pool")
        let faults = FaultInjector()
        let store = try directory.open(options: testOptions(segmentSize: 1 << 20, fsync: .always, faults: faults))
        let cores = ProcessInfo.processInfo.activeProcessorCount
        let writers = 2 * cores + 2
        let ticker = PoolTicker()
        let stalls = Tally()
        let inFlight = Tally()
        faults.perform(before: .sync, pathSuffix: ".seg", times: 1_000_000) { _ in
            // After one stall, the others need not wait too.
            if stalls.value == 0 && !ticker.waitForTicks(5, timeout: .seconds(3)) { stalls.add(1) }
        }
        let ids = try await withThrowingTaskGroup(of: ObjectID.self) { group in
            for writer in 0..<writers {
                group.addTask {
                    inFlight.add(1)
                    defer { inFlight.add(-1) }
                    let id = store.newID()
                    var batch = WriteBatch()
                    batch.put(Record(id: id, typeTag: 1, payload: [UInt8(writer)]))
                    try await store.write(batch)
                    return id
                }
            }
            return try await group.reduce(into: []) { $0.append($1) }
        }
        await ticker.stop()
        faults.clear()
        #expect(stalls.value == 0, "the pool ran no task for 3 s while a write waited for its sync")
        #expect(inFlight.peak > cores, "more writes waited at once than the pool has threads")
        #expect(try ids.allSatisfy { try store.get($0) != nil })
        try store.close()
    }
}
