import Foundation
@_spi(Testing) import LogStore
import LogStoreObjects
import TestSupport
import Testing

/// ``ObjectStore/read(_:)``, ``ObjectStore/write(attempts:_:)`` and the asynchronous
/// ``ObjectStore/update(attempts:isolation:_:)``: what they see and save, their retries and cancellation,
/// and that saves waiting for their sync leave Swift concurrency's cooperative pool free.
@Suite(.serialized) struct AsyncAccessTests {
    /// Stores a counter for each of `values` and returns their ids.
    static func insertCounters(_ values: [Int], in objects: ObjectStore) throws -> [ObjectID] {
        let context = objects.makeContext()
        let ids = try values.map { value in
            let counter = RetryCounter()
            counter.value = value
            return try context.insert(counter)
        }
        try context.save()
        return ids
    }

    /// The value of the counter `id`, read by a new context.
    static func value(of id: ObjectID, in objects: ObjectStore) throws -> Int? {
        try objects.makeContext().object(id: id, as: RetryCounter.self)?.value
    }

    @Test func aReadSeesOneSnapshot() async throws {
        let directory = TemporaryStore("async-read")
        let objects = try openObjects(directory, types: [RetryCounter.self])
        let ids = try Self.insertCounters([0, 0], in: objects)
        let (first, second) = try await objects.read { context in
            let first = try context.object(id: ids[0], as: RetryCounter.self)?.value
            // After this context's first read, another context changes both counters in one save.
            let other = objects.makeContext()
            for id in ids { try other.object(id: id, as: RetryCounter.self)?.value = 1 }
            try other.save()
            let second = try context.object(id: ids[1], as: RetryCounter.self)?.value
            return (first, second)
        }
        #expect(first == 0)
        #expect(second == 0, "the second load read the snapshot of the first")
        #expect(try Self.value(of: ids[1], in: objects) == 1)
        try objects.close()
    }

    @Test func aReadDoesNotSaveWhatItsBodyChanges() async throws {
        let directory = TemporaryStore("async-read-unsaved")
        let objects = try openObjects(directory, types: [RetryCounter.self])
        let ids = try Self.insertCounters([5], in: objects)
        let seen = try await objects.read { context in
            let counter = try context.object(id: ids[0], as: RetryCounter.self)
            counter?.value += 1
            return counter?.value
        }
        #expect(seen == 6)
        #expect(try Self.value(of: ids[0], in: objects) == 5)
        try objects.close()
    }

    @Test func aWriteSavesAndReturnsWhatItsBodyReturned() async throws {
        let directory = TemporaryStore("async-write")
        let objects = try openObjects(directory, types: [RetryCounter.self])
        let runs = Tally()
        let id = try await objects.write { context in
            runs.add(1)
            let counter = RetryCounter()
            counter.value = 7
            return try context.insert(counter)
        }
        #expect(runs.value == 1)
        #expect(try Self.value(of: id, in: objects) == 7)
        try objects.close()
    }

    @Test func aWriteRunsAgainAfterAConflict() async throws {
        let directory = TemporaryStore("async-write-conflict")
        let objects = try openObjects(directory, types: [RetryCounter.self])
        let id = try Self.insertCounters([0], in: objects)[0]
        let runs = Tally()
        let value = try await objects.write { context in
            let run = runs.add(1)
            guard let counter = try context.object(id: id, as: RetryCounter.self) else { return -1 }
            counter.value += 1
            if run == 1 {
                // Another context saves a change to the counter after this run read it: this run's save
                // conflicts, and the next run reads the newer value.
                let other = objects.makeContext()
                try other.object(id: id, as: RetryCounter.self)?.value += 10
                try other.save()
            }
            return counter.value
        }
        #expect(runs.value == 2)
        #expect(value == 11)
        #expect(try Self.value(of: id, in: objects) == 11)
        try objects.close()
    }

    @Test func aWriteThrowsTheLastConflictAfterItsAttempts() async throws {
        let directory = TemporaryStore("async-write-gives-up")
        let objects = try openObjects(directory, types: [RetryCounter.self])
        let id = try Self.insertCounters([0], in: objects)[0]
        let runs = Tally()
        do {
            try await objects.write(attempts: 2) { context in
                runs.add(1)
                try context.object(id: id, as: RetryCounter.self)?.value += 1
                let other = objects.makeContext()
                try other.object(id: id, as: RetryCounter.self)?.value += 10
                try other.save()
            }
            Issue.record("every attempt conflicted, yet the write returned")
        } catch let error as ObjectStoreError {
            #expect(error.code == .conflict)
        }
        #expect(runs.value == 2)
        #expect(try Self.value(of: id, in: objects) == 20, "only the other context's saves landed")
        try objects.close()
    }

    /// An error of the work itself: not a conflict, not retried.
    struct WorkFailed: Error {}

