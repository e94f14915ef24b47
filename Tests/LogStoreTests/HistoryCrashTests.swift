import Foundation
import LogStoreExamples
import TestSupport
import Testing

@testable @_spi(Testing) import LogStore

/// A writer that retains a moment every 15 commits (`logstore-crash-harness crash-writer --retain-every`)
/// is killed with SIGKILL at a random point, eight times over one store. After each kill the store is
/// reopened (cutting a torn tail), compacted whole and swept; then every moment whose `retained` line was
/// printed holds exactly the objects acknowledged before that line, every other moment left is a prefix of
/// the commits and sound, and no half-made moment is left once the next retain ran.
@Suite struct HistoryCrashTests {
    @Test func killedWriterKeepsEveryRetainedMomentExact() throws {
        let directory = TemporaryStore("history-crash")
        var random = SplitMix64(seed: 0x4157_0A1E)
        /// The store's objects as of the last reopen (acknowledged or not: a commit the kill cut off before
        /// its line may have made it) and those acknowledged since, and each acknowledged moment's ids.
        var acknowledged: [ObjectID] = []
        var moments: [String: Set<ObjectID>] = [:]
        for round in 0..<8 {
            let child = try RunningTool(
                [
                    "crash-writer", directory.path, "--seed", "\(77 + round)", "--segment-size", "\(1 << 16)",
                    "--retain-every", "15", "--retain-prefix", "r\(round)",
                ], binary: .crashHarness)
            _ = child.waitForFirstLine(timeout: 60)
            usleep(UInt32(30_000 + Int(random.next() % 300_000)))
            child.killNow()
            let result = child.finish()
            #expect(result.signaled, "round \(round): the writer ended early: \(result.output)")
            var lines = result.stdout.split(separator: "\n", omittingEmptySubsequences: false)
            lines.removeLast()
            for line in lines {
                let fields = line.split(separator: " ").map(String.init)
                switch fields.first {
                case "put", "batch":
                    acknowledged += fields.dropFirst().compactMap(UInt64.init).map { ObjectID($0) }
                case "retained" where fields.count == 3:
                    moments[fields[1]] = Set(acknowledged)
                default:
                    Issue.record("round \(round): unexpected line \"\(line)\"")
                }
            }
            let store = try Store.open(at: directory.path, options: HistoryTests.options)
            _ = try store.rewriteAllSegments()
            try store.collectGarbage()
            let all = Set(try store.ids())
            #expect(Set(acknowledged).isSubset(of: all), "round \(round): acknowledged objects lost")
            acknowledged = all.sorted()
            for moment in try store.historyUsage().moments {
                let retained = try Store.open(at: directory.path, retained: moment.name)
                let ids = Set(try retained.ids())
                if let expected = moments[moment.name] {
                    let (more, fewer) = (ids.subtracting(expected).count, expected.subtracting(ids).count)
                    #expect(
                        ids == expected,
                        "round \(round): \(moment.name): \(more) objects more, \(fewer) fewer than acknowledged before it"
                    )
                } else {
                    // Retained, but killed before it said so: still a prefix of the store's commits.
                    #expect(ids.isSubset(of: all), "round \(round): moment \(moment.name) holds unknown objects")
                }
                for id in ids.prefix(20) {
                    let matches = try retained.withPayload(of: id) { _, bytes in sameBytes(bytes, crashPayload(for: id))
                    }
                    #expect(matches == true, "round \(round): payload of \(id) in \(moment.name)")
                }
                try retained.close()
            }
            #expect(
                Set(moments.keys).isSubset(of: Set(try store.historyUsage().moments.map(\.name))),
                "round \(round): an acknowledged moment is missing")
            try store.close()
        }
        #expect(moments.count >= 8, "only \(moments.count) moments were acknowledged")
        print("history crash test: 8 kills, \(acknowledged.count) objects and \(moments.count) moments acknowledged")
    }
}
