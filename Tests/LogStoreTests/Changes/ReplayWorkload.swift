import Foundation
@_spi(Engine) import LogStoreSystem
import TestSupport
import Testing

@testable @_spi(Testing) import LogStore

/// The random workload of the replay tests, and their comparison of a writer's index with a replay's.
enum ReplayWorkload {
    /// A batch of 1 to 5 random operations on the live objects `live`: puts (new objects, or one in
    /// `reuseOneIn` a live one again), deletes, roots set and removed. It may be refused (still referenced).
    static func batch(_ random: inout SplitMix64, live: [ObjectID], store: Store, reuseOneIn: UInt64) -> WriteBatch {
        var batch = WriteBatch()
        for _ in 0..<(1 + Int(random.next() % 5)) {
            let roll = random.next() % 10
            if roll < 6 || live.isEmpty {
                let id =
                    random.next() % reuseOneIn == 0 && !live.isEmpty
                    ? live[Int(random.next() % UInt64(live.count))] : store.newID()
                let references = (0..<Int(random.next() % 3)).compactMap { _ in live.randomElement(using: &random) }
                let payload = (0..<Int(random.next() % 300)).map { _ in UInt8(truncatingIfNeeded: random.next()) }
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
        return batch
    }

    /// Writes `batch` (a refused one changes nothing) and keeps `live` up to date with what it did.
    static func write(_ batch: WriteBatch, to store: Store, live: inout [ObjectID]) {
        guard let committed = try? store.write(batch) else { return }
        live += committed.written.map(\.id)
        let gone = Set((Array(committed.deleted) + Array(committed.freed)).map(\.id))
        live.removeAll { gone.contains($0) }
    }

    /// Expects the writer's index to equal the one a read-only open of its directory rebuilds.
    static func expectReplayMatches(_ store: Store, in directory: TemporaryStore, options: StoreOptions) throws {
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
    }
}
