import Foundation
@_spi(Engine) import LogStoreSystem
import TestSupport
import Testing

@testable @_spi(Testing) import LogStore

/// A store open read-only follows a writer beside it (here another `Store` of this process, which reads
/// the files as another process would): ``Store/refresh()`` returns exactly the batches the writer
/// committed, as its `write` returned them, and the store then reads what the writer's does; after a
/// compaction pass it loads the store again.
///
/// Serialized: the tests run writers and child processes flat out, and the latency test measures what a
/// follower achieves beside one writer, not beside all of them.
@Suite(.serialized) struct FollowerTests {
    /// Small segments, so that following crosses segment rolls; no background compaction or mark-sweep,
    /// so that every batch is the test's own.
    static func writerOptions(segmentSize: Int = 1 << 16) -> StoreOptions {
        var options = testOptions(segmentSize: segmentSize)
        options.compaction.background = false
        return options
    }

    static func followerOptions() -> StoreOptions {
        var options = StoreOptions()
        options.readOnly = true
        options.createIfMissing = false
        return options
    }

    /// What a reader of the store sees: every live object and every root.
    struct Contents: Equatable, CustomStringConvertible {
        var records: [Record]
        var roots: [String: ObjectID]
        var counts: [UInt32: Int]

        var description: String { "\(records.count) objects, roots \(roots), counts \(counts)" }
    }

    static func contents(_ store: Store) throws -> Contents {
        let records = try store.ids().map { id in try #require(try store.get(id), "object \(id) listed but not read") }
        return Contents(records: records, roots: try store.roots(), counts: try store.countsByType())
    }

    /// Checks that the follower reads what the writer reads, and that its incoming counts are right.
    static func expectSameContents(
        _ follower: Store, as writer: Store, _ comment: String = "", sourceLocation: SourceLocation = #_sourceLocation
    ) throws {
        let expected = try contents(writer)
        let found = try contents(follower)
        #expect(found == expected, "\(comment): follower \(found), writer \(expected)", sourceLocation: sourceLocation)
        #expect(follower.auditReferenceCounts() == [], "\(comment)", sourceLocation: sourceLocation)
        #expect(try follower.snapshot().sequence == writer.snapshot().sequence, sourceLocation: sourceLocation)
        // The segment counters compaction goes by: the follower keeps them as the writer does.
        func segments(_ store: Store) throws -> [String] {
            try store.statistics().segments.map { "\($0.number): \($0.bytes) bytes, \($0.liveBytes) live" }
        }
        #expect(try segments(follower) == segments(writer), "\(comment)", sourceLocation: sourceLocation)
    }

    // MARK: - Refresh

    @Test func refreshReturnsEachBatchAsTheWriterCommittedIt() throws {
        let directory = TemporaryStore("follow-batches")
        let writer = try directory.open(options: Self.writerOptions())
        let first = try writer.put(typeTag: 1, payload: Array("first".utf8))
        let follower = try directory.open(options: Self.followerOptions())
        #expect(try follower.refresh() == [])
        #expect(try follower.get(first)?.payload == Array("first".utf8))

        var expected: [CommittedBatch] = []
        // A put, an overwrite, a root, and a batch whose delete frees what only the deleted object held.
        let note = writer.newID()
        expected.append(try writer.write { $0.put(note, typeTag: 2, payload: Array("note".utf8)) })
        let leaf = writer.newID()
        let holder = writer.newID()
        expected.append(
            try writer.write { batch in
                batch.put(leaf, typeTag: 3, payload: Array("leaf".utf8), pinned: false)
                batch.put(holder, typeTag: 4, references: [leaf], payload: Array("holder".utf8))
                batch.setRoot("main", to: holder)
                batch.put(note, typeTag: 2, payload: Array("note, again".utf8))
            })
        expected.append(try writer.write { $0.removeRoot("main") })
        expected.append(try writer.write { $0.delete(holder) })
        expected.append(try writer.write { $0.removeRoot("absent") })

        let read = try follower.refresh()
        #expect(read == expected)
        #expect(read[3].deleted == [ObjectChange(id: holder, typeTag: 4)])
        #expect(read[3].freed == [ObjectChange(id: leaf, typeTag: 3)] && read[3].freedBy == .referenceCounting)
        try Self.expectSameContents(follower, as: writer)
        #expect(try follower.refresh() == [])
        #expect(follower.followerReloads.count == 0)
    }

    @Test func markSweepBatchesReachTheFollowerWithTheirTypeTags() throws {
        let directory = TemporaryStore("follow-sweep")
        let writer = try directory.open(options: Self.writerOptions())
        let follower = try directory.open(options: Self.followerOptions())
        // A cycle of unpinned objects that nothing reaches: reference counting never frees it.
        let (a, b, c) = (writer.newID(), writer.newID(), writer.newID())
        let cycle = try writer.write { batch in
            batch.put(a, typeTag: 7, references: [b], payload: [1], pinned: false)
            batch.put(b, typeTag: 8, references: [c], payload: [2], pinned: false)
            batch.put(c, typeTag: 9, references: [a], payload: [3], pinned: false)
        }
        #expect(try follower.refresh() == [cycle])
        let report = try writer.collectGarbage()
        #expect(report.collected == 3)
        let read = try follower.refresh()
        try #require(read.count == 1)
        #expect(read[0].sequence == cycle.sequence + 1)
        #expect(read[0].freedBy == .markSweep)
        #expect(
            read[0].freed == [
                ObjectChange(id: a, typeTag: 7), ObjectChange(id: b, typeTag: 8), ObjectChange(id: c, typeTag: 9),
            ])
        #expect(read[0].written.isEmpty && read[0].deleted.isEmpty)
        try Self.expectSameContents(follower, as: writer)
    }

