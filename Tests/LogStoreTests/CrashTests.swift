import Foundation
import LogStoreExamples
import TestSupport
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
/// `logstore-crash-harness crash-writer` writes forever with `FsyncPolicy.always`, printing `put ID` or
/// `batch M ID1 ID2 ...` after each commit returns; a batch's members are referenced by its manifest `M`,
/// which the root `batch-M` points at, and every object's payload is ``crashPayload(for:)`` of its id.
@Suite struct CrashTests {
    @Test func killedWriterLosesNoAcknowledgedCommitAndNoBatchIsHalfWritten() throws {
        let directory = TemporaryStore("crash")
        var random = SplitMix64(seed: 0x5EED_C0DE)
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
            let child = try RunningTool(arguments, binary: .crashHarness)
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

            let store = try directory.open()
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
            #expect(header?.typeTag == CrashTag.single && header?.references == [], "round \(round): put \(id)")
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
            #expect(header.typeTag == CrashTag.manifest && !header.references.isEmpty, "round \(round): \(name)")
            for member in header.references {
                #expect(
                    try store.header(of: member)?.typeTag == CrashTag.member,
                    "round \(round): member \(member) of \(name)")
            }
        }
    }
}

/// Ends a child process at chosen system calls of a mark-sweep and compaction pass and checks that every
/// crash reopens to the same live data: nothing lost, nothing resurrected, roots unchanged, and the
/// unreachable cycle the sweep frees either still there (the sweep did not commit) or gone, as a whole.
///
/// `logstore-tool crash-compactor` runs the passes with a ``FaultInjector`` armed to `_exit(137)` at the
/// K+1-th call of one operation; each crash point runs on a fresh copy of one pristine store.
@Suite struct CompactionCrashTests {
    /// One crash point: the operation, how many of its calls go through first, and for writes how many
    /// bytes the crashing write writes (a torn write).
    private struct CrashPoint: CustomStringConvertible {
        var operation: FaultInjector.Operation
        var after: Int
        var bytes = 0

        var description: String { "\(operation.rawValue) after \(after)" + (bytes > 0 ? " (\(bytes) bytes)" : "") }
    }

