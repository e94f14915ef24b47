import Foundation
import Synchronization
import TestSupport
import Testing

@testable @_spi(Testing) import LogStore

/// How soon a committed batch reaches the change feed of a follower.
extension FollowerTests {
    /// A writer commits single puts with `FsyncPolicy.always`, a few milliseconds apart, on a thread of its
    /// own; a follower (another `Store`, reading the files as another process would) reads its change
    /// feed. The latency of a batch is from the moment its `write` returned to the moment the feed
    /// delivered it (none when the feed was first: it reads the file, which the write fills before it
    /// syncs). The feed is read by a task that runs on a thread of its own (as an application's would,
    /// rather than on the shared pool, which the other tests keep busy with blocking work). Prints the
    /// percentiles; the 99th must stay within 20 ms.
    @Test func theFeedOfAFollowerDeliversACommitWithin20Milliseconds() async throws {
        let directory = TemporaryStore("follow-latency")
        var options = Self.writerOptions(segmentSize: 4 << 20)
        options.fsyncPolicy = .always
        let writer = try directory.open(options: options)
        try writer.put(typeTag: 1, payload: [0])
        let follower = try directory.open(options: Self.followerOptions())
        let received = Mutex<[UInt64: ContinuousClock.Instant]>([:])
        let feed = try follower.changes()
        let executor = ThreadExecutor()
        defer { executor.stop() }
        let consumer = Task(executorPreference: executor) {
            for await change in feed {
                let now = ContinuousClock.now
                received.withLock { $0[change.sequence] = now }
            }
        }
        defer { consumer.cancel() }

        let count = 300
        let committed = Mutex<[UInt64: ContinuousClock.Instant]>([:])
        let done = DispatchSemaphore(value: 0)
        let failure = Mutex<LogStoreError?>(nil)
        Thread.detachNewThread {
            var random = SplitMix64(seed: 0x1A7E)
            do {
                for index in 0..<count {
                    let batch = try writer.write {
                        $0.put(writer.newID(), typeTag: 2, payload: payloadBytes(100, seed: UInt64(index)))
                    }
                    let now = ContinuousClock.now
                    committed.withLock { $0[batch.sequence] = now }
                    usleep(UInt32(500 + random.next() % 3_500))
                }
            } catch let error as LogStoreError {
                failure.withLock { $0 = error }
            } catch {}
            done.signal()
        }
        while done.wait(timeout: .now()) == .timedOut { try await Task.sleep(for: .milliseconds(10)) }
        #expect(failure.withLock { $0 } == nil)
        let newest = try writer.snapshot().sequence
        let deadline = ContinuousClock.now + .seconds(10)
        while received.withLock({ $0[newest] }) == nil, ContinuousClock.now < deadline {
            try await Task.sleep(for: .milliseconds(5))
        }
        let commits = committed.withLock { $0 }
        let deliveries = received.withLock { $0 }
        var latencies: [Duration] = []
        for (sequence, time) in commits {
            guard let delivered = deliveries[sequence] else {
                Issue.record("batch \(sequence) was not delivered")
                continue
            }
            latencies.append(max(.zero, delivered - time))
        }
        latencies.sort()
        try #require(latencies.count == count)
        func percentile(_ share: Double) -> Duration {
            latencies[min(latencies.count - 1, Int(Double(latencies.count) * share))]
        }
        let (p50, p90, p99, worst) = (
            percentile(0.5), percentile(0.9), percentile(0.99), latencies[latencies.count - 1]
        )
        print("follower latency over \(count) commits (fsync always): p50 \(p50), p90 \(p90), p99 \(p99), max \(worst)")
        #expect(p99 <= .milliseconds(20), "p99 \(p99)")
    }
}
