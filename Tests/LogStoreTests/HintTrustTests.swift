import Foundation
@_spi(Engine) import LogStoreFormat
import TestSupport
import Testing

@testable @_spi(Testing) import LogStore

/// A hint file with a valid checksum but wrong entries may speed up an open, never decide what is
/// destroyed: open checks what it can without reading the frames, compaction compares the hint with the
/// segment before it drops anything, and the collector asks the frame whether an object is pinned.
@Suite struct HintTrustTests {
    func options() -> StoreOptions {
        var options = testOptions(segmentSize: 1 << 16)
        options.compaction.background = false
        return options
    }

    /// A closed store whose first segment is sealed and has a hint: what `first` writes, then pinned
    /// objects of 500 bytes; returns the payloads of the live objects.
    func makeStore(_ directory: TemporaryStore, first: (Store) throws -> Void = { _ in }) throws -> [ObjectID: [UInt8]]
    {
        let store = try directory.open(options: options())
        try first(store)
        var live: [ObjectID: [UInt8]] = [:]
        for (id, record) in try store.ids().map({ ($0, try store.get($0)) }) { live[id] = record?.payload }
        var index: UInt64 = 0
        while directory.segmentFiles().count < 2 {
            index += 1
            let payload = payloadBytes(500, seed: index)
            live[try store.put(typeTag: 1, payload: payload)] = payload
        }
        try store.writeHints()
        try store.close()
        return live
    }

    /// Rewrites the hint of segment 1 as `change` makes its entries (read with the hint reader, written
    /// with the hint writer, which gives an entry whose frame does not follow the one before its offset);
    /// the checksum is computed anew, so the hint is valid as a file.
    func forgeHint(_ directory: TemporaryStore, _ change: (inout [HintFile.Entry]) throws -> Void) throws {
        let path = directory.path + "/" + HintFile.fileName(1)
        let bytes = try Data(contentsOf: URL(fileURLWithPath: path))
        var (number, size, entries, isCompact) = try bytes.withUnsafeBytes { raw in
            let reader = try HintReader.open(raw).get()
            return (reader.segmentNumber, reader.segmentSize, reader.entries, reader.isCompact)
        }
        try change(&entries)
        var writer = HintWriter(
            segmentNumber: number, segmentSize: size, format: isCompact ? .v2(baseSequence: 0) : .v1)
        for entry in entries { writer.append(entry) }
        try Data(writer.finish()).write(to: URL(fileURLWithPath: path))
    }

    func position(of id: UInt64, in entries: [HintFile.Entry]) throws -> Int {
        try #require(entries.firstIndex { $0.kind == .put && $0.id == id })
    }

