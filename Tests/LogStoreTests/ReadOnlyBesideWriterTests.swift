import Foundation
import Synchronization
import TestSupport
import Testing

@testable @_spi(Testing) import LogStore

#if canImport(Glibc)
    import Glibc
#endif

/// A read-only open and `verify` take no lock, so a writer (here another `Store` of this process, as it
/// would be another process) creates, compacts and deletes segments while they load. They must read the
/// store again when that happens, never fail or report a loss that did not happen, and still report a
/// segment that really is missing.
@Suite struct ReadOnlyBesideWriterTests {
    /// Objects every store of these tests holds; the writer only ever overwrites them.
    static let objectCount = 300

    static func writerOptions() -> StoreOptions {
        var options = testOptions(segmentSize: 1 << 16)
        options.compaction.background = false
        return options
    }

    static func readOnlyOptions(_ faults: FaultInjector? = nil) -> StoreOptions {
        var options = testOptions(faults: faults)
        options.readOnly = true
        options.createIfMissing = false
        return options
    }

    /// Opens a writer with ``objectCount`` objects, each written `rounds` times (so its older segments
    /// are garbage that compaction deletes), and returns it with the ids.
    static func writer(_ directory: TemporaryStore, rounds: UInt64 = 3) throws -> (Store, [ObjectID]) {
        let store = try directory.open(options: writerOptions())
        let ids = (0..<objectCount).map { _ in store.newID() }
        for version in 1...rounds { try overwrite(store, ids, version: version) }
        #expect(directory.segmentFiles().count >= 3)
        return (store, ids)
    }

    /// Writes every object of `ids` again, in batches of 50.
    static func overwrite(_ store: Store, _ ids: [ObjectID], version: UInt64) throws {
        for start in stride(from: 0, to: ids.count, by: 50) {
            try store.write { batch in
                for id in ids[start..<min(start + 50, ids.count)] {
                    batch.put(id, typeTag: 1, payload: ConcurrencyTests.payload(id: id, version: version))
                }
            }
        }
    }

    /// What is wrong with a read-only view of the writer's objects: each must be there, with a payload
    /// the writer committed for it, and nothing else.
    static func problems(in store: Store, _ ids: [ObjectID]) -> [String] {
        do {
            var problems: [String] = []
            if try store.ids() != ids { problems.append("ids: \(try store.ids().count) of \(ids.count)") }
            for id in ids {
                guard let record = try store.get(id) else {
                    problems.append("object \(id) is missing")
                    continue
                }
                if !ConcurrencyTests.isValid(record.payload, id: id) { problems.append("object \(id): wrong payload") }
            }
            return problems
        } catch {
            return ["\(error)"]
        }
    }
}

// MARK: - Beside a writer that overwrites and compacts in a loop

extension ReadOnlyBesideWriterTests {
    /// Runs a writer thread (overwriting every object in batches) and a compaction thread (compacting in
    /// a loop) on the writer's store until `reader` returns, then checks the store.
    static func besideACompactingWriter(
        _ label: String,
        reader: @escaping @Sendable (_ path: String, _ ids: [ObjectID], _ failures: Shared<[String]>) -> Void
    ) throws -> (passes: Int, segmentsCompacted: Int) {
        let directory = TemporaryStore(label)
        let (store, ids) = try writer(directory)
        let stop = Atomic<Bool>(false)
        let failures = Shared<[String]>([])
        let passes = Atomic<Int>(0)
        let compacted = Atomic<Int>(0)
        let group = ThreadGroup()
        group.start(1) { _ in
            var version: UInt64 = 4
            while !stop.load(ordering: .relaxed) {
                do {
                    try overwrite(store, ids, version: version)
                } catch {
                    failures.withLock { $0.append("write: \(error)") }
                    return
                }
                version += 1
            }
        }
        group.start(1) { _ in
            while !stop.load(ordering: .relaxed) {
                do {
                    let report = try store.compact()
                    passes.add(1, ordering: .relaxed)
                    compacted.add(report.segmentsCompacted, ordering: .relaxed)
                } catch {
                    failures.withLock { $0.append("compact: \(error)") }
                    return
                }
            }
        }
        reader(directory.path, ids, failures)
        stop.store(true, ordering: .relaxed)
        group.join()
        try store.close()
        let found = failures.withLock { $0 }
        #expect(found.isEmpty, "\(found.count) failures, first: \(found.prefix(5))")
        #expect(try Store.verify(at: directory.path).isSound)
        return (passes.load(ordering: .relaxed), compacted.load(ordering: .relaxed))
    }

    @Test func everyReadOnlyOpenBesideACompactingWriterSucceedsAndSeesEveryObject() throws {
        let opens = 150
        let result = try Self.besideACompactingWriter("readonly-beside") { path, ids, failures in
            for index in 0..<opens {
                do {
                    let store = try Store.open(at: path, options: Self.readOnlyOptions())
                    let problems = Self.problems(in: store, ids)
                    if !problems.isEmpty { failures.withLock { $0.append("open \(index): \(problems.prefix(3))") } }
                    try store.close()
                } catch {
                    failures.withLock { $0.append("open \(index): \(error)") }
                }
            }
        }
        // The writer really did replace segments while the reader opened the store.
        #expect(result.passes > 0 && result.segmentsCompacted > 0, "\(result)")
    }

    @Test func verifyBesideACompactingWriterFindsNoProblem() throws {
        let runs = 100
        let result = try Self.besideACompactingWriter("verify-beside") { path, ids, failures in
            for index in 0..<runs {
                do {
                    let report = try Store.verify(at: path)
                    if !report.problems.isEmpty {
                        failures.withLock { $0.append("verify \(index): \(report.problems.prefix(3))") }
                    }
                    if report.liveObjects != ids.count {
                        failures.withLock { $0.append("verify \(index): \(report.liveObjects) live objects") }
                    }
                } catch {
                    failures.withLock { $0.append("verify \(index): \(error)") }
                }
            }
        }
        #expect(result.passes > 0 && result.segmentsCompacted > 0, "\(result)")
    }
}

// MARK: - The tool, in its own process, beside the writer

extension ReadOnlyBesideWriterTests {
    @Test func toolExportAndVerifyBesideACompactingWriterSucceed() throws {
        let runs = 15
        let result = try Self.besideACompactingWriter("tool-beside") { path, ids, failures in
            for index in 0..<runs {
                do {
                    let export = try ToolRunner.run(["export", path])
                    let objects = export.stdout.split(separator: "\n").filter { $0.hasPrefix("{\"id\":") }.count
                    if export.status != 0 || objects != ids.count {
                        failures.withLock { $0.append("export \(index): \(objects) objects, \(export.output)") }
                    }
                    let verify = try ToolRunner.run(["verify", path])
                    if verify.status != 0 || !verify.stdout.contains("sound") {
                        failures.withLock { $0.append("verify \(index): \(verify.output)") }
                    }
                } catch {
                    failures.withLock { $0.append("tool \(index): \(error)") }
                }
            }
        }
        #expect(result.passes > 0 && result.segmentsCompacted > 0, "\(result)")
    }
}
