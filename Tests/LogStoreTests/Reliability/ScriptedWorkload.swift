import Foundation
import LogStoreExamples
import TestSupport

@testable @_spi(Testing) import LogStore

/// A deterministic sequence of batches and compactions run against a store until a call fails, with
/// the record of what the store acknowledged and what it did not.
///
/// Every payload is new (it names the step and the object), so what a reopened store holds says which
/// batches reached the disk.
struct ScriptedWorkload: Sendable, CustomStringConvertible {
    enum Step: Sendable {
        /// A batch: puts of new objects (`new` of them), overwrites and deletes of earlier ones (`overwrite`,
        /// `delete`, counted from the oldest live object picked by the step's seed), and a root change.
        case batch(new: Int, overwrite: Int, delete: Int, size: ClosedRange<Int>, setRoot: Bool)
        /// `compact()`.
        case compact
        /// `rewriteAllSegments()` (a new dictionary, and old ones retired).
        case rewriteAll
        /// `collectGarbage()` (mark-sweep from the roots; unreachable unpinned objects go).
        case collectGarbage
    }

    let name: String
    let steps: [Step]
    /// Small enough that the workloads roll over to new segments (and write hint files).
    var options: StoreOptions {
        var options = StoreOptions(segmentSize: LogStoreLimits.minSegmentSize, fsyncPolicy: .always)
        options.compaction.background = false
        return options
    }

    var description: String { name }

    /// The workloads the reliability tests enumerate every call of.
    static let all: [ScriptedWorkload] = [
        ScriptedWorkload(
            name: "single puts",
            steps: (0..<24).map { index in
                .batch(new: 1, overwrite: index % 5 == 4 ? 1 : 0, delete: 0, size: 20...700, setRoot: false)
            }),
        ScriptedWorkload(
            name: "batches and roots",
            steps: (0..<10).map { index in
                .batch(new: 6, overwrite: 2, delete: index % 3 == 2 ? 1 : 0, size: 30...400, setRoot: true)
            }),
        ScriptedWorkload(
            name: "rollover, dictionary and hints",
            steps: (0..<8).map { _ in .batch(new: 60, overwrite: 5, delete: 1, size: 300...1_200, setRoot: false) }),
        ScriptedWorkload(
            name: "compaction and collection",
            steps: (0..<4).map { _ in .batch(new: 40, overwrite: 0, delete: 0, size: 200...900, setRoot: true) }
                + [
                    .batch(new: 0, overwrite: 60, delete: 30, size: 200...900, setRoot: false), .compact,
                    .batch(new: 10, overwrite: 5, delete: 0, size: 50...300, setRoot: true), .collectGarbage,
                    .rewriteAll, .batch(new: 5, overwrite: 5, delete: 2, size: 50...300, setRoot: false),
                ]),
    ]

    /// Runs the steps until one fails (or, with `continueAfterFailure`, through all of them, each failing
    /// one recorded as such). Returns the record.
    func run(_ store: Store, continueAfterFailure: Bool = false) -> WorkloadRecord {
        var record = WorkloadRecord()
        var random = SplitMix64(seed: 0x5EED_0000 &+ UInt64(name.utf8.count))
        var live: [ObjectID] = []  // in the order the script made them (acknowledged or not)
        // Unpinned objects live only while a root refers to them (the workloads make no references).
        var unpinned: Set<ObjectID> = []
        var rootTargets: [String: ObjectID] = [:]
        for (stepNumber, step) in steps.enumerated() {
            var change = WorkloadRecord.Change()
            var failure: (any Error)?
            switch step {
            case .batch(let new, let overwrite, let delete, let size, let setRoot):
                var batch = WriteBatch()
                func payload(_ id: ObjectID) -> [UInt8] {
                    let count = Int.random(in: size, using: &random)
                    let text =
                        "{\"step\":\(stepNumber),\"id\":\(id.rawValue),\"name\":\"object\",\"tags\":[\"a\",\"b\"]}"
                    return Array(String(repeating: text, count: count / text.utf8.count + 1).utf8.prefix(count))
                }
                for _ in 0..<new {
                    let id = store.newID()
                    let bytes = payload(id)
                    batch.put(id, typeTag: 1 + UInt32(id.rawValue % 3), payload: bytes, pinned: !setRoot)
                    change.puts[id] = bytes
                    live.append(id)
                    if setRoot { unpinned.insert(id) }
                }
                let older = live.filter { change.puts[$0] == nil }
                for _ in 0..<min(overwrite, older.count) {
                    let id = older[Int(random.next() % UInt64(older.count))]
                    guard change.puts[id] == nil, !change.deletes.contains(id) else { continue }
                    let bytes = payload(id)
                    batch.put(id, typeTag: 1, payload: bytes, pinned: !unpinned.contains(id))
                    change.puts[id] = bytes
                }
                for _ in 0..<min(delete, older.count) {
                    let id = older[Int(random.next() % UInt64(older.count))]
                    // Unpinned ones may be gone already (freed when no root refers to them).
                    guard change.puts[id] == nil, !change.deletes.contains(id), !unpinned.contains(id) else { continue }
                    batch.delete(id)
                    change.deletes.insert(id)
                    live.removeAll { $0 == id }
                }
                if setRoot, let target = change.puts.keys.min() {
                    let rootName = "root\(stepNumber % 3)"
                    batch.setRoot(rootName, to: target)
                    change.roots[rootName] = target
                    rootTargets[rootName] = target
                }
                record.begin(change)
                do { _ = try store.write(batch) } catch { failure = error }
            case .compact:
                record.begin(change)
                do { _ = try store.compact() } catch { failure = error }
            case .rewriteAll:
                record.begin(change)
                do { _ = try store.rewriteAllSegments() } catch { failure = error }
            case .collectGarbage:
                record.begin(change)
                do { _ = try store.collectGarbage() } catch { failure = error }
            }
            record.mayFree(unpinned)
            if let failure {
                record.fail("step \(stepNumber): \(failure)")
                if !continueAfterFailure { break }
            } else {
                record.acknowledge()
            }
        }
        return record
    }
}

