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
                var batch = WriteBatch()
                for _ in 0..<(1 + Int(random.next() % 5)) {
                    let roll = random.next() % 10
                    if roll < 6 || live.isEmpty {
                        let id =
                            random.next() % 4 == 0 && !live.isEmpty
                            ? live[Int(random.next() % UInt64(live.count))] : store.newID()
                        let references = (0..<Int(random.next() % 3)).compactMap { _ in
                            live.randomElement(using: &random)
                        }
                        batch.put(
                            id, typeTag: UInt32(random.next() % 70), references: references,
                            payload: (0..<Int(random.next() % 300)).map { _ in UInt8(truncatingIfNeeded: random.next())
                            },
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
            }
            let written = store.state.withLock { Summary($0) }
            var readOnly = options
            readOnly.readOnly = true
            let replayed = try directory.open(options: readOnly)
            let loaded = replayed.state.withLock { Summary($0) }
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
