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
                ReplayWorkload.write(
                    ReplayWorkload.batch(&random, live: live, store: store, reuseOneIn: 3), to: store, live: &live)
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
            try ReplayWorkload.expectReplayMatches(store, in: directory, options: options)
            try store.close()
        }
    }
}
