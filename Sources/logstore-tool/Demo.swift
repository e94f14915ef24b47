import ArgumentParser
import Foundation
import LogStore

/// `demo [DIR]`: writes a small store, reads it back, reopens and verifies it, and prints its statistics.
struct Demo: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Create a demo store, check every read, reopen, verify and print statistics.",
        discussion: """
            Writes a few hundred objects that reference each other, an atomic batch with a named root \
            "main", reads everything back, closes and reopens the store, verifies it and prints its \
            statistics. Exits non-zero when any check fails.
            """
    )

    @Argument(help: "Where to put the demo store (default: a new temporary folder).")
    var directory: String?

    /// Type tags of the demo's objects.
    private enum Tag {
        static let note: UInt32 = 1
        static let item: UInt32 = 2
        static let index: UInt32 = 3
    }

    func run() throws {
        let path = try directory ?? makeTemporaryDirectory()
        var checks = DemoChecks()
        print("LogStore demo: store at \(path)")

        // Small segments, so even a demo spans several segment files.
        let options = StoreOptions(segmentSize: LogStoreLimits.minSegmentSize)
        var expected: [ObjectID: Record] = [:]
        var deleted: [ObjectID] = []
        let mainRoot: ObjectID
        let countBefore: Int
        do {
            let store = try Store.open(at: path, options: options)
            countBefore = try store.count()

            // 300 notes, one put each, every note referencing the one before it.
            var previous: ObjectID?
            for number in 0..<300 {
                let payload = notePayload(number)
                let references = previous.map { [$0] } ?? []
                let id = try store.put(typeTag: Tag.note, references: references, payload: payload)
                expected[id] = Record(id: id, typeTag: Tag.note, references: references, payload: payload)
                previous = id
            }
            print("  wrote 300 notes, one put each, each referencing the previous one")

            // One atomic batch: 40 items, an index referencing them, 5 deletes and the root "main".
            var batch = WriteBatch()
            var items: [ObjectID] = []
            for number in 0..<40 {
                let id = store.newID()
                let payload = Array("item \(number): \(String(repeating: "\(number % 10)", count: number * 7))".utf8)
                batch.put(id, typeTag: Tag.item, payload: payload)
                expected[id] = Record(id: id, typeTag: Tag.item, payload: payload)
                items.append(id)
            }
            let index = store.newID()
            let indexPayload = Array("index of \(items.count) items".utf8)
            batch.put(index, typeTag: Tag.index, references: items, payload: indexPayload)
            expected[index] = Record(id: index, typeTag: Tag.index, references: items, payload: indexPayload)
            for id in expected.keys.sorted().filter({ expected[$0]?.typeTag == Tag.note }).prefix(5) {
                batch.delete(id)
                expected[id] = nil
                deleted.append(id)
            }
            batch.setRoot("main", to: index)
            try store.write(batch)
            mainRoot = index
            print("  wrote 1 batch: 40 items, an index referencing them, 5 deletes, root \"main\"")

            check(store, expected: expected, deleted: deleted, main: mainRoot, count: countBefore, &checks)
            print("  read back \(expected.count) objects, 5 deletes and root \"main\": \(checks.verdict)")
            try store.close()
        }

        let reopened = try Store.open(at: path, options: options)
        let failuresBefore = checks.failures
        checks.expect(reopened.recovery == nil, "reopening needed no recovery")
        check(reopened, expected: expected, deleted: deleted, main: mainRoot, count: countBefore, &checks)
        let statistics = try reopened.statistics()
        try reopened.close()
        let reopenVerdict = checks.failures == failuresBefore ? "ok" : "FAILED"
        print("  closed and reopened: \(expected.count) objects and root \"main\" read back: \(reopenVerdict)")

        let report = try Store.verify(at: path)
        for problem in report.problems { Console.error("  problem: \(problem)") }
        for note in report.notes { print("  note: \(note)") }
        checks.expect(report.isSound, "verify found \(report.problems.count) problems")
        checks.expect(report.liveObjects == countBefore + expected.count, "verify checked every live object")
        print(
            "  verify: \(report.isSound ? "sound" : "DAMAGED"): \(plural(report.segments, "segment")), "
                + "\(plural(report.frames, "frame")), \(plural(report.liveObjects, "live object")) checked")
        print(
            "  stats: \(plural(statistics.segments.count, "segment")), \(formatBytes(statistics.totalBytes)) "
                + "(\(formatBytes(statistics.liveBytes)) live, \(formatBytes(statistics.garbageBytes)) garbage), "
                + "\(plural(statistics.liveObjects, "live object")), \(plural(statistics.roots, "root")), "
                + "index \(formatBytes(UInt64(statistics.indexMemoryBytes)))")

        guard checks.failures == 0 else {
            Console.error("demo FAILED: \(checks.failures) checks failed")
            throw ExitCode(1)
        }
        print("demo passed")
    }

    /// Checks every expected record, that deleted objects are gone, the root and the counts.
    private func check(
        _ store: Store, expected: [ObjectID: Record], deleted: [ObjectID], main: ObjectID, count before: Int,
        _ checks: inout DemoChecks
    ) {
        do {
            for (id, record) in expected.sorted(by: { $0.key < $1.key }) {
                checks.expect(try store.get(id) == record, "object \(id) reads back as written")
            }
            for id in deleted {
                checks.expect(try store.get(id) == nil, "deleted object \(id) is gone")
            }
            checks.expect(try store.root(named: "main") == main, "root \"main\" points at the index \(main)")
            checks.expect(try store.count() == before + expected.count, "the store counts every live object")
            let counts = try store.countsByType()
            checks.expect((counts[Tag.item] ?? 0) >= 40, "the store counts the items by type")
        } catch {
            checks.expect(false, "reading failed: \(error)")
        }
    }

    /// A note's text: 60 to 160 words picked by a generator seeded with the note's number.
    private func notePayload(_ number: Int) -> [UInt8] {
        let words = [
            "append", "only", "log", "segment", "frame", "checksum", "record", "object", "index", "root",
            "batch", "commit", "durable", "crash", "recovery", "torn", "tail", "store", "payload", "reference",
            "the", "a", "of", "and", "every", "one", "is", "was", "written", "read", "back", "again",
        ]
        var random = SplitMix64(seed: UInt64(number))
        let count = 60 + Int(random.next() % 101)
        let text = (0..<count).map { _ in words[Int(random.next() % UInt64(words.count))] }
        return Array("note \(number): \(text.joined(separator: " "))".utf8)
    }

    private func makeTemporaryDirectory() throws -> String {
        let base = FileManager.default.temporaryDirectory.path
        var template = Array((base + "/logstore-demo-XXXXXX").utf8CString)
        let created = template.withUnsafeMutableBufferPointer { buffer in
            buffer.baseAddress.flatMap { mkdtemp($0) }
        }
        guard let created else {
            throw ToolError("cannot create a temporary folder in \(base)")
        }
        return String(cString: created)
    }
}

/// Counts failed checks and prints each one.
private struct DemoChecks {
    var failures = 0

    /// `ok` when nothing failed so far.
    var verdict: String { failures == 0 ? "ok" : "FAILED" }

    mutating func expect(_ condition: @autoclosure () throws -> Bool, _ what: String) {
        let passed = (try? condition()) ?? false
        if !passed {
            failures += 1
            Console.error("  check failed: \(what)")
        }
    }
}
