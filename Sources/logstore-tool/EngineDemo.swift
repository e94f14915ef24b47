import ArgumentParser
import Foundation
import LogStore
import LogStoreExamples

/// `engine-demo [DIR]`: writes a small record graph through the engine API, shows deletes, collection and compaction, reads it back,
/// reopens and verifies the store, and prints its statistics.
struct EngineDemo: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "engine-demo",
        abstract: "Create a demo object graph, collect garbage, compact, check every read, reopen, verify.",
        discussion: """
            Writes 300 pinned notes, each referring to the one before it and every third one to an unpinned \
            comment that only the note keeps alive; a pinned draft with an unpinned attachment; and one \
            atomic batch of 40 unpinned items, an unpinned index referring to them (the last item refers \
            back to it: a cycle) and the root "main" pointing at the index. Then it deletes the 5 newest \
            notes (their comments go with them) and shows that deleting a note another one refers to is \
            refused; unpins the draft (collected at once, with its attachment) and moves "main" to a new \
            index of the first 20 items, which leaves the old index and the other items unreachable (a \
            cycle, so only mark-sweep frees them); runs mark-sweep and compaction; reads everything back, \
            closes and reopens the store, verifies it and prints its statistics. Exits non-zero when any \
            check fails.
            """
    )

    @Argument(help: "Where to put the demo store (default: a new temporary folder).")
    var directory: String?

    /// Type tags of the demo's objects.
    private enum Tag {
        static let note: UInt32 = 1
        static let item: UInt32 = 2
        static let index: UInt32 = 3
        static let comment: UInt32 = 4
        static let draft: UInt32 = 5
        static let attachment: UInt32 = 6
    }

    func run() throws {
        if let directory { try refuseNonDirectory(directory) }
        let path = try directory ?? makeTemporaryDirectory()
        var checks = DemoChecks()
        print("LogStore demo: store at \(path)")

        // Small segments, so even a demo spans several segment files (and compaction has sealed ones).
        let options = writableOptions(segmentSize: LogStoreLimits.minSegmentSize)
        var model = DemoModel()
        do {
            let store = try Store.open(at: path, options: options)
            model.fresh = try store.count() == 0

            // Notes: pinned, one put each, each referring to the previous one; every third one also
            // refers to an unpinned comment put just before it (nothing refers to it until the note).
            var notes: [ObjectID] = []
            var comments: [ObjectID: ObjectID] = [:]
            for number in 0..<300 {
                var references = notes.last.map { [$0] } ?? []
                var comment: ObjectID?
                if number % 3 == 0 {
                    let payload = Array("comment on note \(number)".utf8)
                    let id = try store.put(typeTag: Tag.comment, payload: payload, pinned: false)
                    model.add(Record(id: id, typeTag: Tag.comment, payload: payload, isPinned: false))
                    references.append(id)
                    comment = id
                }
                let payload = notePayload(number)
                let note = try store.put(typeTag: Tag.note, references: references, payload: payload)
                model.add(Record(id: note, typeTag: Tag.note, references: references, payload: payload))
                if let comment { comments[note] = comment }
                notes.append(note)
            }
            let attachmentPayload = Array("attachment of the draft".utf8)
            let attachment = try store.put(typeTag: Tag.attachment, payload: attachmentPayload, pinned: false)
            model.add(Record(id: attachment, typeTag: Tag.attachment, payload: attachmentPayload, isPinned: false))
            let draft = Record(
                id: store.newID(), typeTag: Tag.draft, references: [attachment], payload: Array("a draft".utf8))
            try store.put(draft)
            model.add(draft)
            print(
                "  wrote 300 pinned notes, one put each, each referring to the previous one, every third one "
                    + "also to an unpinned comment; and a pinned draft with an unpinned attachment")

            // One atomic batch: 40 unpinned items, an unpinned index referring to them, the last item
            // referring back to the index (a cycle), and the root "main" keeping it all alive.
            var batch = WriteBatch()
            let items = (0..<40).map { _ in store.newID() }
            let index = store.newID()
            for (number, id) in items.enumerated() {
                let payload = Array("item \(number): \(String(repeating: "\(number % 10)", count: number * 7))".utf8)
                let item = Record(
                    id: id, typeTag: Tag.item, references: number == items.count - 1 ? [index] : [],
                    payload: payload, isPinned: false)
                batch.put(item)
                model.add(item)
            }
            let indexRecord = Record(
                id: index, typeTag: Tag.index, references: items, payload: Array("index of \(items.count) items".utf8),
                isPinned: false)
            batch.put(indexRecord)
            model.add(indexRecord)
            batch.setRoot("main", to: index)
            model.main = index
            try store.write(batch)
            print(
                "  wrote 1 batch: 40 unpinned items, an unpinned index referring to them (the last item refers "
                    + "back to it: a cycle) and root \"main\" -> the index")
            check(store, model, &checks)
            print("  read back \(plural(model.expected.count, "object")) and root \"main\": \(checks.verdict)")

            // Deletes: the oldest note is still referred to, so deleting it is refused; the 5 newest
            // notes go in one batch (each refers to the one before, deleted too) and take their
            // comments with them.
            do {
                try store.delete(notes[0])
                checks.expect(false, "deleting note \(notes[0]), which note \(notes[1]) refers to, was refused")
            } catch {
                checks.expect(error.code == .stillReferenced, "deleting a referenced note fails with stillReferenced")
                print("  deleting the oldest note was refused: \(error.message)")
            }
            checks.expect(try store.get(notes[0]) != nil, "the oldest note is still there")
            var deletes = WriteBatch()
            var collected = 0
            for note in notes.suffix(5) {
                deletes.delete(note)
                model.remove(note)
                if let comment = comments[note] {
                    model.remove(comment)
                    collected += 1
                }
            }
            try store.write(deletes)
            print(
                "  deleted the 5 newest notes in 1 batch; \(plural(collected, "comment")) only they referred to "
                    + "went with them")

            // Garbage: unpinning the draft frees it at once (nothing refers to it), and its attachment
            // with it; moving "main" to a new index leaves the old one to mark-sweep, as the last item
            // still refers to it.
            var changes = WriteBatch()
            var unpinned = draft
            unpinned.isPinned = false
            changes.put(unpinned)
            model.remove(draft.id)
            model.remove(attachment)
            let newIndex = Record(
                id: store.newID(), typeTag: Tag.index, references: Array(items.prefix(20)),
                payload: Array("index of the first 20 items".utf8), isPinned: false)
            changes.put(newIndex)
            model.add(newIndex)
            changes.setRoot("main", to: newIndex.id)
            model.main = newIndex.id
            try store.write(changes)
            checks.expect(try store.get(draft.id) == nil, "the unpinned draft was collected at once")
            checks.expect(try store.get(attachment) == nil, "the draft's attachment was collected with it")
            checks.expect(try store.contains(index), "the old index, in a cycle, is still live")
            let unreachable = try store.count() - store.reachableObjectCount()
            checks.expect(
                model.fresh ? unreachable == 21 : unreachable >= 21,
                "the old index and 20 items are unreachable (found \(unreachable))")
            print(
                "  unpinned the draft (collected at once, with its attachment) and moved root \"main\" to a new "
                    + "index of the first 20 items: \(plural(unreachable, "object")) left unreachable")

            // Mark-sweep frees the cycle; compaction rewrites the sealed segments that hold garbage.
            let sweep = try store.collectGarbage()
            checks.expect(sweep.collected == unreachable, "mark-sweep collected every unreachable object")
            model.remove(index)
            for item in items.suffix(20) { model.remove(item) }
            print(
                "  mark-sweep: \(sweep.reachable) of \(plural(sweep.liveAtSnapshot, "live object")) reachable, "
                    + "\(sweep.collected) collected")
            let compaction = try store.compact()
            checks.expect(
                compaction.bytesAfter <= compaction.bytesBefore, "compaction did not grow the store")
            print(
                "  compaction: \(compaction.segmentsBefore) -> \(plural(compaction.segmentsAfter, "segment")), "
                    + "\(formatBytes(compaction.bytesBefore)) -> \(formatBytes(compaction.bytesAfter)), "
                    + "\(plural(compaction.recordsCopied, "record")) copied")
            let failuresBefore = checks.failures
            check(store, model, &checks)
            print(
                "  read back \(plural(model.expected.count, "object")), \(model.gone.count) gone and root "
                    + "\"main\": \(checks.failures == failuresBefore ? "ok" : "FAILED")")
            try store.close()
        }

        let reopened = try Store.open(at: path, options: options)
        let failuresBefore = checks.failures
        checks.expect(reopened.recovery == nil, "reopening needed no recovery")
        check(reopened, model, &checks)
        let statistics = try reopened.statistics()
        let reachable = try reopened.reachableObjectCount()
        try reopened.close()
        let reopenVerdict = checks.failures == failuresBefore ? "ok" : "FAILED"
        print(
            "  closed and reopened: \(plural(model.expected.count, "object")) and root \"main\" read back: "
                + reopenVerdict
        )

        let report = try Store.verify(at: path)
        for problem in report.problems { Console.error("  problem: \(problem)") }
        for note in report.notes { print("  note: \(note)") }
        checks.expect(report.isSound, "verify found \(report.problems.count) problems")
        checks.expect(report.liveObjects == statistics.liveObjects, "verify checked every live object")
        checks.expect(reachable == statistics.liveObjects, "every live object is reachable after mark-sweep")
        print(
            "  verify: \(report.isSound ? "sound" : "DAMAGED"): \(plural(report.segments, "segment")), "
                + "\(plural(report.frames, "frame")), \(plural(report.liveObjects, "live object")) checked")
        print(
            "  stats: \(plural(statistics.segments.count, "segment")), \(formatBytes(statistics.totalBytes)) "
                + "(\(formatBytes(statistics.liveBytes)) live, \(formatBytes(statistics.garbageBytes)) garbage), "
                + "\(plural(statistics.liveObjects, "live object")) (\(reachable) reachable), "
                + "\(plural(statistics.roots, "root")), index \(formatBytes(UInt64(statistics.indexMemoryBytes)))")

        guard checks.failures == 0 else {
            Console.error("demo FAILED: \(checks.failures) checks failed")
            throw ExitCode(1)
        }
        print("demo passed")
    }

    /// Checks every expected record (pin included), that gone objects are gone, the root and the counts.
    private func check(_ store: Store, _ model: DemoModel, _ checks: inout DemoChecks) {
        do {
            for (id, record) in model.expected.sorted(by: { $0.key < $1.key }) {
                checks.expect(try store.get(id) == record, "object \(id) reads back as written")
            }
            for id in model.gone.sorted() {
                checks.expect(try store.get(id) == nil, "object \(id) is gone")
            }
            checks.expect(try store.root(named: "main") == model.main, "root \"main\" points at the current index")
            let ids = try store.ids()
            checks.expect(try store.count() == ids.count, "the store counts every live object")
            if model.fresh {
                checks.expect(ids.count == model.expected.count, "the store holds exactly the demo's objects")
            }
            let counts = try store.countsByType()
            checks.expect((counts[Tag.item] ?? 0) >= 20, "the store counts the items by type")
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
}

/// Counts failed checks and prints each one.
struct DemoChecks {
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

/// What the demo wrote and expects: objects that must read back as written, objects that must be
/// gone, and where "main" points.
private struct DemoModel {
    var expected: [ObjectID: Record] = [:]
    var gone: Set<ObjectID> = []
    var main: ObjectID?
    /// Whether the store was empty when the demo started, so it must hold exactly the demo's objects.
    var fresh = false

    mutating func add(_ record: Record) {
        expected[record.id] = record
        gone.remove(record.id)
    }

    mutating func remove(_ id: ObjectID) {
        expected[id] = nil
        gone.insert(id)
    }
}