    @Test func aWritableStoreIsAlwaysCurrent() throws {
        let directory = TemporaryStore("follow-writable")
        let writer = try directory.open(options: Self.writerOptions())
        try writer.put(typeTag: 1, payload: [1])
        #expect(try writer.refresh() == [])
        try writer.close()
        #expect(throws: LogStoreError.self) { try writer.refresh() }
    }

    @Test func refreshFollowsTheWriterAcrossSegmentsAndNewDictionaries() throws {
        let directory = TemporaryStore("follow-segments")
        let writer = try directory.open(options: Self.writerOptions())
        let follower = try directory.open(options: Self.followerOptions())
        var expected: [CommittedBatch] = []
        var read: [CommittedBatch] = []
        // Compressible payloads: the writer builds its shared dictionary after 256 KiB of them, and new
        // puts name it; 64 KiB segments roll every few dozen batches.
        for round in 0..<200 {
            expected.append(
                try writer.write { batch in
                    for item in 0..<8 {
                        batch.put(
                            writer.newID(), typeTag: UInt32(item),
                            payload: payloadBytes(200 + item * 50, seed: UInt64(round * 8 + item), compressible: true))
                    }
                })
            if round % 7 == 0 { read += try follower.refresh() }
        }
        read += try follower.refresh()
        #expect(read == expected)
        #expect(directory.fileNames().contains { $0.hasSuffix(".dict") }, "the writer built no dictionary")
        #expect(directory.segmentFiles().count > 3)
        try Self.expectSameContents(follower, as: writer)
        #expect(follower.followerReloads.count == 0)
    }