    @Test func compactionKilledAtEveryStepReopensToTheSameLiveData() throws {
        let pristine = TemporaryStore("compaction-crash")
        let model = try buildCompactionCrashModel(at: pristine.path)
        let (counts, pass) = try countPassCalls(of: pristine.path)
        // The pass must reach every step the points below aim at.
        #expect(counts[.write, default: 0] > 8 && counts[.rename, default: 0] > 2, "calls: \(counts)")
        #expect(counts[.unlink, default: 0] > 3 && counts[.open, default: 0] > 1, "calls: \(counts)")
        #expect(pass.segmentsCompacted > 2, "\(pass)")

        // Writes: 0 the sweep's batch, 1 the seal of the active segment, then the compaction outputs and
        // the hint files. Syncs: 0 the sweep, 1 the seal, then each output's data and directory. Renames:
        // outputs, then hints. Unlinks: each compacted segment's hint and segment, then the hints' stale
        // temporary files. Opens: outputs (and mapping them), then hints.
        var points: [CrashPoint] = [
            CrashPoint(operation: .write, after: 0), CrashPoint(operation: .write, after: 0, bytes: 50),
            CrashPoint(operation: .write, after: 1), CrashPoint(operation: .write, after: 1, bytes: 10),
            CrashPoint(operation: .write, after: 2, bytes: 4096), CrashPoint(operation: .write, after: 3),
            CrashPoint(operation: .write, after: 8),
            CrashPoint(operation: .sync, after: 0), CrashPoint(operation: .sync, after: 1),
            CrashPoint(operation: .sync, after: 2), CrashPoint(operation: .sync, after: 4),
            CrashPoint(operation: .rename, after: 0), CrashPoint(operation: .rename, after: 1),
            CrashPoint(operation: .rename, after: 2),
            CrashPoint(operation: .unlink, after: 0), CrashPoint(operation: .unlink, after: 1),
            CrashPoint(operation: .unlink, after: 2), CrashPoint(operation: .unlink, after: 3),
            CrashPoint(operation: .open, after: 0), CrashPoint(operation: .open, after: 1),
        ]
        // Later steps, located from the counts: the last output, the middle and the end of the deletions
        // and the directory sync after them, the hint files, and one point past the pass.
        let outputs = pass.segmentsAfter - (pass.segmentsBefore - pass.segmentsCompacted)
        let deletions = 2 * pass.segmentsCompacted
        let hints = counts[.rename, default: 0] - outputs
        points += [
            CrashPoint(operation: .rename, after: outputs - 1),
            CrashPoint(operation: .unlink, after: deletions / 2 + 1),
            CrashPoint(operation: .unlink, after: deletions - 1),
            CrashPoint(operation: .sync, after: counts[.sync, default: 0] - 2 * hints - 1),
            CrashPoint(operation: .unlink, after: deletions),
            CrashPoint(operation: .rename, after: outputs),
            CrashPoint(operation: .open, after: counts[.open, default: 0] / 2),
            CrashPoint(operation: .write, after: counts[.write, default: 0] - 1, bytes: 50),
            CrashPoint(operation: .open, after: counts[.open, default: 0] - 1),
            CrashPoint(operation: .sync, after: counts[.sync, default: 0] - 1),
            CrashPoint(operation: .sync, after: counts[.sync, default: 0]),
        ]

        var crashed = 0
        var survived = 0
        for point in points {
            let copy = TemporaryStore("compaction-crash-copy")
            try copyStoreFiles(from: pristine.path, to: copy.path)
            let result = try ToolRunner.run(
                [
                    "crash-compactor", copy.path, "--operation", point.operation.rawValue, "--after", "\(point.after)",
                    "--bytes", "\(point.bytes)", "--segment-size", "\(1 << 16)",
                ], binary: .crashHarness)
            let expectCrash = point.after < counts[point.operation, default: 0]
            if !result.signaled && result.status == 137 {
                crashed += 1
                #expect(expectCrash, "\(point): crashed past the end of the pass")
            } else if !result.signaled && result.status == 0 && result.stdout == "survived\n" {
                survived += 1
                #expect(!expectCrash, "\(point): the pass did not reach the crash point")
            } else {
                Issue.record(
                    "\(point): unexpected end (\(result.status), signaled \(result.signaled)): \(result.output)")
                continue
            }
            try checkRecovery(of: copy, model: model, point: "\(point)")
        }
        // Every point either crashed inside the pass or lay past it (checked one by one above).
        #expect(
            crashed + survived == points.count && crashed >= points.count * 3 / 4,
            "crashed \(crashed), survived \(survived)")
        let calls = counts.filter { $0.value > 0 }.sorted { $0.key.rawValue < $1.key.rawValue }
            .map { "\($0.value) \($0.key.rawValue)" }.joined(separator: ", ")
        print(
            "compaction crash test: \(points.count) points, \(crashed) crashed, \(survived) survived (pass: \(calls))")
    }

    /// Checks a crashed copy: read-only verification, then a reopen that matches the model, then another
    /// mark-sweep and compaction that free the cycle and leave a sound store with no temporary files.
    private func checkRecovery(of copy: TemporaryStore, model: CompactionCrashModel, point: String) throws {
        let crashedReport = try Store.verify(at: copy.path)
        #expect(crashedReport.isSound, "\(point): crashed store: \(crashedReport.problems)")

        let store = try copy.open(options: compactionCrashOptions())
        let cyclePresent = try checkContents(of: store, against: model, point: "\(point), reopened")
        let sweep = try store.collectGarbage()
        #expect(sweep.collected == (cyclePresent ? model.cycle.count : 0), "\(point): collected \(sweep.collected)")
        try store.compact()
        let cycleLeft = try checkContents(of: store, against: model, point: "\(point), compacted again")
        #expect(!cycleLeft, "\(point): the cycle survived a second mark-sweep")
        try store.close()

        let reopened = try copy.open(options: compactionCrashOptions())
        _ = try checkContents(of: reopened, against: model, point: "\(point), reopened again")
        try reopened.close()
        let report = try Store.verify(at: copy.path)
        #expect(report.isSound, "\(point): \(report.problems)")
        #expect(!report.notes.contains { $0.contains("unreachable") }, "\(point): \(report.notes)")
        let leftovers = copy.fileNames().filter {
            $0.hasSuffix(LogFormat.compactingSuffix) || $0.hasSuffix(LogFormat.writingSuffix)
        }
        #expect(leftovers.isEmpty, "\(point): leftovers \(leftovers)")
    }

    /// Checks that `store` holds exactly the model's live objects and roots, and the cycle wholly or not
    /// at all; returns whether the cycle is there.
    private func checkContents(of store: Store, against model: CompactionCrashModel, point: String) throws -> Bool {
        let ids = Set(try store.ids())
        let cycleIDs = Set(model.cycle.keys)
        let cycleHere = ids.intersection(cycleIDs)
        #expect(cycleHere.isEmpty || cycleHere == cycleIDs, "\(point): half a cycle: \(cycleHere.sorted())")
        let others = ids.subtracting(cycleIDs)
        let expected = Set(model.live.keys)
        let lost = expected.subtracting(others).sorted()
        let resurrected = others.subtracting(expected).sorted()
        #expect(lost.isEmpty, "\(point): \(lost.count) lost, e.g. \(lost.prefix(10))")
        #expect(resurrected.isEmpty, "\(point): \(resurrected.count) resurrected, e.g. \(resurrected.prefix(10))")
        let deletedBack = try model.deleted.filter { try store.contains($0) }.sorted()
        #expect(deletedBack.isEmpty, "\(point): deleted objects live again: \(deletedBack.prefix(10))")

        var wrong: [ObjectID] = []
        for (id, record) in model.live where try store.get(id) != record { wrong.append(id) }
        if cycleHere == cycleIDs {
            for (id, record) in model.cycle where try store.get(id) != record { wrong.append(id) }
        }
        #expect(wrong.isEmpty, "\(point): \(wrong.count) records differ, e.g. \(wrong.sorted().prefix(10))")
        let roots = try store.roots()
        #expect(roots == model.roots, "\(point): roots \(roots)")
        #expect(try store.reachableObjectCount() == model.live.count, "\(point): reachable objects")
        return cycleHere == cycleIDs
    }

    /// How many calls of each operation one mark-sweep and compaction pass makes on a copy of the store
    /// at `path`, opened as the crash compactor opens it, and the compaction's report.
    private func countPassCalls(of path: String) throws -> ([FaultInjector.Operation: Int], CompactionReport) {
        let copy = TemporaryStore("compaction-crash-count")
        try copyStoreFiles(from: path, to: copy.path)
        let faults = FaultInjector()
        var options = compactionCrashOptions()
        options.fsyncPolicy = .always
        options.faultInjector = faults
        let store = try copy.open(options: options)
        let operations = FaultInjector.Operation.allCases
        let before = operations.map { faults.calls($0) }
        try store.collectGarbage()
        let report = try store.compact()
        var counts: [FaultInjector.Operation: Int] = [:]
        for (operation, calls) in zip(operations, before) { counts[operation] = faults.calls(operation) - calls }
        try store.close()
        return (counts, report)
    }
}

