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
        /// `writeHints()` (hint files for sealed segments that have none).
        case writeHints
    }

    let name: String
    let steps: [Step]
    /// Whether the store is encrypted (with ``testCipher(_:)``).
    var encrypted = false
    /// Small enough that the workloads roll over to new segments.
    var options: StoreOptions {
        var options = StoreOptions(segmentSize: LogStoreLimits.minSegmentSize, fsyncPolicy: .always)
        options.compaction.background = false
        if encrypted { options.cipher = testCipher() }
        return options
    }

    /// The workloads of ``all`` that write batches of many frames, compact and collect, on an encrypted store.
    static var encryptedWorkloads: [ScriptedWorkload] {
        all.dropFirst().map { ScriptedWorkload(name: $0.name + ", encrypted", steps: $0.steps, encrypted: true) }
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
            steps: (0..<8).map { _ in .batch(new: 60, overwrite: 5, delete: 1, size: 300...1_200, setRoot: false) }
                + [.writeHints, .batch(new: 5, overwrite: 5, delete: 1, size: 100...300, setRoot: false)]),
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
    /// one recorded as such). `observedCalls` counts the store's calls that change files: a step that
    /// failed without making one was refused before any I/O and changed nothing.
    ///
    /// In batches with a root change, the root's new target is the batch's first new object, put unpinned
    /// (it lives while a root names it); every other object is pinned. New objects refer to up to two
    /// older pinned objects; deletes pick pinned objects nothing refers to.
    func run(_ store: Store, continueAfterFailure: Bool = false, observedCalls: () -> Int = { 0 }) -> WorkloadRecord {
        var record = WorkloadRecord()
        var random = SplitMix64(seed: 0x5EED_0000 &+ UInt64(name.utf8.count))
        var live: [ObjectID] = []  // pinned objects, in the order the script made them
        var records: [ObjectID: Record] = [:]  // the script's view (acknowledged or not)
        var incoming: [ObjectID: Int] = [:]
        for (stepNumber, step) in steps.enumerated() {
            var change = WorkloadRecord.Change()
            var failure: (any Error)?
            let callsBefore = observedCalls()
            switch step {
            case .batch(let new, let overwrite, let delete, let size, let setRoot):
                var batch = WriteBatch()
                func payload(_ id: ObjectID) -> [UInt8] {
                    let count = Int.random(in: size, using: &random)
                    let text =
                        "{\"step\":\(stepNumber),\"id\":\(id.rawValue),\"name\":\"object\",\"tags\":[\"a\",\"b\"]}"
                    return Array(String(repeating: text, count: count / text.utf8.count + 1).utf8.prefix(count))
                }
                func references() -> [ObjectID] {
                    guard live.count > 2 else { return [] }
                    return (0..<Int(random.next() % 3)).map { _ in live[Int(random.next() % UInt64(live.count))] }
                }
                func put(_ made: Record) {
                    for target in records[made.id]?.references ?? [] { incoming[target, default: 0] -= 1 }
                    for target in made.references { incoming[target, default: 0] += 1 }
                    records[made.id] = made
                    batch.put(made)
                    change.puts[made.id] = made
                }
                var newIDs: [ObjectID] = []
                for index in 0..<new {
                    let id = store.newID()
                    let pinned = !(setRoot && index == 0)
                    put(
                        Record(
                            id: id, typeTag: 1 + UInt32(id.rawValue % 3), references: references(),
                            payload: payload(id), isPinned: pinned))
                    newIDs.append(id)
                }
                let older = live
                for _ in 0..<min(overwrite, older.count) {
                    let id = older[Int(random.next() % UInt64(older.count))]
                    guard change.puts[id] == nil, !change.deletes.contains(id) else { continue }
                    put(Record(id: id, typeTag: 4, references: references().filter { $0 != id }, payload: payload(id)))
                }
                for _ in 0..<min(delete, older.count) {
                    let id = older[Int(random.next() % UInt64(older.count))]
                    guard change.puts[id] == nil, !change.deletes.contains(id), incoming[id, default: 0] == 0 else {
                        continue
                    }
                    batch.delete(id)
                    change.deletes.insert(id)
                    for target in records[id]?.references ?? [] { incoming[target, default: 0] -= 1 }
                    records[id] = nil
                    live.removeAll { $0 == id }
                }
                live += newIDs.filter { records[$0]?.isPinned == true }
                if setRoot, let target = newIDs.first {
                    let rootName = "root\(stepNumber % 3)"
                    batch.setRoot(rootName, to: target)
                    change.roots[rootName] = target
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
            case .writeHints:
                record.begin(change)
                do { try store.writeHints() } catch { failure = error }
            }
            if let failure {
                let refused = observedCalls() == callsBefore && record.hasFailedBatch
                record.fail("step \(stepNumber): \(failure)", refusedBeforeAnyIO: refused, isBatch: !change.isEmpty)
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
        var puts: [ObjectID: Record] = [:]
        var deletes: Set<ObjectID> = []
        var roots: [String: ObjectID] = [:]
        var isEmpty: Bool { puts.isEmpty && deletes.isEmpty && roots.isEmpty }
    }

    /// The acknowledged state: live objects, named roots.
    private(set) var objects: [ObjectID: Record] = [:]
    private(set) var roots: [String: ObjectID] = [:]
    /// Changes not acknowledged, in order, each without what acknowledged changes made after it settled.
    private(set) var unacknowledged: [Change] = []
    private var current: Change?
    /// Every object any step touched.
    private(set) var touched: Set<ObjectID> = []
    /// Why steps failed.
    private(set) var failures: [String] = []
    /// Whether a batch failed after it reached the disk's calls (the store refuses writes from then on).
    private(set) var hasFailedBatch = false
    /// Steps that succeeded after a batch failed: the store should have refused them.
    private(set) var acceptedAfterFailure: [String] = []

    mutating func begin(_ change: Change) {
        current = change
        touched.formUnion(change.puts.keys)
        touched.formUnion(change.deletes)
    }

    mutating func acknowledge() {
        guard let change = current else { return }
        if hasFailedBatch, !change.isEmpty { acceptedAfterFailure.append("a batch after a failed one") }
        for (id, made) in change.puts { objects[id] = made }
        for id in change.deletes { objects[id] = nil }
        roots.merge(change.roots) { $1 }
        // Unpinned objects no root names any more are freed (nothing else refers to them).
        for (id, made) in objects where !made.isPinned && !roots.values.contains(id) { objects[id] = nil }
        // A later acknowledged change settles what it touches.
        for index in unacknowledged.indices {
            for id in change.puts.keys { unacknowledged[index].puts[id] = nil }
            for id in change.deletes { unacknowledged[index].puts[id] = nil }
            unacknowledged[index].deletes.subtract(change.puts.keys)
            unacknowledged[index].deletes.subtract(change.deletes)
            for name in change.roots.keys { unacknowledged[index].roots[name] = nil }
        }
        current = nil
    }

    /// Records a failed step; one `refusedBeforeAnyIO` changed nothing and is not in doubt.
    mutating func fail(_ reason: String, refusedBeforeAnyIO: Bool = false, isBatch: Bool = true) {
        failures.append(reason)
        if let change = current, !change.isEmpty, !refusedBeforeAnyIO { unacknowledged.append(change) }
        if isBatch { hasFailedBatch = true }
        current = nil
    }

    /// Whether the store holds what was acknowledged (records field for field, roots, no other objects or
    /// roots), and each unacknowledged change either wholly or not at all (judged on what no later
    /// unacknowledged change also touches). Returns the problems, empty when it does.
    func problems(in store: Store) throws -> [String] {
        var problems = acceptedAfterFailure
        var allowed: [ObjectID: [Record?]] = [:]
        for id in touched { allowed[id] = [objects[id]] }
        for change in unacknowledged {
            for (id, made) in change.puts { allowed[id, default: [nil]].append(made) }
            for id in change.deletes { allowed[id, default: [nil]].append(nil) }
            // A root the change moves frees its old target when that is unpinned.
            for name in change.roots.keys {
                if let old = roots[name], objects[old]?.isPinned == false { allowed[old, default: [nil]].append(nil) }
            }
        }
        var observed: [ObjectID: Record?] = [:]
        for id in touched {
            let found = try store.get(id)
            observed[id] = found
            let values = allowed[id] ?? [nil]
            if !values.contains(where: { $0 == found }) {
                problems.append(
                    "object \(id.rawValue): \(found.map { "\($0.payload.count) bytes, tag \($0.typeTag)" } ?? "absent") "
                        + "is none of the allowed \(values.count) versions")
            }
        }
        if let extra = try store.ids().first(where: { !touched.contains($0) }) {
            problems.append("object \(extra.rawValue) was never written")
        }
        let storedRoots = try store.roots()
        let rootNames = Set(roots.keys).union(unacknowledged.flatMap(\.roots.keys))
        for name in Set(storedRoots.keys).union(rootNames) where storedRoots[name] != roots[name] {
            let alternatives = unacknowledged.compactMap { $0.roots[name] }
            if let stored = storedRoots[name], alternatives.contains(stored) { continue }
            problems.append(
                "root \(name): \(storedRoots[name].map { "\($0.rawValue)" } ?? "absent"), "
                    + "acknowledged \(roots[name].map { "\($0.rawValue)" } ?? "none")")
        }
        for (index, change) in unacknowledged.enumerated() {
            let later = unacknowledged[(index + 1)...].reduce(into: Set<ObjectID>()) {
                $0.formUnion($1.puts.keys)
                $0.formUnion($1.deletes)
            }
            let laterRoots = Set(unacknowledged[(index + 1)...].flatMap(\.roots.keys))
            var applied = 0
            var notApplied = 0
            for (id, made) in change.puts where !later.contains(id) {
                guard let seen = observed[id], seen != objects[id] || made != objects[id] else { continue }
                if seen == made { applied += 1 } else if seen == objects[id] { notApplied += 1 }
            }
            for id in change.deletes where !later.contains(id) && objects[id] != nil {
                if observed[id] == .some(nil) { applied += 1 } else { notApplied += 1 }
            }
            for (name, target) in change.roots where !laterRoots.contains(name) && roots[name] != target {
                if storedRoots[name] == target {
                    applied += 1
                } else if storedRoots[name] == roots[name] {
                    notApplied += 1
                }
            }
            if applied > 0 && notApplied > 0 {
                problems.append("an unacknowledged batch is half there: \(applied) changes applied, \(notApplied) not")
            }
        }
        return problems
    }
}
