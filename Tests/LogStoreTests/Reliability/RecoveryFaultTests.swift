import Foundation
import TestSupport
import Testing

@testable @_spi(Testing) import LogStore

#if canImport(Glibc)
    import Glibc
#endif

/// The open after a power loss (which cuts torn tails, deletes leftovers, writes hints and the manifest)
/// itself loses power, or gets an I/O error (and then loses power), at every one of its calls: the next
/// open still finds every acknowledged batch, no half batch, and a store that verifies.
@Suite(.serialized) struct RecoveryFaultTests {
    enum Fault: CustomStringConvertible {
        case powerLoss
        case error(Int32)
        var description: String {
            switch self {
            case .powerLoss: "power loss"
            case .error(let code): code == EIO ? "EIO" : "errno \(code)"
            }
        }
    }

    /// The crash points a run tries (`ReliabilityBudget` decides how many).
    static func crashPoints(_ calls: Int) -> [Int] {
        Array(stride(from: 3, through: calls, by: ReliabilityBudget.isFull ? 2 : 13))
    }

    @Test(arguments: ScriptedWorkload.all)
    func recoverySurvivesAPowerLossOrAnErrorAtEveryCall(workload: ScriptedWorkload) throws {
        let counting = try PowerLossTests.emptyStore("recovery-count")
        let calls = try PowerLossTests.run(workload, in: counting, losingPowerAt: nil).0.calls

        var tally = SweepTally()
        var recoveryCalls = 0
        for point in Self.crashPoints(calls) {
            let directory = try PowerLossTests.emptyStore("recovery")
            let (simulator, record) = try PowerLossTests.run(workload, in: directory, losingPowerAt: point)
            let crash = PowerLossSimulator.Outcome.random(seed: UInt64(point))
            // How many calls the recovery (open and close) makes.
            try simulator.materialize(crash)
            let observing = FaultInjector()
            let recovery = try PowerLossSimulator(directory: directory.path, faults: observing)
            var options = workload.options
            options.faultInjector = observing
            try Store.open(at: directory.path, options: options).close()
            recoveryCalls += recovery.calls

            for call in 1...max(1, recovery.calls) {
                for fault in [Fault.powerLoss, .error(EIO)] {
                    try simulator.materialize(crash)
                    let faults = FaultInjector()
                    let second = try PowerLossSimulator(directory: directory.path, faults: faults)
                    switch fault {
                    case .powerLoss: second.losePower(atCall: call)
                    case .error(let code): second.fail(atCall: call, errno: code, persistent: false)
                    }
                    var options = workload.options
                    options.faultInjector = faults
                    var problems: [String] = []
                    if let store = try? Store.open(at: directory.path, options: options) {
                        if case .error = fault {
                            do {
                                problems += try record.problems(in: store).map { "despite the error: \($0)" }
                            } catch {
                                // A read that fails says so: not a wrong answer.
                            }
                        }
                        try? store.close()
                    }
                    // Then the power goes (for an error: after the failed recovery), keeping only what was
                    // synced, or a random part of the rest.
                    try second.materialize(call % 2 == 0 ? .syncedOnly : .random(seed: UInt64(call)))
                    problems += PowerLossTests.check(directory, record, workload)
                    tally.points += 1
                    if !problems.isEmpty {
                        tally.problems.append(
                            "\(workload) crash at \(point), \(fault) at recovery call \(call): \(problems.prefix(3))")
                    }
                }
            }
        }
        print(
            "recovery faults, \(workload): \(recoveryCalls) recovery calls over \(Self.crashPoints(calls).count) crashes, \(tally)"
        )
        #expect(tally.problems.isEmpty, "\(tally.problems.prefix(10))")
    }
}
