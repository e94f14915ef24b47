import Foundation
import LogStoreExamples
import LogStoreObjects
import TestSupport
import Testing

@testable @_spi(Testing) import LogStore

/// A task with an ordered and a unique index, for the index workload of the sweeps.
final class SweepTask: PersistentObject {
    static let typeName = "sweep.Task"
    static let indexes: [IndexDefinition] = [
        .ordered(\SweepTask.due, field: "due"), .unique(\SweepTask.code, field: "code"),
    ]
    var code: String
    var due: Int

    init(code: String, due: Int) {
        self.code = code
        self.due = due
    }
}

/// What the index workload saved: the tasks after each acknowledged save, and those of the save that was
/// in flight when the power went or a call failed (it may or may not be on disk).
struct IndexWorkloadRecord {
    typealias Tasks = [ObjectID: SweepTask.Values]
    var acknowledged: [Tasks] = [[:]]
    var inFlight: Tasks?
    var failures: [String] = []
    /// Answers of the indexes during the run that differed from the model (must stay empty).
    var mismatches: [String] = []

    /// What is wrong with the tasks `store` holds: they must be one of the states a save could have left,
    /// and the indexes (built from the records after the reopen) must answer as a scan of them does.
    func problems(in objects: ObjectStore) throws -> [String] {
        let context = objects.makeContext()
        var stored: Tasks = [:]
        for task in try context.objects(of: SweepTask.self) {
            guard let id = context.id(of: task) else { continue }
            stored[id] = task.values
        }
        let allowed = [acknowledged.last ?? [:]] + (inFlight.map { [$0] } ?? [])
        var problems: [String] = []
        if !allowed.contains(stored) {
            problems.append(
                "\(stored.count) tasks stored; neither the \(acknowledged.last?.count ?? 0) acknowledged"
                    + " nor the \(inFlight?.count ?? 0) of the save in flight")
        }
        for (id, values) in stored {
            let found = try context.fetchUniqueID(SweepTask.self, where: \.code, equals: values.code)
            if found != id {
                problems.append("code \(values.code): the unique index gives \(String(describing: found)), not \(id)")
            }
        }
        for low in stride(from: 0, to: 100, by: 25) {
            let high = low + 30
            let descriptor = FetchDescriptor<SweepTask>(predicate: #Predicate { $0.due >= low && $0.due < high })
            let expected = stored.filter { $0.value.due >= low && $0.value.due < high }.keys.sorted()
            let answered = try context.fetchIDs(descriptor).sorted()
            if answered != expected {
                problems.append("due in \(low)..<\(high): \(answered.count) ids, \(expected.count) expected")
            }
        }
        return problems
    }
}

extension SweepTask {
    struct Values: Equatable {
        var code: String
        var due: Int
    }
    var values: Values { Values(code: code, due: due) }
}

/// The power-loss and I/O-error sweeps over an indexed object workload: after a crash or a failed call at
/// any point, the store reopens with one of the states a save could have left, and its ordered and unique
/// indexes answer as a scan of the recovered objects does.
@Suite(.serialized) struct IndexSweepTests {
    /// Saves of 40 new tasks each (the ordered index splits its chunks), a code moving from one task to
    /// another within one save (the giver takes a new code), changes of due dates and deletes; after each
    /// acknowledged save, a range query and unique lookups are compared with the model. Stops at the first
    /// failed save.
    static func run(_ objects: ObjectStore) -> IndexWorkloadRecord {
        var record = IndexWorkloadRecord()
        var model: IndexWorkloadRecord.Tasks = [:]
        var random = SplitMix64(seed: 0x1DE)
        var number = 0
        for step in 0..<8 {
            let context = objects.makeContext()
            var next = model
            do {
                for _ in 0..<40 {
                    number += 1
                    let task = SweepTask(code: "c\(number)", due: Int(random.next() % 100))
                    next[try context.insert(task)] = task.values
                }
                let ids = model.keys.sorted()
                if step % 2 == 1, ids.count >= 2 {
                    let giver = try #require(try context.object(id: ids[0], as: SweepTask.self))
                    let taker = try #require(try context.object(id: ids[1], as: SweepTask.self))
                    number += 1
                    taker.code = giver.code
                    giver.code = "c\(number)"
                    giver.due = Int(random.next() % 100)
                    next[ids[0]] = giver.values
                    next[ids[1]] = taker.values
                }
                if step % 3 == 2, let id = ids.last {
                    context.delete(try #require(try context.object(id: id, as: SweepTask.self)))
                    next[id] = nil
                }
                record.inFlight = next
                try context.save()
                model = next
                record.acknowledged.append(model)
                record.inFlight = nil
                let reader = objects.makeContext()
                let low = Int(random.next() % 70)
                let high = low + 30
                let range = FetchDescriptor<SweepTask>(predicate: #Predicate { $0.due >= low && $0.due < high })
                let expected = model.filter { $0.value.due >= low && $0.value.due < high }.keys.sorted()
                if try reader.fetchIDs(range).sorted() != expected {
                    record.mismatches.append("step \(step): the range \(low)..<\(high) differs from the model")
                }
                for (id, values) in model.prefix(20)
                where try reader.fetchUniqueID(SweepTask.self, where: \.code, equals: values.code) != id {
                    record.mismatches.append("step \(step): code \(values.code) does not lead to \(id)")
                }
            } catch {
                record.failures.append("step \(step): \(error)")
                return record
            }
        }
        return record
    }

    static func open(_ directory: TemporaryStore, faults: FaultInjector?) throws -> ObjectStore {
        var options = testOptions()
        options.faultInjector = faults
        return try ObjectStore.open(at: directory.path, options: options, types: [SweepTask.self])
    }

    /// Reopens the store as the disk holds it and lists what is wrong.
    static func check(_ directory: TemporaryStore, _ record: IndexWorkloadRecord) -> [String] {
        do {
            let objects = try open(directory, faults: nil)
            let problems = try record.problems(in: objects)
            try objects.close()
            let report = try Store.verify(at: directory.path)
            return problems + report.problems.map { "verify: \($0)" }
        } catch {
            return ["reopen: \(error)"]
        }
    }

    /// Runs the workload with the power lost at call `point` (nil: never).
    static func run(in directory: TemporaryStore, losingPowerAt point: Int?) throws
        -> (PowerLossSimulator, IndexWorkloadRecord)
    {
        let faults = FaultInjector()
        let simulator = try PowerLossSimulator(directory: directory.path, faults: faults)
        simulator.losePower(atCall: point)
        guard let objects = point == nil ? try open(directory, faults: faults) : try? open(directory, faults: faults)
        else { return (simulator, IndexWorkloadRecord()) }
        let record = run(objects)
        if point == nil { try objects.close() } else { try? objects.close() }
        return (simulator, record)
    }

    @Test func everyCrashPointLeavesASavedStateThatTheIndexesAnswerFor() throws {
        let counting = try PowerLossTests.emptyStore("index-power-count")
        let (simulator, complete) = try Self.run(in: counting, losingPowerAt: nil)
        let calls = simulator.calls
        #expect(complete.failures.isEmpty, "\(complete.failures)")
        #expect(complete.mismatches.isEmpty, "\(complete.mismatches)")
        #expect(complete.acknowledged.count == 9)
        #expect(Self.check(counting, complete).isEmpty)

        var tally = SweepTally()
        for point in ReliabilityBudget.points(calls) {
            let directory = try PowerLossTests.emptyStore("index-power")
            let (simulator, record) = try Self.run(in: directory, losingPowerAt: point)
            tally.problems += record.mismatches.map { "call \(point)/\(calls), before the crash: \($0)" }
            for outcome in ReliabilityBudget.outcomes(at: point) {
                try simulator.materialize(outcome)
                tally.points += 1
                let problems = Self.check(directory, record)
                if !problems.isEmpty {
                    tally.problems.append("call \(point)/\(calls) \(outcome): \(problems.prefix(3))")
                }
            }
        }
        print("power loss, indexed objects: \(calls) calls, \(tally)")
        #expect(tally.problems.isEmpty, "\(tally.problems.prefix(10))")
    }

    @Test func anErrorAtEveryCallLeavesASavedStateThatTheIndexesAnswerFor() throws {
        let counting = try PowerLossTests.emptyStore("index-error-count")
        let calls = try Self.run(in: counting, losingPowerAt: nil).0.calls
        var tally = SweepTally()
        for point in ReliabilityBudget.points(calls) {
            for variant in IOErrorTests.variants {
                let directory = try PowerLossTests.emptyStore("index-error")
                let faults = FaultInjector()
                let simulator = try PowerLossSimulator(directory: directory.path, faults: faults)
                simulator.fail(atCall: point, errno: variant.errno, persistent: variant.persistent)
                var record = IndexWorkloadRecord()
                if let objects = try? Self.open(directory, faults: faults) {
                    record = Self.run(objects)
                    try? objects.close()
                }
                tally.points += 1
                var problems = record.mismatches.map { "before the error: \($0)" }
                problems += Self.check(directory, record).map { "disk as left: \($0)" }
                try simulator.materialize(.syncedOnly)
                problems += Self.check(directory, record).map { "after a power loss: \($0)" }
                if !problems.isEmpty {
                    tally.problems.append("call \(point)/\(calls) \(variant): \(problems.prefix(3))")
                }
            }
        }
        print("I/O errors, indexed objects: \(calls) calls, \(tally)")
        #expect(tally.problems.isEmpty, "\(tally.problems.prefix(10))")
    }
}
