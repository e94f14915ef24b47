import Foundation
@_spi(Engine) import LogStoreFormat
import TestSupport
import Testing

@testable @_spi(Testing) import LogStore

/// Object ids are 1 … 2^63 − 1 and sequence numbers 0 … 2^63 − 1: writes outside are refused with a
/// typed error, frames outside are corruption, and nothing traps near the limits.
@Suite struct IDRangeTests {
    let largest = LogStoreLimits.maxObjectID.rawValue

    @Test func aPutOfAnIDBeyondTheLargestIsRefused() throws {
        let directory = TemporaryStore("id-put")
        let store = try directory.open(options: testOptions())
        for id in [largest + 1, UInt64.max - 1, UInt64.max] {
            let error = try #require(throws: LogStoreError.self) {
                try store.put(ObjectID(id), typeTag: 1, payload: [])
            }
            #expect(error.code == .idOutOfRange, "\(error)")
            #expect(error.objects == [ObjectID(id)])
        }
        try store.close()
    }

    @Test func reservingIDsBeyondTheLargestIsRefused() throws {
        let directory = TemporaryStore("id-reserve")
        let store = try directory.open(options: testOptions())
        for id in [largest + 1, UInt64.max - 64, UInt64.max] {
            let error = try #require(throws: LogStoreError.self) { try store.reserveIDs(through: ObjectID(id)) }
            #expect(error.code == .idOutOfRange, "\(error)")
        }
        // Nothing moved: the allocator still starts at 1.
        #expect(store.newID() == ObjectID(1))
        try store.close()
    }

    @Test func reservingAnIDBeyondTheLargestReservableIsRefused() throws {
        let directory = TemporaryStore("id-reserve-headroom")
        let store = try directory.open(options: testOptions())
        let limit = LogStoreLimits.maxReservableID.rawValue
        #expect(limit == 1 << 62)
        for id in [limit + 1, largest - 1, largest] {
            let error = try #require(throws: LogStoreError.self) { try store.reserveIDs(through: ObjectID(id)) }
            #expect(error.code == .idOutOfRange, "\(error)")
            #expect(
                error.message.contains("ids above \(limit) (2^62) are refused unless they are reserved already"),
                "\(error)")
            #expect(error.objects == [ObjectID(id)])
        }
        // Nothing moved; the largest reservable id is accepted and leaves ids to hand out.
        #expect(store.newID() == ObjectID(1))
        try store.reserveIDs(through: LogStoreLimits.maxReservableID)
        try store.put(LogStoreLimits.maxReservableID, typeTag: 1, payload: [1])
        let next = try store.put(typeTag: 1, payload: [2])
        #expect(next == ObjectID(limit + 1))
        try store.close()
    }

    /// An id above 2^62 that is below the next id (reserved already) is accepted and changes nothing; one
    /// at or above the next id is refused.
    @Test func reservingAnIDAboveTheLimitThatIsReservedAlreadyIsANoOp() throws {
        let directory = TemporaryStore("id-reserve-reserved")
        let store = try directory.open(options: testOptions())
        let limit = LogStoreLimits.maxReservableID.rawValue
        store.reserveIDsUnchecked(through: ObjectID(limit + 1000))
        for id in [limit + 1, limit + 999, limit + 1000] { try store.reserveIDs(through: ObjectID(id)) }
        #expect(store.newID() == ObjectID(limit + 1001))
        let error = try #require(throws: LogStoreError.self) { try store.reserveIDs(through: ObjectID(limit + 1002)) }
        #expect(error.code == .idOutOfRange, "\(error)")
        #expect(store.newID() == ObjectID(limit + 1002))
        try store.close()
    }

    @Test func theLargestIDIsUsableAndThenTheIDsAreExhausted() throws {
        let directory = TemporaryStore("id-exhausted")
        let store = try directory.open(options: testOptions())
        // Only a test can move the allocator this far: reserveIDs(through:) stops at maxReservableID.
        store.reserveIDsUnchecked(through: ObjectID(largest - 1))
        try store.put(ObjectID(largest - 1), typeTag: 1, payload: [1])
        let last = store.newID()
        #expect(last == ObjectID(largest))
        try store.put(last, typeTag: 1, payload: [2])
        for _ in 0..<2 {
            let error = try #require(throws: LogStoreError.self) { try store.put(typeTag: 1, payload: [3]) }
            #expect(error.code == .exhausted, "\(error)")
        }
        try store.close()

        // Reopening a store that holds the largest id works (and reserved every id); no id is left.
        let reopened = try directory.open(options: testOptions())
        #expect(try reopened.get(ObjectID(largest))?.payload == [2])
        let error = try #require(throws: LogStoreError.self) { try reopened.put(typeTag: 1, payload: [4]) }
        #expect(error.code == .exhausted, "\(error)")
        try reopened.close()
        #expect(try Store.verify(at: directory.path).isSound)
    }

    /// A store whose newest segment ends with a committed frame carrying `id` and `sequence`, and
    /// the offset of that frame.
    private func storeEndingWithFrame(id: UInt64, sequence: UInt64, _ label: String) throws -> (
        TemporaryStore, String, UInt64
    ) {
        let directory = TemporaryStore(label, unverifiedBecause: "a frame with an out-of-range field is appended")
        let store = try directory.open(options: testOptions())
        try store.put(typeTag: 1, payload: [1, 2, 3])
        try store.close()
        try forgetCleanClose(directory.path)  // as a crash would leave it: the frame is judged on its own
        let path = try #require(directory.segmentFiles().last)
        let offset = try #require(FileManager.default.attributesOfItem(atPath: path)[.size] as? UInt64)
        try appendFrame(to: path, kind: .put, sequence: sequence, id: id, typeTag: 1)
        return (directory, path, offset)
    }

    @Test(arguments: [UInt64.max, (1 << 63) as UInt64])
    func aFrameWithAnIDBeyondTheLargestIsCorruption(id: UInt64) throws {
        let (directory, path, offset) = try storeEndingWithFrame(id: id, sequence: 2, "id-frame")
        try expectCorruption(directory, path, offset, mentioning: "object id \(id)")
    }

    @Test(arguments: [UInt64.max, (1 << 63) as UInt64])
    func aFrameWithASequenceNumberBeyondTheLargestIsCorruption(sequence: UInt64) throws {
        let (directory, path, offset) = try storeEndingWithFrame(id: 1, sequence: sequence, "sequence-frame")
        try expectCorruption(directory, path, offset, mentioning: "sequence number \(sequence)")
    }

    @Test func aManifestReservingBeyondTheLargestIDIsDamaged() throws {
        let directory = TemporaryStore(
            "id-manifest", unverifiedBecause: "the manifest reserves ids beyond the largest object id")
        let store = try directory.open(options: testOptions())
        try store.put(typeTag: 1, payload: [1])
        try store.close()
        let path = directory.path + "/" + SegmentManifest.fileName
        let bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: path)))
        var manifest = try bytes.withUnsafeBytes { try SegmentManifest.decode($0).get() }
        manifest.reservedIDs = largest + 2
        try Data(manifest.encoded()).write(to: URL(fileURLWithPath: path))
        var readOnly = testOptions()
        readOnly.readOnly = true
        for options in [testOptions(), readOnly] {
            let error = try #require(throws: LogStoreError.self) {
                try directory.open(options: options)
            }
            #expect(error.code == .corruptManifest, "\(error)")
            #expect(error.file == path && error.offset == 16, "\(error)")
            #expect(error.message.contains("reserved ids beyond the largest object id"), "\(error)")
        }
        let report = try Store.verify(at: directory.path)
        #expect(report.problems.contains { $0.file == path && $0.offset == 16 }, "\(report.problems)")
    }

    /// Opening (for writing and read-only) refuses the store naming the frame; verify reports it there.
    private func expectCorruption(
        _ directory: TemporaryStore, _ path: String, _ offset: UInt64, mentioning text: String
    ) throws {
        let size = try FileManager.default.attributesOfItem(atPath: path)[.size] as? UInt64
        var readOnly = testOptions()
        readOnly.readOnly = true
        for options in [testOptions(), readOnly] {
            let error = try #require(throws: LogStoreError.self) {
                try directory.open(options: options)
            }
            #expect(error.code == .corruptFrame, "\(error)")
            #expect(error.file == path)
            #expect(error.offset == offset)
            #expect(error.message.contains(text), "\(error)")
        }
        // Nothing was cut as if it were a torn tail.
        #expect(try FileManager.default.attributesOfItem(atPath: path)[.size] as? UInt64 == size)
        let report = try Store.verify(at: directory.path)
        #expect(!report.isSound)
        #expect(report.problems.contains { $0.file == path && $0.offset == offset && $0.message.contains(text) })
    }
}