    @Test func aWriteWhoseBodyThrowsSavesNothingAndDoesNotRunAgain() async throws {
        let directory = TemporaryStore("async-write-throws")
        let objects = try openObjects(directory, types: [RetryCounter.self])
        let runs = Tally()
        await #expect(throws: WorkFailed.self) {
            try await objects.write { context in
                runs.add(1)
                try context.insert(RetryCounter())
                throw WorkFailed()
            }
        }
        #expect(runs.value == 1)
        #expect(try objects.makeContext().count(of: RetryCounter.self) == 0)
        try objects.close()
    }

    @Test func aCancelledTaskThrowsCancellationErrorWithoutWriting() async throws {
        let directory = TemporaryStore("async-cancelled")
        let objects = try openObjects(directory, types: [RetryCounter.self])
        let runs = Tally()
        let write = Task {
            withUnsafeCurrentTask { $0?.cancel() }
            return try await objects.write { context in
                runs.add(1)
                return try context.insert(RetryCounter())
            }
        }
        await #expect(throws: CancellationError.self) { try await write.value }
        let read = Task {
            withUnsafeCurrentTask { $0?.cancel() }
            return try await objects.read { context in
                runs.add(1)
                return try context.count(of: RetryCounter.self)
            }
        }
        await #expect(throws: CancellationError.self) { try await read.value }
        #expect(runs.value == 0, "neither body ran")
        #expect(try objects.makeContext().count(of: RetryCounter.self) == 0)
        try objects.close()
    }

    /// Keeps a count of the runs of its updates' work, which runs on the actor.
    ///
    /// The actor runs other work while an update's commit waits, so its updates interleave, and those of
    /// one counter conflict with each other and retry: enough attempts for all of them to land.
    actor Incrementer {
        private(set) var runs = 0

        func increment(_ id: ObjectID, in objects: ObjectStore) async throws -> Int {
            try await objects.update(attempts: 50) { context in
                runs += 1
                guard let counter = try context.object(id: id, as: RetryCounter.self) else { return -1 }
                counter.value += 1
                return counter.value
            }
        }
    }

    @Test func updatesOnAnActorRunTheirWorkThereAndAllLand() async throws {
        let directory = TemporaryStore("async-update-actor")
        let objects = try openObjects(directory, types: [RetryCounter.self])
        let id = try Self.insertCounters([0], in: objects)[0]
        let incrementer = Incrementer()
        let increments = 6
        try await withThrowingTaskGroup(of: Int.self) { group in
            for _ in 0..<increments {
                group.addTask { try await incrementer.increment(id, in: objects) }
            }
            let values = try await group.reduce(into: []) { $0.append($1) }
            #expect(values.sorted() == Array(1...increments))
        }
        #expect(try Self.value(of: id, in: objects) == increments)
        #expect(await incrementer.runs >= increments)
        try objects.close()
    }

    /// How a test saves asynchronously.
    enum Access: String, CaseIterable, Sendable {
        case write, update
    }

    /// More saves at once than the pool has threads, every one waiting for a sync that lasts until a task
    /// on the pool has ticked: each sync ends only if the pool still runs tasks while the saves wait.
    @Test(arguments: Access.allCases)
    func waitingSavesLeaveThePoolFree(_ access: Access) async throws {
        let directory = TemporaryStore("async-pool-\(access)")
        let faults = FaultInjector()
        var options = StoreOptions(segmentSize: 1 << 20, fsyncPolicy: .always)
        options.compaction.background = false
        options.faultInjector = faults
        let objects = try ObjectStore.open(at: directory.path, options: options, types: [RetryCounter.self])
        directory.closesAtTeardown(objects) { try $0.close() }
        let cores = ProcessInfo.processInfo.activeProcessorCount
        let writers = 2 * cores + 2
        let ticker = PoolTicker()
        let syncs = Tally()
        let stalls = Tally()
        let inFlight = Tally()
        faults.perform(before: .sync, pathSuffix: ".seg", times: 1_000_000) { _ in
            syncs.add(1)
            // After one stall, the others need not wait too.
            if stalls.value == 0 && !ticker.waitForTicks(5, timeout: .seconds(3)) { stalls.add(1) }
        }
        try await withThrowingTaskGroup(of: Void.self) { group in
            for _ in 0..<writers {
                group.addTask {
                    inFlight.add(1)
                    defer { inFlight.add(-1) }
                    switch access {
                    case .write:
                        try await objects.write { context in _ = try context.insert(RetryCounter()) }
                    case .update:
                        try await objects.update { context in _ = try context.insert(RetryCounter()) }
                    }
                }
            }
            try await group.waitForAll()
        }
        await ticker.stop()
        faults.clear()
        #expect(syncs.value >= 1)
        #expect(stalls.value == 0, "the pool ran no task for 3 s while a save waited for its sync")
        #expect(inFlight.peak > cores, "more saves waited at once than the pool has threads")
        #expect(try objects.makeContext().count(of: RetryCounter.self) == writers)
        try objects.close()
    }
}