    /// A hint that leaves out an object's entry leaves a gap between frames: open does not use it, and
    /// the object is there (and survives compaction). `verify` reports the hint.
    @Test func aHintMissingAnEntryIsNotUsed() throws {
        let directory = TemporaryStore("hint-missing-entry")
        let live = try makeStore(directory) { store in
            _ = try store.put(typeTag: 1, payload: [1])
            try store.delete(ObjectID(1))
        }
        try forgeHint(directory) { entries in entries.remove(at: try position(of: 5, in: entries)) }
        let hint = directory.path + "/" + HintFile.fileName(1)
        let report = try Store.verify(at: directory.path)
        #expect(report.problems.contains { $0.file == hint && $0.message.contains("disagrees") }, "\(report.problems)")

        let store = try directory.open(options: options())
        #expect(store.segmentsLoadedFromHints == 0)
        #expect(store.openNotes.contains { $0.contains(hint) && $0.contains("gap") }, "\(store.openNotes)")
        #expect(try store.get(ObjectID(5))?.payload == live[ObjectID(5)])
        try store.compact()
        for (id, payload) in live { #expect(try store.get(id)?.payload == payload, "object \(id)") }
        try store.close()
    }

    /// A hint that leaves out an object's entry and makes the entry before it (a dead record's) longer by
    /// as much passes open's checks and hides the object; compaction finds it before it drops anything,
    /// and the next open sees the object again.
    @Test func compactionNeverDeletesWhatAHintHid() throws {
        let directory = TemporaryStore("hint-hidden-object")
        // Object 1 is the first record of segment 1 and is deleted: its entry is a dead record's.
        let live = try makeStore(directory) { store in
            _ = try store.put(typeTag: 1, payload: payloadBytes(500, seed: 99))
        }
        let store = try directory.open(options: options())
        try store.delete(ObjectID(1))
        try store.close()
        var hidden = live
        hidden[ObjectID(1)] = nil
        try forgeHint(directory) { entries in
            let dead = try position(of: 1, in: entries)
            let next = entries.remove(at: dead + 1)
            #expect(next.kind == .put && next.id == 2)
            entries[dead].length += next.length
        }
        let hint = directory.path + "/" + HintFile.fileName(1)
        let segment = directory.path + "/" + LogFormat.segmentFileName(1)

        let forged = try directory.open(options: options())
        #expect(forged.segmentsLoadedFromHints == 1)
        #expect(try forged.get(ObjectID(2)) == nil)  // hidden in this session: open did not read the frames
        let error = try #require(throws: LogStoreError.self) { try forged.compact() }
        #expect(error.code == .corruptHint, "\(error)")
        #expect(error.file == hint)
        #expect(FileManager.default.fileExists(atPath: segment))
        #expect(!FileManager.default.fileExists(atPath: hint))
        try forged.close()

        let reopened = try directory.open(options: options())
        for (id, payload) in hidden { #expect(try reopened.get(id)?.payload == payload, "object \(id)") }
        try reopened.compact()
        for (id, payload) in hidden { #expect(try reopened.get(id)?.payload == payload, "object \(id)") }
        try reopened.close()
    }

    /// A hint that clears an object's pinned flag makes the index take it for unpinned; mark-sweep compares
    /// the hint with its segment before it frees anything, and stops (so does a second pass), keeping it.
    @Test func markSweepKeepsAnObjectWhoseHintClearedItsPinnedFlag() throws {
        let directory = TemporaryStore("hint-cleared-pin-sweep")
        var pinned = ObjectID(0)
        let live = try makeStore(directory) { store in pinned = try store.put(typeTag: 2, payload: [7, 7, 7]) }
        try forgeHint(directory) { entries in
            entries[try position(of: pinned.rawValue, in: entries)].flags.remove(.pinned)
        }
        let store = try directory.open(options: options())
        #expect(store.segmentsLoadedFromHints == 1)
        let error = try #require(throws: LogStoreError.self) { try store.collectGarbage() }
        #expect(error.code == .corruptHint, "\(error)")
        #expect(try store.get(pinned)?.payload == [7, 7, 7])
        #expect(throws: LogStoreError.self) { try store.collectGarbage() }
        #expect(try store.get(pinned)?.payload == [7, 7, 7])
        try store.close()
        let reopened = try directory.open(options: options())
        #expect(try reopened.collectGarbage().collected == 0)
        for (id, payload) in live { #expect(try reopened.get(id)?.payload == payload, "object \(id)") }
        try reopened.close()
    }

    /// The same forged hint, and an object's count dropping to zero: reference counting asks the frame
    /// too, and keeps it.
    @Test func referenceCountingKeepsAnObjectWhoseHintClearedItsPinnedFlag() throws {
        let directory = TemporaryStore("hint-cleared-pin-count")
        var pinned = ObjectID(0)
        var referrer = ObjectID(0)
        _ = try makeStore(directory) { store in
            pinned = try store.put(typeTag: 2, payload: [7, 7, 7])
            referrer = try store.put(typeTag: 3, references: [pinned], payload: [8])
        }
        try forgeHint(directory) { entries in
            entries[try position(of: pinned.rawValue, in: entries)].flags.remove(.pinned)
        }
        let store = try directory.open(options: options())
        #expect(store.segmentsLoadedFromHints == 1)
        try store.put(referrer, typeTag: 3, payload: [9])  // the last reference to `pinned` goes
        #expect(try store.get(pinned)?.payload == [7, 7, 7])
        try store.close()
        let reopened = try directory.open(options: options())
        #expect(try reopened.get(pinned)?.payload == [7, 7, 7])
        try reopened.close()
    }

    /// Once the collector found a pinned frame whose hint entry cleared the flag, the segment's hint is
    /// known wrong: the session refuses to collect, saying the hint disagrees (not that it "was replaced"),
    /// and the hint the store rewrote from the segment stays, so the next open uses it.
    @Test func aPinnedFlagRepairMarksTheHintWrongAndKeepsItsRewrite() throws {
        let directory = TemporaryStore("hint-cleared-pin-repair")
        var pinned = ObjectID(0)
        var referrer = ObjectID(0)
        _ = try makeStore(directory) { store in
            pinned = try store.put(typeTag: 2, payload: [7, 7, 7])
            referrer = try store.put(typeTag: 3, references: [pinned], payload: [8])
        }
        try forgeHint(directory) { entries in
            entries[try position(of: pinned.rawValue, in: entries)].flags.remove(.pinned)
        }
        let store = try directory.open(options: options())
        try store.put(referrer, typeTag: 3, payload: [9])  // the last reference to `pinned` goes
        #expect(try store.get(pinned)?.payload == [7, 7, 7])
        try store.writeHints()  // rewrites the repaired segment's hint from its frames
        #expect {
            try store.collectGarbage()
        } throws: { error in
            guard let error = error as? LogStoreError else { return false }
            return error.code == .corruptHint && error.message.contains("disagrees")
                && !error.message.contains("replaced")
        }
        #expect(directory.fileNames().contains(HintFile.fileName(1)))
        try store.close()
        let reopened = try directory.open(options: options())
        #expect(reopened.segmentsLoadedFromHints >= 1)
        #expect(try reopened.get(pinned)?.payload == [7, 7, 7])
        #expect(try reopened.collectGarbage().collected == 0)
        #expect(try reopened.get(pinned)?.payload == [7, 7, 7])
        try reopened.close()
    }

    // MARK: - Roots

    /// A closed store whose sealed segment 1 holds an unpinned object reachable only from the root "main",
    /// and the root "tmp" set (after "main") and removed; returns the object's id and the live payloads.
    func makeStoreWithRoot(_ directory: TemporaryStore) throws -> (ObjectID, [ObjectID: [UInt8]]) {
        var target = ObjectID(0)
        let live = try makeStore(directory) { store in
            target = store.newID()
            try store.write { batch in
                batch.put(target, typeTag: 4, payload: [4, 4, 4], pinned: false)
                batch.setRoot("main", to: target)
            }
            try store.setRoot("tmp", to: target)
            try store.removeRoot("tmp")
        }
        return (target, live)
    }

    func position(ofRoot name: String, in entries: [HintFile.Entry]) throws -> Int {
        try #require(entries.firstIndex { $0.kind == .setRoot && $0.name == Array(name.utf8) })
    }

    /// A hint that renames the root "main" to "tmp" (whose removal comes later) would leave the object
    /// unreachable: open checks every root entry against its frame, does not use the hint, and the
    /// collector keeps the object.
    @Test func aHintThatRenamesARootIsNotUsed() throws {
        let directory = TemporaryStore("hint-renamed-root")
        let (target, live) = try makeStoreWithRoot(directory)
        try directory.forgeHint { entries in
            entries[try position(ofRoot: "main", in: entries)].name = Array("tmp".utf8)
        }
        let hint = directory.path + "/" + HintFile.fileName(1)

        let store = try directory.open(options: options())
        #expect(store.segmentsLoadedFromHints == 0)
        #expect(store.openNotes.contains { $0.contains(hint) && $0.contains("root") }, "\(store.openNotes)")
        #expect(try store.root(named: "main") == target)
        #expect(try store.collectGarbage().collected == 0)
        for (id, payload) in live { #expect(try store.get(id)?.payload == payload, "object \(id)") }
        try store.close()
    }

    /// A hint that names another object as the root's target is not used either.
    @Test func aHintThatRetargetsARootIsNotUsed() throws {
        let directory = TemporaryStore("hint-retargeted-root")
        let (target, live) = try makeStoreWithRoot(directory)
        try directory.forgeHint { entries in entries[try position(ofRoot: "main", in: entries)].id = 5 }

        let store = try directory.open(options: options())
        #expect(store.segmentsLoadedFromHints == 0)
        #expect(try store.root(named: "main") == target)
        #expect(try store.collectGarbage().collected == 0)
        for (id, payload) in live { #expect(try store.get(id)?.payload == payload, "object \(id)") }
        try store.close()
    }

    /// A hint that leaves out the root's entry leaves a gap between frames: open does not use it.
    @Test func aHintMissingARootEntryIsNotUsed() throws {
        let directory = TemporaryStore("hint-missing-root")
        let (target, live) = try makeStoreWithRoot(directory)
        try directory.forgeHint { entries in entries.remove(at: try position(ofRoot: "main", in: entries)) }
        let hint = directory.path + "/" + HintFile.fileName(1)

        let store = try directory.open(options: options())
        #expect(store.segmentsLoadedFromHints == 0)
        #expect(store.openNotes.contains { $0.contains(hint) && $0.contains("gap") }, "\(store.openNotes)")
        #expect(try store.root(named: "main") == target)
        #expect(try store.collectGarbage().collected == 0)
        for (id, payload) in live { #expect(try store.get(id)?.payload == payload, "object \(id)") }
        try store.close()
    }

    /// A hint whose entry for the root's frame says it is an id reservation keeps the layout and gives no
    /// root entry to check: open uses it, and the root is missing in that session. Mark-sweep compares every
    /// hint open used with its segment before it frees anything, and stops; the next open sees the root.
    @Test func markSweepNeverCollectsWhatAHintUnrooted() throws {
        let directory = TemporaryStore("hint-hidden-root")
        let (target, live) = try makeStoreWithRoot(directory)
        try directory.forgeHint { entries in
            let root = try position(ofRoot: "main", in: entries)
            entries[root].kind = .reserveIDs
            entries[root].name = []
        }
        let hint = directory.path + "/" + HintFile.fileName(1)

        let forged = try directory.open(options: options())
        #expect(forged.segmentsLoadedFromHints == 1)
        #expect(try forged.root(named: "main") == nil)  // in this session: open did not read the frame
        let error = try #require(throws: LogStoreError.self) { try forged.collectGarbage() }
        #expect(error.code == .corruptHint, "\(error)")
        #expect(error.file == hint)
        #expect(!FileManager.default.fileExists(atPath: hint))
        #expect(try forged.get(target)?.payload == [4, 4, 4])
        // Not again in this session: the index still lacks the root.
        #expect(throws: LogStoreError.self) { try forged.collectGarbage() }
        #expect(try forged.get(target)?.payload == [4, 4, 4])
        try forged.close()

        let reopened = try directory.open(options: options())
        #expect(try reopened.root(named: "main") == target)
        #expect(try reopened.collectGarbage().collected == 0)
        for (id, payload) in live { #expect(try reopened.get(id)?.payload == payload, "object \(id)") }
        try reopened.close()
    }
}
