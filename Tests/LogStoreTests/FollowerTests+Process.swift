import Foundation
import LogStoreExamples
import Synchronization
import TestSupport
import Testing

@testable @_spi(Testing) import LogStore

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Following a writer in another process, and how soon a batch reaches a follower's change feed.
extension FollowerTests {
    /// `logstore-crash-harness crash-writer` writes in a child process and prints a line per acknowledged
    /// commit (`put ID`, or `batch M ID1 ID2 ...` for members under the manifest `M` and its root); this
    /// process follows it read-only through the change feed, kills it with SIGKILL mid-work, and checks
    /// that the feed delivered every acknowledged batch, in order, each as the writer wrote it.
    @Test func aFollowerSeesEveryAcknowledgedBatchOfAWriterKilledInAnotherProcess() async throws {
        let directory = TemporaryStore("follow-killed")
        for round in 0..<3 {
            // The writer's batches follow the store's newest one; each acknowledgement line is one batch.
            let base = try Self.newestSequence(directory) + 1
            let child = try RunningTool(
                ["crash-writer", directory.path, "--seed", "\(77 + round)", "--segment-size", "\(1 << 16)"],
                binary: .crashHarness)
            // The store exists once the child acknowledged its first commit.
            #expect(child.waitForFirstLine(timeout: 60), "round \(round): the writer did not start")
            let follower = try Store.open(at: directory.path, options: Self.followerOptions())
            let opened = try follower.snapshot().sequence
            let delivered = Mutex<[StoreChange]>([])
            let feed = try follower.changes()
            let consumer = Task {
                for await change in feed { delivered.withLock { $0.append(change) } }
            }
            try await Task.sleep(for: .milliseconds(200 + 100 * round))
            child.killNow()
            let result = child.finish()
            #expect(result.signaled && result.status == SIGKILL, "round \(round): \(result.output)")

            // Only complete lines are acknowledgements.
            var lines = result.stdout.split(separator: "\n", omittingEmptySubsequences: false)
            lines.removeLast()
            let acknowledged = try lines.map { try Self.expectedBatch(String($0)) }
            let newest = base + UInt64(acknowledged.count) - 1
            let deadline = ContinuousClock.now + .seconds(20)
            while delivered.withLock({ $0.last?.sequence ?? opened }) < newest, ContinuousClock.now < deadline {
                try await Task.sleep(for: .milliseconds(5))
            }
            consumer.cancel()
            let changes = delivered.withLock { $0 }
            #expect(!changes.contains { if case .missed = $0 { true } else { false } }, "round \(round): \(changes)")
            let batches = changes.compactMap { change -> CommittedBatch? in
                if case .batch(let batch) = change { batch } else { nil }
            }
            #expect(batches.map(\.sequence) == Array(opened + 1..<opened + 1 + UInt64(batches.count)), "round \(round)")
            #expect(batches.count >= Int(newest - opened), "round \(round): \(batches.count) batches delivered")
            // Batches up to the open are in the follower's state; those after it came through the feed.
            for (index, expected) in acknowledged.enumerated() {
                let sequence = base + UInt64(index)
                if sequence <= opened {
                    for change in expected.written {
                        #expect(try follower.header(of: change.id)?.typeTag == change.typeTag, "round \(round)")
                    }
                } else if let batch = batches.first(where: { $0.sequence == sequence }) {
                    #expect(batch.written == expected.written, "round \(round): batch \(sequence)")
                    #expect(batch.rootsSet == expected.rootsSet, "round \(round): batch \(sequence)")
                    #expect(batch.deleted.isEmpty && batch.freed.isEmpty)
                } else {
                    Issue.record("round \(round): acknowledged batch \(sequence) was not delivered")
                }
            }
            #expect(follower.followerReloads.count == 0, "round \(round): \(follower.followerReloads)")
            try follower.close()
            // The next round's writer opens the store (cutting a torn tail) and goes on.
            print("round \(round): \(acknowledged.count) acknowledged, \(batches.count) followed after batch \(opened)")
        }
    }

    /// The batch an acknowledgement line of the crash writer stands for (its written objects and roots).
    private static func expectedBatch(_ line: String) throws -> CommittedBatch {
        let fields = line.split(separator: " ")
        let numbers = try fields.dropFirst().map { try #require(UInt64($0), "line \"\(line)\"") }.map { ObjectID($0) }
        switch fields.first {
        case "put" where numbers.count == 1:
            return CommittedBatch(sequence: 0, written: [ObjectChange(id: numbers[0], typeTag: CrashTag.single)])
        case "batch" where numbers.count >= 3:
            let manifest = numbers[0]
            let members = numbers.dropFirst().map { ObjectChange(id: $0, typeTag: CrashTag.member) }
            return CommittedBatch(
                sequence: 0, written: ObjectChanges(members + [ObjectChange(id: manifest, typeTag: CrashTag.manifest)]),
                rootsSet: [RootChange(name: "batch-\(manifest)", target: manifest)])
        default:
            Issue.record("unexpected line \"\(line)\"")
            return CommittedBatch(sequence: 0)
        }
    }

    /// The newest batch of the store in `directory` (0 when there is no store yet), as a read-only open
    /// finds it: a torn tail a killed writer left is not counted (the next writer cuts it).
    private static func newestSequence(_ directory: TemporaryStore) throws -> UInt64 {
        guard !directory.segmentFiles().isEmpty else { return 0 }
        let store = try Store.open(at: directory.path, options: followerOptions())
        defer { try? store.close() }
        return try store.snapshot().sequence
    }
}
