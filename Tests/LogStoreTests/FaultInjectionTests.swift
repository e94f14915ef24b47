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