/// What a workload's store acknowledged, and the changes whose call failed (or never returned).
struct WorkloadRecord: Sendable {
    struct Change: Sendable {
        var puts: [ObjectID: [UInt8]] = [:]
        var deletes: Set<ObjectID> = []
        var roots: [String: ObjectID] = [:]
        var isEmpty: Bool { puts.isEmpty && deletes.isEmpty && roots.isEmpty }
    }

    /// The acknowledged state: payloads of live objects, named roots.
    private(set) var objects: [ObjectID: [UInt8]] = [:]
    private(set) var roots: [String: ObjectID] = [:]
    /// Changes not acknowledged, in order, each with the acknowledged changes made after it.
    private(set) var unacknowledged: [Change] = []
    private(set) var acknowledged = 0
    private var current: Change?
    /// Every object any step touched.
    private(set) var touched: Set<ObjectID> = []
    /// Unpinned objects: the store frees them when no root refers to them.
    private(set) var collectable: Set<ObjectID> = []

    mutating func mayFree(_ unpinned: Set<ObjectID>) { collectable.formUnion(unpinned) }

    mutating func begin(_ change: Change) {
        current = change
        touched.formUnion(change.puts.keys)
        touched.formUnion(change.deletes)
    }

    mutating func acknowledge() {
        guard let change = current else { return }
        for (id, bytes) in change.puts { objects[id] = bytes }
        for id in change.deletes { objects[id] = nil }
        roots.merge(change.roots) { $1 }
        // A later acknowledged change settles what it touches.
        for index in unacknowledged.indices {
            for id in change.puts.keys { unacknowledged[index].puts[id] = nil }
            for id in change.deletes { unacknowledged[index].puts[id] = nil }
            unacknowledged[index].deletes.subtract(change.puts.keys)
            unacknowledged[index].deletes.subtract(change.deletes)
            for name in change.roots.keys { unacknowledged[index].roots[name] = nil }
        }
        acknowledged += 1
        current = nil
    }

    /// Why steps failed.
    private(set) var failures: [String] = []

    mutating func fail(_ reason: String) {
        failures.append(reason)
        if let change = current, !change.isEmpty { unacknowledged.append(change) }
        current = nil
    }

    /// Whether the store holds what was acknowledged, and each unacknowledged change either wholly or not
    /// at all (a change touching an object a later unacknowledged change also touches is judged on the
    /// rest). Returns the problems, empty when it does.
    func problems(in store: Store) throws -> [String] {
        var problems: [String] = []
        var allowed: [ObjectID: [[UInt8]?]] = [:]
        for id in touched { allowed[id] = [objects[id]] }
        for change in unacknowledged {
            for (id, bytes) in change.puts { allowed[id, default: [nil]].append(bytes) }
            for id in change.deletes { allowed[id, default: [nil]].append(nil) }
        }
        var observed: [ObjectID: [UInt8]?] = [:]
        for id in touched {
            let payload = try store.get(id)?.payload
            observed[id] = payload
            let values = allowed[id] ?? [nil]
            if !values.contains(where: { $0 == payload }) {
                // An unpinned object that no root refers to may be gone.
                let naming = roots.filter { $0.value == id }.map(\.key)
                let renamed = naming.allSatisfy { name in unacknowledged.contains { $0.roots[name] != nil } }
                if collectable.contains(id), payload == nil, renamed { continue }
                problems.append(
                    "object \(id.rawValue): \(payload.map { "\($0.count) bytes" } ?? "absent") is none of the allowed \(values.count) versions"
                )
            }
        }
        let storedRoots = try store.roots()
        for (name, id) in roots where storedRoots[name] != id {
            let alternatives = unacknowledged.compactMap { $0.roots[name] }
            if let stored = storedRoots[name], alternatives.contains(stored) { continue }
            problems.append(
                "root \(name): \(storedRoots[name].map { "\($0.rawValue)" } ?? "absent"), acknowledged \(id.rawValue)")
        }
        for (index, change) in unacknowledged.enumerated() {
            let later = unacknowledged[(index + 1)...].reduce(into: Set<ObjectID>()) {
                $0.formUnion($1.puts.keys)
                $0.formUnion($1.deletes)
            }
            var applied = 0
            var notApplied = 0
            for (id, bytes) in change.puts where !later.contains(id) {
                guard let seen = observed[id] else { continue }
                if seen == bytes { applied += 1 } else if seen == objects[id] { notApplied += 1 }
            }
            for id in change.deletes where !later.contains(id) && objects[id] != nil {
                if observed[id] == .some(nil) { applied += 1 } else { notApplied += 1 }
            }
            if applied > 0 && notApplied > 0 {
                problems.append("an unacknowledged batch is half there: \(applied) changes applied, \(notApplied) not")
            }
        }
        return problems
    }
}
