import Foundation
@_spi(Engine) import LogStoreFormat
import TestSupport
import Testing

@testable @_spi(Testing) import LogStore

/// What a follower does with bytes after the last batch it read that are not a whole batch: nothing at
/// first (a batch being written looks the same), and after a second a load of the whole store, which
/// reports damage only when it lasts. One test per kind of stop.
extension FollowerTests {
    /// The writer's segment being written and the end of its frames.
    private static func writerTail(_ writer: Store, _ directory: TemporaryStore) throws -> (path: String, end: UInt64) {
        let (number, size) = try #require(writer.pipeline.activeSegment)
        return (directory.path + "/" + LogFormat.segmentFileName(number), size)
    }

    private static func write(_ bytes: [UInt8], to path: String, at offset: UInt64) throws {
        let handle = try FileHandle(forWritingTo: URL(fileURLWithPath: path))
        try handle.seek(toOffset: offset)
        try handle.write(contentsOf: Data(bytes))
        try handle.close()
    }

    @Test func aTornTailIsLoadedAgainOnceAndThenReadPastWhenTheWriterWritesOverIt() throws {
        let directory = TemporaryStore("follow-torn")
        let writer = try directory.open(options: Self.writerOptions())
        try writer.put(typeTag: 1, payload: [1])
        let follower = try directory.open(options: Self.followerOptions())
        // What a writer that died in the middle of a write leaves: bytes after its last batch.
        let tail = try Self.writerTail(writer, directory)
        try Self.write([UInt8](repeating: 0x55, count: 16), to: tail.path, at: tail.end)

        #expect(try follower.refresh() == [])
        #expect(follower.followerReloads.count == 0)
        Thread.sleep(forTimeInterval: 1.1)
        #expect(try follower.refresh() == [])
        #expect(follower.followerReloads.count == 1, "\(follower.followerReloads)")
        #expect(follower.followerReloads.lastReason?.contains("reading stopped at offset \(tail.end)") == true)
        Thread.sleep(forTimeInterval: 1.1)
        #expect(try follower.refresh() == [])
        #expect(follower.followerReloads.count == 1, "loaded again for the same torn tail")

        // The writer's next batch goes where the torn bytes are.
        let next = try writer.write { $0.put(writer.newID(), typeTag: 2, payload: payloadBytes(100, seed: 1)) }
        #expect(try follower.refresh() == [next])
        try Self.expectSameContents(follower, as: writer)
    }

    @Test func damageBeforeValidBatchesIsReportedOnceALoadFindsItTwice() throws {
        let directory = TemporaryStore("follow-damage", unverifiedBecause: "a frame is damaged on purpose")
        let writer = try directory.open(options: Self.writerOptions())
        let first = try writer.put(typeTag: 1, payload: [1])
        let follower = try directory.open(options: Self.followerOptions())
        let tail = try Self.writerTail(writer, directory)
        try writer.put(typeTag: 2, payload: payloadBytes(200, seed: 2))
        try writer.put(typeTag: 3, payload: payloadBytes(200, seed: 3))
        // A byte of the first new batch flipped: valid batches follow it, so it is not a torn tail.
        let path = tail.path
        var byte = [UInt8](try Data(contentsOf: URL(fileURLWithPath: path))[Int(tail.end) + 40..<Int(tail.end) + 41])
        byte[0] ^= 0xFF
        try Self.write(byte, to: path, at: tail.end + 40)

        #expect(try follower.refresh() == [])
        Thread.sleep(forTimeInterval: 1.1)
        let error = #expect(throws: LogStoreError.self) { try follower.refresh() }
        #expect(error?.code == .corruptFrame, "\(String(describing: error))")
        #expect(error?.file == path && error?.offset == tail.end, "\(String(describing: error))")
        // Thrown again while the damage lasts, without loading again; the store keeps its state.
        let again = #expect(throws: LogStoreError.self) { try follower.refresh() }
        #expect(again?.code == .corruptFrame)
        #expect(follower.followerReloads.count == 0)
        #expect(try follower.get(first)?.payload == [1])
        #expect(try follower.snapshot().sequence == 1)
    }

    @Test func aSegmentShorterThanWhatWasReadOfItMakesTheFollowerLoadTheStoreAgain() throws {
        let directory = TemporaryStore("follow-shrunk", unverifiedBecause: "the segment loses its last batch")
        let writer = try directory.open(options: Self.writerOptions())
        try writer.put(typeTag: 1, payload: [1])
        let tail = try Self.writerTail(writer, directory)
        try writer.put(typeTag: 2, payload: [2])
        let follower = try directory.open(options: Self.followerOptions())
        try writer.close()
        // A disk that lost the last write: the segment ends before the batch the follower read.
        let handle = try FileHandle(forWritingTo: URL(fileURLWithPath: tail.path))
        try handle.truncate(atOffset: tail.end)
        try handle.close()
        let error = #expect(throws: LogStoreError.self) { try follower.refresh() }
        #expect(error?.code == .corruptFrame && error?.file == tail.path, "\(String(describing: error))")
        #expect(error?.message.contains("lost") == true, "\(String(describing: error))")
    }
}
