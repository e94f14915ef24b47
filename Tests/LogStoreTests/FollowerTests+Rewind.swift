import Foundation
@_spi(Engine) import LogStoreFormat
@_spi(Engine) import LogStoreSystem
import Synchronization
import TestSupport
import Testing

@testable @_spi(Testing) import LogStore

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// A follower delivers a batch once it is in the writer's file, which may be before the writer's sync
/// returned. Should a power cut then lose it, the store goes back to an older batch, and the follower's
/// feed says so.
extension FollowerTests {
    /// A writer in a child process writes and is killed; the end of its last segment is then cut off, as a
    /// power cut that lost what the disk had not yet stored would leave it (here after the follower
    /// delivered it); a new writer cuts the torn tail and commits two batches. The feed says that the
    /// store went back to the newest batch that survived, then delivers the two.
    @Test func theChangeFeedSaysWhenTheStoreWentBack() async throws {
        let directory = TemporaryStore("follow-rewound")
        let child = try RunningTool(
            ["crash-writer", directory.path, "--seed", "91", "--segment-size", "\(1 << 20)"], binary: .crashHarness)
        #expect(child.waitForFirstLine(timeout: 60), "the writer did not start")
        let follower = try Store.open(at: directory.path, options: Self.followerOptions())
        let delivered = Mutex<[StoreChange]>([])
        let feed = try follower.changes()
        let consumer = Task {
            for await change in feed { delivered.withLock { $0.append(change) } }
        }
        try await Task.sleep(for: .milliseconds(300))
        child.killNow()
        _ = child.finish()
        // Everything the writer wrote reaches the follower.
        var newestDelivered: UInt64 = 0
        for _ in 0..<200 {
            _ = try follower.refresh()
            newestDelivered = try follower.snapshot().sequence
            if delivered.withLock({ $0.last?.sequence }) == newestDelivered { break }
            try await Task.sleep(for: .milliseconds(10))
        }

        // The power cut: the last segment loses the second half of what was written to it (the file is
        // longer: its space is allocated ahead).
        let newestSegment = follower.state.withLock { state in
            state.segments.all.max { $0.file.number < $1.file.number }
        }
        let last = try #require(newestSegment)
        let header = UInt64(LogFormat.segmentHeaderSize)
        let reloads = follower.followerReloads.count
        #expect(truncate(last.file.path, off_t(header + (last.size - header) / 2)) == 0)
        // The follower notices the shorter segment and loads the store again before a new writer opens it
        // (else the load could find the new writer's batches too).
        let noticed = ContinuousClock.now + .seconds(20)
        while follower.followerReloads.count == reloads, ContinuousClock.now < noticed {
            try await Task.sleep(for: .milliseconds(10))
        }
        #expect(follower.followerReloads.count > reloads, "the follower did not load the store again")
        let writer = try directory.open(options: Self.writerOptions(segmentSize: 1 << 20))
        let survived = try writer.snapshot().sequence
        #expect(survived < newestDelivered, "the cut should lose batches the follower delivered")
        let after = try (0..<2).map { round in
            try writer.write { $0.put(writer.newID(), typeTag: 3, payload: [UInt8(round)]) }
        }

        let deadline = ContinuousClock.now + .seconds(20)
        while delivered.withLock({ $0.last }) != .batch(after[1]), ContinuousClock.now < deadline {
            try await Task.sleep(for: .milliseconds(10))
        }
        consumer.cancel()
        let changes = delivered.withLock { $0 }
        let rewound = changes.firstIndex(of: .rewound(to: survived))
        #expect(rewound != nil, "\(changes.suffix(4))")
        if let rewound {
            // Before: the batches up to the newest delivered, one by one; after: the new writer's two.
            #expect(changes[..<rewound].last?.sequence == newestDelivered)
            #expect(Array(changes[(rewound + 1)...]) == after.map { .batch($0) })
        }
        try Self.expectSameContents(follower, as: writer)
        try writer.close()
        try follower.close()
    }
}
