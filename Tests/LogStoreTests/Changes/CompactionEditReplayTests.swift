import Foundation
@_spi(Engine) import LogStoreSystem
import TestSupport
import Testing

@testable @_spi(Testing) import LogStore

/// The index a writer holds after compaction passes have applied their edits (interleaved with writes and
/// mark-sweep passes) equals the index an open rebuilds by replaying the segments and hints on disk.
@Suite struct CompactionEditReplayTests {
    @Test func compactionEditsBuildTheIndexReplayBuilds() throws {
        var random = SplitMix64(
            seed: testSeed("CompactionEditReplayTests", default: UInt64.random(in: 0...UInt64.max)))
        for round in 0..<3 {
            let directory = TemporaryStore("compaction-edit-replay-\(round)")
            var options = testOptions(segmentSize: 1 << 16)
            options.compaction.background = false
            let store = try directory.open(options: options)
            var live: [ObjectID] = []
            var passes = 0
            for step in 0..<400 {
                var batch = WriteBatch()
                for _ in 0..<(1 + Int(random.next() % 5)) {
                    let roll = random.next() % 10
                    if roll < 6 || live.isEmpty {
                        let id =
                            random.next() % 3 == 0 && !live.isEmpty
                            ? live[Int(random.next() % UInt64(live.count))] : store.newID()
                        let references = (0..<Int(random.next() % 3)).compactMap { _ in
                            live.randomElement(using: &random)
                        }
                        let payload = (0..<Int(random.next() % 300)).map { _ in UInt8(truncatingIfNeeded: random.next())
                        }
                        batch.put(
                            id, typeTag: UInt32(random.next() % 70), references: references, payload: payload,
                            pinned: random.next() % 4 != 0)
                    } else if roll < 8 {
                        batch.delete(live[Int(random.next() % UInt64(live.count))])
                    } else if roll < 9 {
                        batch.setRoot("root\(random.next() % 4)", to: live[Int(random.next() % UInt64(live.count))])
                    } else {
                        batch.removeRoot("root\(random.next() % 4)")
                    }
                }
                if let committed = try? store.write(batch) {
                    live += committed.written.map(\.id)
                    let gone = Set((committed.deleted + committed.freed).map(\.id))
                    live.removeAll { gone.contains($0) }
                }
                if random.next() % 50 == 0 { try store.collectGarbage() }
                if step % 40 == 39 {
                    let report =
                        random.next() % 2 == 0
                        ? try store.compact()
                        : try store.compactSegments(garbageRatio: 0.3, limit: 1, progress: nil)
                    passes += report.segmentsCompacted > 0 ? 1 : 0
                }
            }
            #expect(passes > 0)
            let written = store.state.withLock { EditReplayTests.Summary($0) }
            var readOnly = options
            readOnly.readOnly = true
            let replayed = try directory.open(options: readOnly)
            let loaded = replayed.state.withLock { EditReplayTests.Summary($0) }
            #expect(written.entries == loaded.entries)
            #expect(written.roots == loaded.roots)
            #expect(written.typeCounts == loaded.typeCounts)
            #expect(written.liveCount == loaded.liveCount)
            for number in Set(written.segments.keys).union(loaded.segments.keys).sorted() {
                #expect(written.segments[number] == loaded.segments[number], "segment \(number)")
            }
            try replayed.close()
            try store.close()
        }
    }
}
