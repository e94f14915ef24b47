import Foundation
@_spi(Testing) import LogStore
import LogStoreObjects
import Synchronization
import TestSupport
import Testing

/// A counter object for ``ConflictRetryTests``.
final class RetryCounter: PersistentObject {
    static let typeName = "test.RetryCounter"
    var value = 0
    init() {}
}

/// Writers contending for one counter, every commit synced (the default policy): each retry after a
/// conflict waits for the conflicting commit to become visible and backs off, so every increment lands.
@Suite struct ConflictRetryTests {
    @Test func odbTransactionsOnOneCounterAllSucceed() throws {
        let directory = TemporaryStore("retry-odb")
        var options = StoreOptions(segmentSize: 1 << 20)
        options.compaction.background = false
        let odb = try ODB.open(at: directory.path, options: options)
        directory.closesAtTeardown(odb) { try $0.close() }
        let threads = 3
        let increments = 60
        let failures = Failures()
        DispatchQueue.concurrentPerform(iterations: threads) { _ in
            for _ in 0..<increments {
                do {
                    try odb.transaction { tx in
                        let count = try tx.value(at: ["stats", "count"], as: Int.self) ?? 0
                        try tx.setValue(count + 1, at: ["stats", "count"])
                    }
                } catch {
                    failures.add("\(error)")
                }
            }
        }
        #expect(failures.all.isEmpty, "\(failures.all.count) failed: \(failures.all.first ?? "")")
        #expect(try odb.value(at: ["stats", "count"]) == .int(threads * increments))
        try odb.close()
    }

    @Test func objectStoreUpdatesOfOneCounterAllSucceed() throws {
        let directory = TemporaryStore("retry-update")
        var options = StoreOptions(segmentSize: 1 << 20)
        options.compaction.background = false
        let objects = try ObjectStore.open(at: directory.path, options: options, types: [RetryCounter.self])
        directory.closesAtTeardown(objects) { try $0.close() }
        let setup = objects.makeContext()
        let counter = RetryCounter()
        let id = try setup.insert(counter)
        try setup.save()
        let threads = 8
        let increments = 25
        let failures = Failures()
        DispatchQueue.concurrentPerform(iterations: threads) { _ in
            for _ in 0..<increments {
                do {
                    try objects.update(attempts: 100) { context in
                        guard let counter = try context.object(id: id, as: RetryCounter.self) else { return }
                        counter.value += 1
                    }
                } catch {
                    failures.add("\(error)")
                }
            }
        }
        #expect(failures.all.isEmpty, "\(failures.all.count) failed: \(failures.all.first ?? "")")
        let final = try objects.makeContext().object(id: id, as: RetryCounter.self)
        #expect(final?.value == threads * increments)
        try objects.close()
    }
}

/// The async ``ObjectStore/update(attempts:isolation:_:)``: tasks contending for one counter, every commit
/// synced, all land.
@Suite struct AsyncUpdateTests {
    @Test func asyncUpdatesOfOneCounterAllSucceed() async throws {
        let directory = TemporaryStore("retry-update-async")
        var options = StoreOptions(segmentSize: 1 << 20)
        options.compaction.background = false
        let objects = try ObjectStore.open(at: directory.path, options: options, types: [RetryCounter.self])
        directory.closesAtTeardown(objects) { try $0.close() }
        let setup = objects.makeContext()
        let id = try setup.insert(RetryCounter())
        try setup.save()
        let tasks = 8
        let increments = 25
        let failures = try await withThrowingTaskGroup(of: Int.self) { group in
            for _ in 0..<tasks {
                group.addTask {
                    var failed = 0
                    for _ in 0..<increments {
                        do {
                            try await objects.update(attempts: 100) { context in
                                try context.object(id: id, as: RetryCounter.self)?.value += 1
                            }
                        } catch {
                            failed += 1
                        }
                    }
                    return failed
                }
            }
            return try await group.reduce(0, +)
        }
        #expect(failures == 0)
        #expect(try objects.makeContext().object(id: id, as: RetryCounter.self)?.value == tasks * increments)
        try objects.close()
    }

    @Test func aCancelledTaskStopsRetrying() async throws {
        let directory = TemporaryStore("retry-update-cancelled")
        let objects = try openObjects(directory, types: [RetryCounter.self])
        let task = Task {
            withUnsafeCurrentTask { $0?.cancel() }
            return try await objects.update { _ in 1 }
        }
        await #expect(throws: CancellationError.self) { try await task.value }
        try objects.close()
    }
}

