import Foundation
import TestSupport
import Testing

@testable @_spi(Testing) import LogStore

#if canImport(Glibc)
    import Glibc
#endif

/// An I/O error at every observed call of the scripted workloads, once and persistently: the store
/// reports it, acknowledges nothing it has not made durable (checked by a simulated power loss right
/// after, which keeps only what was synced), and reopens cleanly.
@Suite(.serialized) struct IOErrorTests {
    struct Variant: CustomStringConvertible {
        var errno: Int32
        var persistent: Bool
        var description: String { "\(errno == EIO ? "EIO" : "ENOSPC")\(persistent ? " from then on" : " once")" }
    }

    static let variants = [
        Variant(errno: EIO, persistent: false), Variant(errno: EIO, persistent: true),
        Variant(errno: ENOSPC, persistent: false),
    ]

    @Test(arguments: ScriptedWorkload.all)
    func anErrorAtEveryCallIsReportedAndNeverFalselyAcknowledged(workload: ScriptedWorkload) throws {
        let counting = try PowerLossTests.emptyStore("error-count")
        let calls = try PowerLossTests.run(workload, in: counting, losingPowerAt: nil).0.calls

        var tally = SweepTally()
        var unreported: [String] = []
        for point in ReliabilityBudget.points(calls) {
            for variant in Self.variants {
                // A crash (a signal) ends the run without a report: LOGSTORE_TRACE=1 says where it was.
                if ProcessInfo.processInfo.environment["LOGSTORE_TRACE"] != nil {
                    print("trace", workload, point, variant)
                }
                let directory = try PowerLossTests.emptyStore("error")
                let faults = FaultInjector()
                let simulator = try PowerLossSimulator(directory: directory.path, faults: faults)
                simulator.fail(atCall: point, errno: variant.errno, persistent: variant.persistent)
                var options = workload.options
                options.faultInjector = faults
                var record = WorkloadRecord()
                var reported = false
                do {
                    let store = try Store.open(at: directory.path, options: options)
                    record = workload.run(store, continueAfterFailure: true) { simulator.calls }
                    do { try store.close() } catch { reported = true }
                } catch {
                    reported = true  // the open failed
                }
                reported = reported || !record.failures.isEmpty
                tally.points += 1
                let kind = simulator.callKinds[point - 1]
                if simulator.errorsInjected > 0, !reported {
                    unreported.append("\(kind) (call \(point))")
                }
                var problems = PowerLossTests.check(directory, record, workload).map { "disk as left: \($0)" }
                try simulator.materialize(.syncedOnly)
                problems += PowerLossTests.check(directory, record, workload).map { "after a power loss: \($0)" }
                if !problems.isEmpty {
                    tally.problems.append(
                        "\(workload) \(kind) call \(point)/\(calls) \(variant): \(problems.prefix(3))")
                }
            }
        }
        print("I/O errors, \(workload): \(calls) calls, \(tally), unreported: \(Set(unreported).sorted())")
        #expect(tally.problems.isEmpty, "\(tally.problems.prefix(10))")
    }
}
