import Foundation
@_spi(Engine) import LogStoreSystem
import TestSupport
import Testing

@testable @_spi(Testing) import LogStore

/// The index a writer builds by applying its batches' edits equals the index an open rebuilds by replaying
/// the same segments: entries, roots, counts and segment counters.
@Suite struct EditReplayTests {
    struct Summary: Equatable, CustomStringConvertible {
        var entries: [UInt64: String] = [:]
        var roots: [String: ObjectID] = [:]
        var typeCounts: [UInt32: Int] = [:]
        var liveCount = 0
        var segments: [UInt32: String] = [:]

        init(_ state: IndexState) {
            state.index.forEachLive { id, entry in
                entries[id] =
                    "\(entry.segment)@\(entry.offset)+\(entry.length) t\(entry.typeTag) pinned \(entry.isPinned)"
            }
            roots = state.roots
            typeCounts = state.typeCounts
            liveCount = state.liveCount
            for number in state.segments.numbers {
                guard let info = state.segments[number] else { continue }
                segments[number] =
                    "size \(info.size) live \(info.liveBytes) retained \(info.retainedBytes) dead \(info.deadRecords) "
                    + "control \(info.controlFrames) min \(info.minSequence)"
            }
        }

        var description: String { "\(liveCount) live, \(roots.count) roots, segments \(segments)" }
    }

    @Test func editsBuildTheIndexReplayBuilds() throws {
        var random = SplitMix64(seed: testSeed("EditReplayTests", default: UInt64.random(in: 0...UInt64.max)))
        for round in 0..<3 {
            let directory = TemporaryStore("edit-replay-\(round)")
            var options = testOptions(segmentSize: 1 << 16)
            options.compaction.background = false
            let store = try directory.open(options: options)
            var live: [ObjectID] = []
            for _ in 0..<400 {
                ReplayWorkload.write(
                    ReplayWorkload.batch(&random, live: live, store: store, reuseOneIn: 4), to: store, live: &live)
                if random.next() % 50 == 0 { try store.collectGarbage() }
            }
            try ReplayWorkload.expectReplayMatches(store, in: directory, options: options)
            try store.close()
        }
    }
}