/// ``ObjectStore/update(attempts:_:)`` saves changes to the objects its work loads, also those the work
/// does not keep (its context holds them until the save).
@Suite struct UpdateKeepsLoadedObjectsTests {
    @Test func aChangeToAnObjectTheWorkDoesNotKeepIsSaved() throws {
        let directory = TemporaryStore("update-keeps")
        try withObjects(directory, types: [RetryCounter.self]) { objects in
            let setup = objects.makeContext()
            let id = try setup.insert(RetryCounter())
            try setup.save()
            try objects.update { context in try context.object(id: id, as: RetryCounter.self)?.value += 1 }
            let final = try objects.makeContext().object(id: id, as: RetryCounter.self)
            #expect(final?.value == 1)
        }
    }
}

/// A retry after a conflict reads a state at least as new as the commit it conflicted with, even while
/// that commit's sync is still running (readers see a batch only once it is durable; the conflict check
/// sees it as soon as it is accepted).
@Suite struct RetryAfterSlowSyncTests {
    /// Options whose segment's next sync, once armed, signals `syncing` and then takes 300 ms.
    static func slowSyncOptions(_ faults: FaultInjector) -> StoreOptions {
        var options = StoreOptions(segmentSize: 1 << 20)
        options.compaction.background = false
        options.faultInjector = faults
        return options
    }

    static func armSlowSync(_ faults: FaultInjector, signalling syncing: DispatchSemaphore) {
        faults.perform(before: .sync, pathSuffix: ".seg") { _ in syncing.signal() }
        faults.inject(.sync, .delay(microseconds: 300_000), pathSuffix: ".seg")
    }

    @Test func anODBTransactionRetriesOnceTheConflictingCommitIsVisible() throws {
        let directory = TemporaryStore("retry-odb-slow-sync")
        let faults = FaultInjector()
        let odb = try ODB.open(at: directory.path, options: Self.slowSyncOptions(faults))
        directory.closesAtTeardown(odb) { try $0.close() }
        try odb.setValue(0, at: ["count"])
        let syncing = DispatchSemaphore(value: 0)
        Self.armSlowSync(faults, signalling: syncing)
        let first = DispatchGroup()
        let failures = Failures()
        DispatchQueue.global().async(group: first) {
            do {
                try odb.transaction { tx in
                    try tx.setValue((try tx.value(at: ["count"], as: Int.self) ?? 0) + 1, at: ["count"])
                }
            } catch {
                failures.add("first: \(error)")
            }
        }
        try #require(syncing.wait(timeout: .now() + 10) == .success, "the first commit syncs")
        // The first increment is accepted and syncing: this one reads 0 and conflicts with it until it is
        // visible, longer than 100 attempts without waiting take.
        var runs = 0
        try odb.transaction { tx in
            runs += 1
            try tx.setValue((try tx.value(at: ["count"], as: Int.self) ?? 0) + 1, at: ["count"])
        }
        first.wait()
        #expect(failures.all.isEmpty, "\(failures.all)")
        #expect(try odb.value(at: ["count"]) == .int(2))
        #expect(runs <= 3, "the retry waited for the conflicting commit instead of spinning")
        try odb.close()
    }

    /// Increments the counter `id` and returns it (kept until the save).
    static func increment(_ id: ObjectID, in context: ObjectContext) throws -> RetryCounter? {
        let counter = try context.object(id: id, as: RetryCounter.self)
        counter?.value += 1
        return counter
    }

    @Test func anUpdateRetriesOnceTheConflictingSaveIsVisible() throws {
        let directory = TemporaryStore("retry-update-slow-sync")
        let faults = FaultInjector()
        let objects = try ObjectStore.open(
            at: directory.path, options: Self.slowSyncOptions(faults), types: [RetryCounter.self])
        directory.closesAtTeardown(objects) { try $0.close() }
        let setup = objects.makeContext()
        let id = try setup.insert(RetryCounter())
        try setup.save()
        let syncing = DispatchSemaphore(value: 0)
        Self.armSlowSync(faults, signalling: syncing)
        let first = DispatchGroup()
        let failures = Failures()
        DispatchQueue.global().async(group: first) {
            do {
                try objects.update { context in try Self.increment(id, in: context) }
            } catch {
                failures.add("first: \(error)")
            }
        }
        try #require(syncing.wait(timeout: .now() + 10) == .success, "the first commit syncs")
        // With the default 3 attempts: the retry reads the first save once it is visible.
        try objects.update { context in try Self.increment(id, in: context) }
        first.wait()
        #expect(failures.all.isEmpty, "\(failures.all)")
        let final = try objects.makeContext().object(id: id, as: RetryCounter.self)
        #expect(final?.value == 2)
        try objects.close()
    }
}

/// Errors collected from several threads.
final class Failures: Sendable {
    private let list = Mutex<[String]>([])
    func add(_ failure: String) { list.withLock { $0.append(failure) } }
    var all: [String] { list.withLock { $0 } }
}
