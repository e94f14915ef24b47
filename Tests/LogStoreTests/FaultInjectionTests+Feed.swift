import Foundation
import TestSupport
import Testing

@testable @_spi(Testing) import LogStore

#if canImport(Glibc)
    import Glibc
#endif

/// A store whose write or sync failed commits nothing more until it is opened again: its change feeds end
/// after the batches committed before, instead of waiting until it closes.
extension FaultInjectionTests {
    @Test(arguments: [FaultInjector.Operation.sync, .write])
    func aFailedStoreEndsItsFeeds(operation: FaultInjector.Operation) async throws {
        let directory = TemporaryStore("fault-feed")
        let faults = FaultInjector()
        let store = try directory.open(options: testOptions(faults: faults))
        let feed = try store.changes()
        let reader = Task {
            var sequences: [UInt64] = []
            for await change in feed { sequences.append(change.sequence) }
            return sequences
        }
        let acknowledged = try (0..<3).map { index in
            try store.write { $0.put(store.newID(), typeTag: 1, payload: [UInt8(index)]) }.sequence
        }
        faults.inject(operation, .error(operation == .write ? ENOSPC : EIO))
        #expect(throws: LogStoreError.self) { try store.put(typeTag: 1, payload: [9]) }
        // The feed ends on its own; a watchdog cancels it (and the test fails) should it not.
        let watchdog = Task {
            try await Task.sleep(for: .seconds(20))
            reader.cancel()
            Issue.record("the feed of a failed store did not end")
        }
        let delivered = await reader.value
        watchdog.cancel()
        #expect(Array(delivered.prefix(acknowledged.count)) == acknowledged)
        try? store.close()
    }
}
