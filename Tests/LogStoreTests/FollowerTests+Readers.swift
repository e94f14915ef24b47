import Foundation
import Synchronization
import TestSupport
import Testing

@testable @_spi(Testing) import LogStore

/// Readers of a follower see one committed state at a time while its change feed applies the writer's
/// batches: a batch that rewrites every object is seen whole or not at all.
extension FollowerTests {
    /// The payload of object `index` at `version`: the version, then filler.
    private static func payload(version: UInt64, index: Int) -> [UInt8] {
        withUnsafeBytes(of: version.littleEndian) { Array($0) } + payloadBytes(64 + index % 200, seed: version)
    }

    private static func version(of payload: [UInt8]) -> UInt64 {
        payload.prefix(8).enumerated().reduce(0) { $0 | UInt64($1.element) << (8 * UInt64($1.offset)) }
    }

    @Test func readersOfAFollowerSeeEveryBatchWholeOrNotAtAll() async throws {
        let directory = TemporaryStore("follow-readers")
        let writer = try directory.open(options: Self.writerOptions())
        let ids = (0..<40).map { _ in writer.newID() }
        try writer.write { batch in
            for (index, id) in ids.enumerated() {
                batch.put(id, typeTag: 1, payload: Self.payload(version: 0, index: index))
            }
        }
        let follower = try directory.open(options: Self.followerOptions())
        let feed = try follower.changes()
        let consumer = Task { for await _ in feed {} }
        defer { consumer.cancel() }

        let stop = Atomic<Bool>(false)
        let problems = Mutex<[String]>([])
        let snapshots = Atomic<Int>(0)
        let readers = (0..<2).map { _ in
            Thread {
                while !stop.load(ordering: .relaxed) {
                    do {
                        let view = try follower.snapshot()
                        let versions = try Set(
                            ids.map { id in
                                guard let record = try view.get(id) else { return UInt64.max }
                                return Self.version(of: record.payload)
                            })
                        if versions.count != 1 {
                            problems.withLock {
                                $0.append("snapshot \(view.sequence) mixes versions \(versions.sorted())")
                            }
                        }
                        // Plain gets between two batches may differ; each must be a version the writer wrote.
                        _ = try follower.get(ids[ids.count / 2])
                        snapshots.add(1, ordering: .relaxed)
                    } catch {
                        problems.withLock { $0.append("\(error)") }
                    }
                }
            }
        }
        for reader in readers { reader.start() }
        for version in 1...150 {
            try writer.write { batch in
                for (index, id) in ids.enumerated() {
                    batch.put(id, typeTag: 1, payload: Self.payload(version: UInt64(version), index: index))
                }
            }
        }
        let newest = try writer.snapshot().sequence
        let deadline = ContinuousClock.now + .seconds(20)
        while try follower.snapshot().sequence < newest, ContinuousClock.now < deadline {
            try await Task.sleep(for: .milliseconds(5))
        }
        stop.store(true, ordering: .relaxed)
        while readers.contains(where: { !$0.isFinished }) { try await Task.sleep(for: .milliseconds(5)) }
        #expect(problems.withLock { $0 }.isEmpty, "\(problems.withLock { $0.prefix(5) })")
        #expect(snapshots.load(ordering: .relaxed) > 0)
        #expect(directory.segmentFiles().count > 3, "the writer rolled no segment")
        try Self.expectSameContents(follower, as: writer)
    }
}