/// The objects, roots and cycle that the compaction crash test's store holds.
private struct CompactionCrashModel {
    /// Every object that must be live, as it must read.
    var live: [ObjectID: Record] = [:]
    /// Every object that was deleted or collected.
    var deleted: Set<ObjectID> = []
    var roots: [String: ObjectID] = [:]
    /// The unreachable cycle (two unpinned objects referring to each other) that mark-sweep frees.
    var cycle: [ObjectID: Record] = [:]

    mutating func put(_ record: Record, in batch: inout WriteBatch) {
        batch.put(record)
        live[record.id] = record
    }

    mutating func remove(_ id: ObjectID) {
        live[id] = nil
        deleted.insert(id)
    }
}

/// Type tags of the compaction crash test.
private enum CompactionTag {
    static let base: UInt32 = 1
    static let child: UInt32 = 2
    static let cycle: UInt32 = 3
    static let holder: UInt32 = 4
}

/// Small segments, no background work: what the test and the crash compactor open the store with.
private func compactionCrashOptions(fsync: FsyncPolicy = .always) -> StoreOptions {
    var options = StoreOptions(segmentSize: 1 << 16, fsyncPolicy: fsync, createIfMissing: false)
    options.compaction.background = false
    return options
}

/// Version `version` of object `id`'s payload: 48 to 747 incompressible bytes, from a generator seeded
/// with both.
private func compactionPayload(_ id: ObjectID, _ version: Int) -> [UInt8] {
    let count = 48 + Int((id.rawValue &* 7 &+ UInt64(version) &* 131) % 700)
    var generator = SplitMix64(seed: id.rawValue << 8 | UInt64(version))
    var words = [UInt64](repeating: 0, count: count / 8 + 1)
    for index in words.indices { words[index] = generator.next() }
    return words.withUnsafeBytes { Array($0.prefix(count)) }
}