    @Test func aSegmentThatGrowsPastItsMappingIsMappedAgain() throws {
        let directory = TemporaryStore("follow-remap")
        // A clean close cuts the segment back to its frames: the follower maps just those.
        let first = try directory.open(options: Self.writerOptions(segmentSize: 1 << 20))
        for index in 0..<10 { try first.put(typeTag: 1, payload: payloadBytes(1_000, seed: UInt64(index))) }
        try first.close()
        let follower = try directory.open(options: Self.followerOptions())
        let mapped = try #require(follower.state.withLock { $0.segments.files.values.first?.mappedLength })
        // The next writer goes on in the same segment, far past that mapping.
        let writer = try directory.open(options: Self.writerOptions(segmentSize: 1 << 20))
        var expected: [CommittedBatch] = []
        for index in 0..<40 {
            expected.append(
                try writer.write {
                    $0.put(writer.newID(), typeTag: 2, payload: payloadBytes(2_000, seed: UInt64(index)))
                })
        }
        #expect(directory.segmentFiles().count == 1)
        #expect(try follower.refresh() == expected)
        let remapped = try #require(follower.state.withLock { $0.segments.files.values.first?.mappedLength })
        #expect(remapped > mapped, "mapped \(mapped) bytes, then \(remapped)")
        try Self.expectSameContents(follower, as: writer)
    }

    // MARK: - Compaction: the slow path

    @Test func refreshAfterCompactionLoadsTheStoreAgain() throws {
        let directory = TemporaryStore("follow-compaction")
        let writer = try directory.open(options: Self.writerOptions())
        let follower = try directory.open(options: Self.followerOptions())
        let ids = (0..<200).map { _ in writer.newID() }
        for version in 0..<6 {
            for start in stride(from: 0, to: ids.count, by: 40) {
                try writer.write { batch in
                    for id in ids[start..<start + 40] {
                        batch.put(
                            id, typeTag: 1, payload: payloadBytes(300, seed: id.rawValue &* 31 &+ UInt64(version)))
                    }
                }
            }
            if version == 2 { try writer.setRoot("main", to: ids[0]) }
            _ = try follower.refresh()
        }
        let before = try follower.snapshot()
        #expect(follower.followerReloads.count == 0)

        let report = try writer.compact()
        #expect(report.segmentsCompacted > 0)
        try writer.put(ids[1], typeTag: 2, payload: [9, 9])
        let afterCompaction = try follower.refresh()
        #expect(follower.followerReloads.count == 1, "\(follower.followerReloads)")
        // The batch after the pass was read before the load, or is covered by it.
        #expect(afterCompaction.allSatisfy { $0.sequence > before.sequence })
        try Self.expectSameContents(follower, as: writer, "after compact")
        // The snapshot taken before still reads the records it saw, from segments the pass deleted.
        #expect(try before.get(ids[1])?.typeTag == 1)

        try writer.rewriteAllSegments()
        _ = try follower.refresh()
        try Self.expectSameContents(follower, as: writer, "after rewriteAllSegments")
        let reloads = follower.followerReloads.count
        #expect(reloads >= 2)

        // Following goes on with the fast path afterwards.
        let next = try writer.write { $0.delete(ids[2]) }
        #expect(try follower.refresh() == [next])
        #expect(follower.followerReloads.count == reloads)
        try Self.expectSameContents(follower, as: writer, "after the rewrite")
    }

    @Test func theChangeFeedOfAFollowerSaysWhatALoadSkipped() async throws {
        let directory = TemporaryStore("follow-missed")
        let writer = try directory.open(options: Self.writerOptions())
        let follower = try directory.open(options: Self.followerOptions())
        let ids = (0..<100).map { _ in writer.newID() }
        for version in 0..<4 {
            try writer.write { batch in
                for id in ids {
                    batch.put(id, typeTag: 1, payload: payloadBytes(500, seed: id.rawValue + UInt64(version)))
                }
            }
        }
        let start = try follower.snapshot().sequence
        try writer.compact()
        let last = try writer.write { $0.delete(ids[0]) }
        let feed = try follower.changes(after: start)
        var seen: [StoreChange] = []
        for await change in feed {
            seen.append(change)
            if change.sequence >= last.sequence { break }
        }
        // Either the batch was read before the load, or the load covered it and the feed says so.
        #expect(seen == [.batch(last)] || seen == [.missed(after: start, through: last.sequence)], "\(seen)")
        try Self.expectSameContents(follower, as: writer)
    }
}
