import Foundation
@_spi(Engine) import LogStoreFormat
import TestSupport
import Testing

@testable @_spi(Testing) import LogStore

/// Bad API input gets typed errors; the lock keeps a second writer out.
@Suite struct StoreAPITests {
    func code(_ body: () throws -> Void) -> LogStoreError.Code? {
        do {
            try body()
            return nil
        } catch let error as LogStoreError {
            return error.code
        } catch {
            return nil
        }
    }

    @Test func secondWriterGetsLocked() throws {
        let directory = TemporaryStore("lock")
        let store = try directory.open()
        #expect(code { _ = try directory.open() } == .locked)
        var readOnly = StoreOptions()
        readOnly.readOnly = true
        let reader = try directory.open(options: readOnly)
        #expect(try reader.count() == 0)
        try store.close()
        let again = try directory.open()
        try again.close()
    }

    @Test func badInputGetsTypedErrors() throws {
        let directory = TemporaryStore("api")
        let store = try directory.open(options: testOptions(segmentSize: 1 << 20))
        #expect(code { try store.put(ObjectID(1_000_000), typeTag: 1, payload: []) } == .unallocatedID)
        #expect(code { try store.put(ObjectID(0), typeTag: 1, payload: []) } == .unallocatedID)
        #expect(
            code { try store.put(typeTag: 1, payload: [UInt8](repeating: 0, count: LogStoreLimits.maxPayloadSize + 1)) }
                == .payloadTooLarge)
        let tooMany = [ObjectID](repeating: ObjectID(1), count: LogStoreLimits.maxReferenceCount + 1)
        #expect(code { try store.put(typeTag: 1, references: tooMany, payload: []) } == .tooManyReferences)
        #expect(code { try store.setRoot("", to: store.newID()) } == .invalidRootName)
        #expect(code { try store.setRoot(String(repeating: "x", count: 1025), to: store.newID()) } == .invalidRootName)
        #expect(code { try store.delete(store.newID()) } == .notFound)
        #expect(
            code { _ = try Store.open(at: directory.path + "/missing", options: StoreOptions(createIfMissing: false)) }
                == .storeMissing)
        #expect(
            code { _ = try Store.open(at: directory.path + "/x", options: StoreOptions(segmentSize: 10)) }
                == .invalidArgument)
        for spin in [Duration.microseconds(-1), .seconds(2)] {
            var options = StoreOptions()
            options.tuning.commitSpinLimit = spin
            #expect(code { _ = try Store.open(at: directory.path + "/y", options: options) } == .invalidArgument)
        }
        // Nothing of the failed calls reached the store.
        #expect(try store.count() == 0)

        let id = try store.put(typeTag: 1, payload: [1])
        try store.close()
        #expect(code { _ = try store.get(id) } == .closed)
        #expect(code { try store.put(typeTag: 1, payload: []) } == .closed)
        try store.close()  // closing twice is harmless
    }

    @Test func importedIDsMoveTheAllocator() throws {
        let directory = TemporaryStore("reserve")
        var store = try directory.open()
        try store.reserveIDs(through: ObjectID(5000))
        try store.put(ObjectID(5000), typeTag: 1, payload: [1])
        #expect(store.newID() > ObjectID(5000))
        let handedOut = store.newID()
        try store.put(typeTag: 1, payload: [2])  // persists the reservation past `handedOut`
        try store.close()
        store = try directory.open()
        #expect(store.newID() > handedOut)
        #expect(try store.get(ObjectID(5000))?.payload == [1])
        try store.close()
    }

    @Test func spaceByTypeCountsFrameAndPayloadBytesOfLiveRecords() throws {
        let directory = TemporaryStore("space-by-type")
        let store = try directory.open()
        var payloads: [UInt32: UInt64] = [:]
        for index in 0..<50 {
            let tag = UInt32(index % 3)
            // Type 2 is long enough to be compressed and compresses well: its frames are smaller than
            // its payloads.
            let size = 100 + index * 7 + (tag == 2 ? 600 : 0)
            let payload = tag == 2 ? [UInt8](repeating: 7, count: size) : payloadBytes(size, seed: UInt64(index))
            try store.put(typeTag: tag, payload: payload)
            payloads[tag, default: 0] += UInt64(size)
        }
        let dead = try store.put(typeTag: 0, payload: payloadBytes(500, seed: 99))
        try store.delete(dead)
        let space = try store.snapshot().spaceByType()
        #expect(space.mapValues(\.records) == [0: 17, 1: 17, 2: 16])
        #expect(space.mapValues(\.payloadBytes) == payloads)
        #expect(space.values.reduce(0) { $0 + $1.frameBytes } == (try store.statistics()).liveBytes)
        #expect(try #require(space[2]).ratio < 1 && (try #require(space[1]).ratio) > 1)
        try store.close()
    }

    @Test func statisticsCountLiveAndGarbageBytes() throws {
        let directory = TemporaryStore("stats")
        let store = try directory.open()
        let id = try store.put(typeTag: 3, payload: payloadBytes(1000, seed: 1))
        try store.put(id, typeTag: 3, payload: payloadBytes(1000, seed: 2))
        let stats = try store.statistics()
        #expect(stats.liveObjects == 1)
        #expect(stats.countsByType == [3: 1])
        #expect(stats.segments.count == 1)
        #expect(stats.garbageBytes > 1000)
        #expect(stats.liveBytes > 1000)
        // The rest is the header and the id reservation frame (the segment's first), which must stay.
        let segment = try [UInt8](Data(contentsOf: URL(fileURLWithPath: try #require(directory.segmentFiles().first))))
        let reservation = try segment.withUnsafeBytes { raw in
            try FrameDecoder.decode(raw, at: 48, format: FrameFormat(segment: raw)).get()
        }
        #expect(reservation.kind == .reserveIDs)
        #expect(stats.totalBytes == stats.liveBytes + stats.garbageBytes + 48 + UInt64(reservation.length))
        try store.close()
    }
}