/// Copies every file of the store directory `source` into the existing directory `destination`.
private func copyStoreFiles(from source: String, to destination: String) throws {
    for name in try FileManager.default.contentsOfDirectory(atPath: source) {
        try FileManager.default.copyItem(atPath: source + "/" + name, toPath: destination + "/" + name)
    }
}

/// Builds the compaction crash test's store at `path` and returns what it holds: a few thousand pinned
/// objects, a third of them overwritten and a fifth deleted over several rounds; pinned holders of
/// unpinned children, some dropped (their children collected at once); named roots, one keeping an
/// otherwise unreferenced child alive; and a two-object cycle dropped by its holder. Closed at the end.
private func buildCompactionCrashModel(at path: String) throws -> CompactionCrashModel {
    var options = compactionCrashOptions(fsync: .never)
    options.createIfMissing = true
    let store = try Store.open(at: path, options: options)
    var model = CompactionCrashModel()
    var random = SplitMix64(seed: 0xC0DE_C4A5)
    var versions: [ObjectID: Int] = [:]
    var base: [ObjectID] = []

    func putBase(_ count: Int) throws {
        var batch = WriteBatch()
        for _ in 0..<count {
            let id = store.newID()
            model.put(Record(id: id, typeTag: CompactionTag.base, payload: compactionPayload(id, 0)), in: &batch)
            versions[id] = 0
            base.append(id)
            if batch.count == 100 {
                try store.write(batch)
                batch = WriteBatch()
            }
        }
        if !batch.isEmpty { try store.write(batch) }
    }

    /// Overwrites about one in `overwriteOneIn` live base objects and deletes about one in `deleteOneIn`.
    func churn(overwriteOneIn: UInt64, deleteOneIn: UInt64) throws {
        var batch = WriteBatch()
        for id in base where model.live[id] != nil {
            let roll = random.next()
            if roll % deleteOneIn == 0, !model.roots.values.contains(id) {
                batch.delete(id)
                model.remove(id)
            } else if roll % overwriteOneIn == 1 {
                let version = versions[id, default: 0] + 1
                versions[id] = version
                model.put(
                    Record(id: id, typeTag: CompactionTag.base, payload: compactionPayload(id, version)), in: &batch)
            }
            if batch.count == 100 {
                try store.write(batch)
                batch = WriteBatch()
            }
        }
        if !batch.isEmpty { try store.write(batch) }
    }

    try putBase(2000)

    // Pinned holders, each of two unpinned children.
    var holders: [(holder: ObjectID, children: [ObjectID])] = []
    for _ in 0..<5 {
        var batch = WriteBatch()
        for _ in 0..<20 {
            let children = [store.newID(), store.newID()]
            let holder = store.newID()
            for child in children {
                model.put(
                    Record(
                        id: child, typeTag: CompactionTag.child, payload: compactionPayload(child, 0), isPinned: false),
                    in: &batch)
            }
            model.put(
                Record(
                    id: holder, typeTag: CompactionTag.holder, references: children,
                    payload: compactionPayload(holder, 0)), in: &batch)
            holders.append((holder, children))
        }
        try store.write(batch)
    }

    try churn(overwriteOneIn: 4, deleteOneIn: 12)
    try putBase(500)
    // A first compaction: the pass under test then also rewrites compaction outputs (old records under
    // newer segment numbers, kept tombstones) and deletes segments that have hint files.
    try store.compact()

    // Roots: one at a base object, one moved, one set and removed, one keeping a dropped child alive.
    let rooted = holders[40]
    try store.write { batch in
        batch.setRoot("base", to: base[10])
        batch.setRoot("moved", to: base[11])
        batch.setRoot("temporary", to: rooted.holder)
        batch.setRoot("child", to: rooted.children[1])
    }
    model.roots = ["base": base[10], "moved": base[11], "temporary": rooted.holder, "child": rooted.children[1]]
    try store.setRoot("moved", to: base[12])
    try store.removeRoot("temporary")
    model.roots["moved"] = base[12]
    model.roots["temporary"] = nil

    // The cycle: a pinned holder of A, with A and B referring to each other.
    let cycleHolder = store.newID()
    let cycleA = store.newID()
    let cycleB = store.newID()
    var cycleBatch = WriteBatch()
    model.put(
        Record(
            id: cycleA, typeTag: CompactionTag.cycle, references: [cycleB], payload: compactionPayload(cycleA, 0),
            isPinned: false), in: &cycleBatch)
    model.put(
        Record(
            id: cycleB, typeTag: CompactionTag.cycle, references: [cycleA], payload: compactionPayload(cycleB, 0),
            isPinned: false), in: &cycleBatch)
    model.put(
        Record(
            id: cycleHolder, typeTag: CompactionTag.holder, references: [cycleA],
            payload: compactionPayload(cycleHolder, 0)), in: &cycleBatch)
    try store.write(cycleBatch)

    try churn(overwriteOneIn: 3, deleteOneIn: 15)

    // Holders dropping a child (collected at once), holders deleted (both children collected), the
    // rooted child's holder dropping it (the root keeps it), and the cycle's holder dropping it.
    var dropBatch = WriteBatch()
    for (holder, children) in holders[0..<20] {
        model.put(
            Record(
                id: holder, typeTag: CompactionTag.holder, references: [children[0]],
                payload: compactionPayload(holder, 1)), in: &dropBatch)
        model.remove(children[1])
    }
    for (holder, children) in holders[20..<30] {
        dropBatch.delete(holder)
        model.remove(holder)
        for child in children { model.remove(child) }
    }
    model.put(
        Record(
            id: rooted.holder, typeTag: CompactionTag.holder, references: [rooted.children[0]],
            payload: compactionPayload(rooted.holder, 1)), in: &dropBatch)
    try store.write(dropBatch)

    try putBase(300)
    var cycleDrop = WriteBatch()
    model.put(
        Record(id: cycleHolder, typeTag: CompactionTag.holder, payload: compactionPayload(cycleHolder, 1)),
        in: &cycleDrop)
    try store.write(cycleDrop)
    for id in [cycleA, cycleB] { model.cycle[id] = model.live.removeValue(forKey: id) }

    // Garbage in the newest segment too: overwrites and deletes after everything else.
    try churn(overwriteOneIn: 10, deleteOneIn: 40)

    // The model agrees with the store before the crashes start.
    #expect(Set(try store.ids()) == Set(model.live.keys).union(model.cycle.keys))
    #expect(try store.reachableObjectCount() == model.live.count)
    #expect(try store.roots() == model.roots)
    try store.close()
    return model
}

/// Whether `bytes` holds exactly `expected` (with `memcmp`: byte loops are slow in debug builds).
func sameBytes(_ bytes: UnsafeRawBufferPointer, _ expected: [UInt8]) -> Bool {
    guard bytes.count == expected.count else { return false }
    return expected.withUnsafeBytes { expectedBytes in
        guard let left = bytes.baseAddress, let right = expectedBytes.baseAddress else { return bytes.isEmpty }
        return memcmp(left, right, bytes.count) == 0
    }
}
