import Foundation
import TestSupport
import Testing

@testable @_spi(Testing) import LogStore

#if canImport(Glibc)
    import Glibc
#endif

/// How much of the crash-point and fault sweeps a run covers: a slice in the test suite, everything
/// when `LOGSTORE_RELIABILITY=full` (`scripts/reliability.sh`).
enum ReliabilityBudget {
    static let isFull = ProcessInfo.processInfo.environment["LOGSTORE_RELIABILITY"] == "full"
    /// Every `stride`-th call is a crash or fault point.
    static var stride: Int { isFull ? 1 : 5 }
    /// Random outcomes per crash point, beside "synced only" and "everything".
    static var randomOutcomes: Int { isFull ? 24 : 1 }

    /// Call numbers `1...calls` to try (always the last one too).
    static func points(_ calls: Int) -> [Int] {
        guard calls > 0 else { return [] }
        return Array(Swift.stride(from: 1, through: calls, by: stride)) + (calls % stride == 1 ? [] : [calls])
    }

    /// What the disk keeps of a crash at call `point`: only what was synced, everything, and
    /// ``randomOutcomes`` random choices.
    static func outcomes(at point: Int) -> [PowerLossSimulator.Outcome] {
        var outcomes: [PowerLossSimulator.Outcome] = [.syncedOnly, .everything]
        for variant in 0..<randomOutcomes {
            outcomes.append(.random(seed: UInt64(point) &* 7_919 &+ UInt64(variant)))
        }
        return outcomes
    }
}

/// Figures of a sweep, printed for the reliability report.
struct SweepTally: CustomStringConvertible {
    var points = 0
    var problems: [String] = []
    var description: String { "\(points) points, \(problems.count) problems" }
}

/// Simulated power loss at every observed call of scripted workloads (`PowerLossSimulator`): after each,
/// the store reopens, holds every acknowledged batch, no batch is half there, and `verify` finds nothing.
@Suite(.serialized) struct PowerLossTests {
    /// Makes an empty store in a new directory and closes it (durable), for a workload to start from.
    static func emptyStore(_ label: String, for workload: ScriptedWorkload? = nil) throws -> TemporaryStore {
        let directory = TemporaryStore(label)
        var options = testOptions()
        if workload?.encrypted == true {
            options.cipher = testCipher()
            directory.verifies(with: testCipher())
        }
        try Store.open(at: directory.path, options: options).close()
        return directory
    }

    /// Runs `workload` with the power lost at call `point` (nil: never), abandons the store, and returns
    /// the simulator and what the workload recorded.
    static func run(_ workload: ScriptedWorkload, in directory: TemporaryStore, losingPowerAt point: Int?) throws
        -> (PowerLossSimulator, WorkloadRecord)
    {
        let faults = FaultInjector()
        let simulator = try PowerLossSimulator(directory: directory.path, faults: faults)
        simulator.losePower(atCall: point)
        var options = workload.options
        options.faultInjector = faults
        let opened =
            point == nil
            ? try Store.open(at: directory.path, options: options)
            : try? Store.open(at: directory.path, options: options)
        // The power went during the open: nothing was acknowledged.
        guard let store = opened else { return (simulator, WorkloadRecord()) }
        let record = workload.run(store)
        if point == nil { try store.close() } else { try? store.close() }
        return (simulator, record)
    }

    /// Reopens the store as the disk holds it and lists what is wrong.
    static func check(_ directory: TemporaryStore, _ record: WorkloadRecord, _ workload: ScriptedWorkload) -> [String] {
        do {
            let store = try Store.open(at: directory.path, options: workload.options)
            let problems = try record.problems(in: store)
            try store.close()
            let report = try Store.verify(at: directory.path, cipher: workload.options.cipher)
            return problems + report.problems.map { "verify: \($0)" }
        } catch {
            return ["reopen: \(error)"]
        }
    }

    /// The checker itself: a store that differs from what was acknowledged (an object changed, an object
    /// never written, a root moved) is reported.
    @Test func theCheckerReportsWhatDiffersFromTheAcknowledgedState() throws {
        let workload = ScriptedWorkload.all[1]
        let directory = try Self.emptyStore("checker")
        let record = try Self.run(workload, in: directory, losingPowerAt: nil).1
        #expect(Self.check(directory, record, workload).isEmpty)
        let store = try Store.open(at: directory.path, options: workload.options)
        let ids = try store.ids()
        let pinned = try #require(try ids.compactMap { try store.get($0) }.first { $0.isPinned })
        try store.put(Record(id: pinned.id, typeTag: pinned.typeTag, references: pinned.references, payload: [0]))
        try store.put(typeTag: 1, payload: [1])
        let root = try #require(try store.roots().first)
        try store.setRoot(root.key, to: pinned.id)
        try store.close()
        let problems = Self.check(directory, record, workload)
        #expect(problems.contains { $0.contains("object \(pinned.id.rawValue):") }, "\(problems)")
        #expect(problems.contains { $0.contains("was never written") }, "\(problems)")
        #expect(problems.contains { $0.contains("root \(root.key):") }, "\(problems)")
    }

    @Test(arguments: ScriptedWorkload.all + ScriptedWorkload.encryptedWorkloads)
    func everyCrashPointKeepsEveryAcknowledgedBatch(workload: ScriptedWorkload) throws {
        let counting = try Self.emptyStore("power-count", for: workload)
        let (simulator, complete) = try Self.run(workload, in: counting, losingPowerAt: nil)
        let calls = simulator.calls
        #expect(simulator.unknownPaths.isEmpty, "calls on paths the model does not know: \(simulator.unknownPaths)")
        #expect(complete.failures.isEmpty, "\(complete.failures)")
        #expect(calls > 10)

        var tally = SweepTally()
        for point in ReliabilityBudget.points(calls) {
            let directory = try Self.emptyStore("power", for: workload)
            let (simulator, record) = try Self.run(workload, in: directory, losingPowerAt: point)
            #expect(simulator.powerLost)
            for outcome in ReliabilityBudget.outcomes(at: point) {
                try simulator.materialize(outcome)
                tally.points += 1
                let problems = Self.check(directory, record, workload)
                if !problems.isEmpty {
                    tally.problems.append("\(workload) call \(point)/\(calls) \(outcome): \(problems.prefix(3))")
                }
            }
        }
        print("power loss, \(workload): \(calls) calls, \(tally)")
        #expect(tally.problems.isEmpty, "\(tally.problems.prefix(10))")
    }
}
