import Foundation
import TestSupport
import Testing

@testable @_spi(Testing) import LogStore

#if canImport(Glibc)
    import Glibc
#endif

/// A full disk (writes failing with `ENOSPC`): an open with nothing to write works; one that must save
/// a torn tail fails saying how much space it needs, and changes nothing.
@Suite struct FullDiskTests {
    @Test func aStoreOpensOnAFullDiskAfterAWriteFailedForSpace() throws {
        let directory = TemporaryStore("full-disk")
        let faults = FaultInjector()
        var acknowledged: [ObjectID: [UInt8]] = [:]
        let store = try directory.open(options: testOptions(faults: faults))
        for index in 0..<20 {
            let payload = payloadBytes(100, seed: UInt64(index))
            acknowledged[try store.put(typeTag: 1, payload: payload)] = payload
        }
        faults.inject(.write, .error(ENOSPC), times: 1_000_000)
        #expect(throws: LogStoreError.self) { try store.put(typeTag: 1, payload: [1]) }
        try? store.close()

        // The disk is still full.
        let reopened = try directory.open(options: testOptions(faults: faults))
        for (id, payload) in acknowledged { #expect(try reopened.get(id)?.payload == payload) }
        try? reopened.close()
    }

    @Test func aTornTailOnAFullDiskFailsSayingWhatSpaceItNeeds() throws {
        let directory = TemporaryStore("full-disk-torn")
        do {
            let store = try directory.open(options: testOptions())
            for index in 0..<20 { try store.put(typeTag: 1, payload: payloadBytes(100, seed: UInt64(index))) }
            try store.close()
        }
        try forgetCleanClose(directory.path)  // as a crash would leave it
        let path = try #require(directory.segmentFiles().last)
        let handle = try #require(FileHandle(forWritingAtPath: path))
        handle.seekToEndOfFile()
        handle.write(Data([1, 2, 0, 0, 9, 9, 9]))
        handle.closeFile()
        let before = directory.fileNames()
        let segment = try Data(contentsOf: URL(fileURLWithPath: path))

        let faults = FaultInjector()
        faults.inject(.write, .error(ENOSPC), times: 1_000_000)
        #expect {
            try directory.open(options: testOptions(faults: faults))
        } throws: { error in
            guard let error = error as? LogStoreError else { return false }
            return error.code == .ioError && error.message.contains("no space left")
                && error.message.contains("needs 7 bytes") && (error.underlying as? SystemError)?.errno == ENOSPC
        }
        #expect(directory.fileNames() == before, "no side file left behind")
        #expect(try Data(contentsOf: URL(fileURLWithPath: path)) == segment, "nothing cut")

        faults.clear()
        let store = try directory.open(options: testOptions(faults: faults))
        #expect(store.recovery?.bytesCut == 7)
        try store.close()
    }
}
