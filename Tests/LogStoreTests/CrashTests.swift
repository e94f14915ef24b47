import Foundation
import Testing

@testable @_spi(Testing) import LogStore

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Kills a writing process at random moments and checks that every acknowledged commit survives, that
/// every batch is all-or-nothing, and that the store stays sound across many crashes and recoveries.
///
/// `logstore-tool crash-writer` writes forever with `FsyncPolicy.always`, printing `put ID` or
/// `batch M ID1 ID2 ...` after each commit returns; a batch's members are referenced by its manifest `M`,
/// which the root `batch-M` points at, and every object's payload is ``crashPayload(for:)`` of its id.
@Suite struct CrashTests {
    /// Type tags the crash writer uses.
    private enum Tag {
        static let single: UInt32 = 1
        static let member: UInt32 = 2
        static let manifest: UInt32 = 3
    }

    @Test func killedWriterLosesNoAcknowledgedCommitAndNoBatchIsHalfWritten() throws {
        let directory = TemporaryDirectory("crash")
        var random = SeededGenerator(seed: 0x5EED_C0DE)
        var acknowledgedPuts: [ObjectID] = []
        var acknowledgedBatches: [ObjectID: [ObjectID]] = [:]
        var recoveries = 0
        // Objects up to this id had their payloads checked in an earlier round.
        var checkedThrough: UInt64 = 0
        let rounds = 16

        for round in 0..<rounds {
            let delay = 20 + Int(random.next() % 281)
            var arguments = ["crash-writer", directory.path, "--seed", "\(1000 + round)"]
            // Small segments in half the rounds, so kills also land around segment creation; no fsync in
            // every third round, so kills land in writes more often than in syncs (a killed process loses
            // nothing acknowledged under any policy).
            if round % 2 == 0 { arguments += ["--segment-size", "\(1 << 16)"] }
            if round % 3 == 2 { arguments += ["--fsync", "never"] }
            let child = try RunningTool(arguments)
            // Start the clock once the writer is committing, so every round kills it mid-work.
            _ = child.waitForFirstLine(timeout: 60)
            usleep(UInt32(delay * 1000))
            child.killNow()
            let result = child.finish()
            #expect(result.signaled && result.status == SIGKILL, "round \(round): writer ended early: \(result.output)")

            // Only complete lines are acknowledgements; a cut-off last line is not.
            var lines = result.stdout.split(separator: "\n", omittingEmptySubsequences: false)
            lines.removeLast()
            for line in lines {
                let fields = line.split(separator: " ")
                let parsed = fields.dropFirst().map { UInt64($0) }
                let numbers = parsed.compactMap { $0 }.map { ObjectID($0) }
                switch fields.first {
                case _ where numbers.count < parsed.count:
                    Issue.record("round \(round): unexpected line \"\(line)\"")
                case "put" where numbers.count == 1:
                    acknowledgedPuts.append(numbers[0])
                case "batch" where numbers.count >= 3:
                    acknowledgedBatches[numbers[0]] = Array(numbers.dropFirst())
                default:
                    Issue.record("round \(round): unexpected line \"\(line)\"")
                }
            }

            let store = try Store.open(at: directory.path)
            if store.recovery != nil { recoveries += 1 }
            // Check the objects written since the last round; check everything again after the last round.
            let newerThan = round == rounds - 1 ? 0 : checkedThrough
            try checkStore(
                store, puts: acknowledgedPuts, batches: acknowledgedBatches, newerThan: newerThan, round: round)
            checkedThrough = try store.ids().last?.rawValue ?? 0
            // Every object is pinned and nothing is deleted: all are reachable, nothing was collected.
            #expect(try store.reachableObjectCount() == store.count(), "round \(round): unreachable objects")
            try store.close()
            // Sound includes referential integrity: every manifest's members and every root's target are live.
            let report = try Store.verify(at: directory.path)
            #expect(report.isSound, "round \(round): \(report.problems)")
            #expect(!report.notes.contains { $0.contains("unreachable") }, "round \(round): \(report.notes)")
        }
        #expect(!acknowledgedPuts.isEmpty)
        #expect(!acknowledgedBatches.isEmpty)
        print(
            "crash test: \(rounds) kills, \(acknowledgedPuts.count) puts and \(acknowledgedBatches.count) batches acknowledged, \(recoveries) recoveries"
        )
    }

    /// Checks every acknowledged commit, and the payload of every live object and the members of every
    /// batch root (acknowledged or not) with an id above `newerThan`.
    private func checkStore(
        _ store: Store, puts: [ObjectID], batches: [ObjectID: [ObjectID]], newerThan: UInt64, round: Int
    ) throws {
        // Payloads first: whatever was committed, acknowledged or not, holds exactly what was written.
        for id in try store.ids() where id.rawValue > newerThan {
            let expected = crashPayload(for: id)
            let matches = try store.withPayload(of: id) { _, bytes in sameBytes(bytes, expected) }
            #expect(matches == true, "round \(round): payload of \(id)")
        }
        // So the acknowledged objects need only be there, with their type and references.
        for id in puts {
            let header = try store.header(of: id)
            #expect(header?.typeTag == Tag.single && header?.references == [], "round \(round): put \(id)")
        }
        let roots = try store.roots()
        for (manifest, members) in batches {
            #expect(roots["batch-\(manifest)"] == manifest, "round \(round): root of acknowledged batch \(manifest)")
            #expect(try store.header(of: manifest)?.references == members, "round \(round): manifest \(manifest)")
        }
        // Every batch that made it, acknowledged or not, made it whole.
        for (name, manifest) in roots where manifest.rawValue > newerThan {
            #expect(name == "batch-\(manifest)", "round \(round): root \(name)")
            let header = try #require(try store.header(of: manifest), "round \(round): manifest of \(name) missing")
            #expect(header.typeTag == Tag.manifest && !header.references.isEmpty, "round \(round): \(name)")
            for member in header.references {
                #expect(
                    try store.header(of: member)?.typeTag == Tag.member, "round \(round): member \(member) of \(name)")
            }
        }
    }
}

/// Whether `bytes` holds exactly `expected` (with `memcmp`: byte loops are slow in debug builds).
private func sameBytes(_ bytes: UnsafeRawBufferPointer, _ expected: [UInt8]) -> Bool {
    guard bytes.count == expected.count else { return false }
    return expected.withUnsafeBytes { expectedBytes in
        guard let left = bytes.baseAddress, let right = expectedBytes.baseAddress else { return bytes.isEmpty }
        return memcmp(left, right, bytes.count) == 0
    }
}

/// The crash writer's payload of `id`: `id % 4001` bytes repeating the 8 little-endian bytes of
/// `id &* 0x9E37_79B9_7F4A_7C15`.
private func crashPayload(for id: ObjectID) -> [UInt8] {
    let count = Int(id.rawValue % 4001)
    let word = (id.rawValue &* 0x9E37_79B9_7F4A_7C15).littleEndian
    var bytes = withUnsafeBytes(of: word) { Array($0) }
    // Doubling keeps this fast in debug builds, where a per-byte loop is slow.
    while bytes.count < count { bytes += bytes }
    bytes.removeLast(bytes.count - count)
    return bytes
}
