import Foundation
import TestSupport
import Testing

@testable @_spi(Testing) import LogStore

#if canImport(Glibc)
    import Glibc
#endif

/// Failing system calls, injected through the store's syscall seam.
@Suite struct FaultInjectionTests {
    @Test(arguments: [FaultInjector.Operation.sync, .write])
    func failedIOIsAnErrorAndLosesNothingAcknowledged(operation: FaultInjector.Operation) throws {
        let directory = TemporaryStore("fault")
        let faults = FaultInjector()
        let store = try directory.open(options: testOptions(faults: faults))
        var acknowledged: [ObjectID: [UInt8]] = [:]
        for index in 0..<20 {
            let payload = payloadBytes(50 + index, seed: UInt64(index))
            acknowledged[try store.put(typeTag: 1, payload: payload)] = payload
        }
        faults.inject(operation, .error(operation == .write ? ENOSPC : EIO))
        #expect {
            try store.put(typeTag: 1, payload: [1, 2, 3])
        } throws: { error in
            (error as? LogStoreError)?.code == .storeFailed
        }
        // The store refuses further writes until reopened; reads still work.
        #expect {
            try store.put(typeTag: 1, payload: [4])
        } throws: { error in
            (error as? LogStoreError)?.code == .storeFailed
        }
        for (id, payload) in acknowledged { #expect(try store.get(id)?.payload == payload) }
        try? store.close()

        let reopened = try directory.open(options: testOptions())
        for (id, payload) in acknowledged { #expect(try reopened.get(id)?.payload == payload) }
        let next = try reopened.put(typeTag: 1, payload: [9])
        #expect(try reopened.get(next)?.payload == [9])
        try reopened.close()
        #expect(try Store.verify(at: directory.path).isSound)
    }

    @Test func shortWritesAreCompleted() throws {
        let directory = TemporaryStore("short")
        let faults = FaultInjector()
        let store = try directory.open(options: testOptions(faults: faults))
        faults.inject(.write, .shortWrite(7), times: 50)
        var written: [ObjectID: [UInt8]] = [:]
        for index in 0..<10 {
            let payload = payloadBytes(300, seed: UInt64(index))
            written[try store.put(typeTag: 1, payload: payload)] = payload
        }
        #expect(faults.calls(.write) > 10)
        try store.close()
        let reopened = try directory.open(options: testOptions())
        for (id, payload) in written { #expect(try reopened.get(id)?.payload == payload) }
        try reopened.close()
    }

    /// After a failed write the index still names the batch's records, whose bytes never reached the
    /// file: collection and compaction refuse to start rather than read them (reading past a mapped file's
    /// end ends the process with SIGBUS).
    @Test(arguments: [FaultInjector.Operation.write, .sync, .open])
    func collectionAndCompactionRefuseAfterAFailedWrite(operation: FaultInjector.Operation) throws {
        let directory = TemporaryStore("failed-then-collect")
        let faults = FaultInjector()
        var options = testOptions(faults: faults)
        options.compaction.background = false
        let store = try directory.open(options: options)
        let kept = try store.put(typeTag: 1, payload: payloadBytes(100, seed: 1))
        try store.setRoot("kept", to: kept)
        faults.inject(operation, .error(EIO))
        #expect(throws: LogStoreError.self) {
            try store.write { batch in
                let id = store.newID()
                batch.put(id, typeTag: 1, payload: payloadBytes(70_000, seed: 2), pinned: false)
                batch.setRoot("new", to: id)
            }
        }
        for attempt in [
            { _ = try store.collectGarbage() }, { _ = try store.compact() }, { _ = try store.rewriteAllSegments() },
        ] {
            #expect(throws: LogStoreError.self) { try attempt() }
            #expect(
                {
                    do { try attempt() } catch { return (error as? LogStoreError)?.code == .storeFailed }
                    return false
                }())
        }
        #expect(try store.get(kept)?.payload == payloadBytes(100, seed: 1))
        try? store.close()
        let reopened = try directory.open(options: testOptions())
        #expect(try reopened.root(named: "kept") == kept)
        #expect(try reopened.root(named: "new") == nil)
        try reopened.close()
    }

    /// After a failed sync, a later `sync()` that succeeds must not report durability: the kernel may
    /// have dropped the pages the failed one could not write.
    @Test func syncAfterAFailedSyncFails() throws {
        let directory = TemporaryStore("sync-after-failure")
        let faults = FaultInjector()
        let store = try directory.open(options: testOptions(fsync: .never, faults: faults))
        let id = try store.put(typeTag: 1, payload: [1, 2, 3])
        faults.inject(.sync, .error(EIO))
        #expect(throws: LogStoreError.self) { try store.sync() }
        #expect {
            try store.sync()
        } throws: { error in
            (error as? LogStoreError)?.code == .storeFailed
        }
        #expect(try store.get(id)?.payload == [1, 2, 3])
        try? store.close()
    }

    @Test func failedSegmentCreationFailsTheWrite() throws {
        let directory = TemporaryStore("create")
        let faults = FaultInjector()
        let store = try directory.open(options: testOptions(faults: faults))
        faults.inject(.open, .error(EACCES))
        #expect(throws: LogStoreError.self) { try store.put(typeTag: 1, payload: [1]) }
        try? store.close()
        let reopened = try directory.open(options: testOptions())
        #expect(try reopened.count() == 0)
        try reopened.close()
    }

    @Test func failedSyncOnCloseIsReported() throws {
        let directory = TemporaryStore("close")
        let faults = FaultInjector()
        let store = try directory.open(options: testOptions(fsync: .never, faults: faults))
        try store.put(typeTag: 1, payload: [1])
        faults.inject(.sync, .error(EIO))
        #expect(throws: LogStoreError.self) { try store.close() }
    }
}

extension FaultInjectionTests {
    @Test func closeAfterAFailureWithWritersWaitingReturns() throws {
        let directory = TemporaryStore("close-failed")
        let faults = FaultInjector()
        let store = try directory.open(options: testOptions(faults: faults))
        try store.put(typeTag: 1, payload: [1])
        faults.inject(.sync, .error(EIO), times: 1000)
        let group = ThreadGroup()
        group.start(8) { _ in
            for _ in 0..<5 { _ = try? store.put(typeTag: 1, payload: [2]) }
        }
        group.join()
        try? store.close()
        #expect(throws: LogStoreError.self) { try store.put(typeTag: 1, payload: [3]) }
    }
}
