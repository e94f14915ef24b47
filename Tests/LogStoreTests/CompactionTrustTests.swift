import Foundation
@_spi(Engine) import LogStoreFormat
import TestSupport
import Testing

@testable @_spi(Testing) import LogStore

/// Compaction checks every record it copies against the index, so a forged or damaged hint file
/// (valid checksum, wrong entry) never makes it drop a live object and delete its segment.
@Suite struct CompactionTrustTests {
    func options() -> StoreOptions {
        var options = testOptions(segmentSize: 1 << 16)
        options.compaction.background = false
        return options
    }

    /// A closed store whose first segment is sealed, has a hint and holds garbage (object 1 was
    /// deleted); returns the payloads of the live objects.
    func makeStore(_ directory: TemporaryStore) throws -> [ObjectID: [UInt8]] {
        let store = try directory.open(options: options())
        var live: [ObjectID: [UInt8]] = [:]
        var index: UInt64 = 0
        while directory.segmentFiles().count < 2 {
            index += 1
            let payload = payloadBytes(500, seed: index)
            live[try store.put(typeTag: 1, payload: payload)] = payload
        }
        try store.writeHints()
        try store.delete(ObjectID(1))
        live[ObjectID(1)] = nil
        try store.close()
        return live
    }

    /// Rewrites the hint of segment 1 with `change` applied to the entry of object `id` (read with the
    /// hint reader, written with the hint writer); the checksum is computed anew, so the hint is valid as
    /// a file.
    func forgeHint(
        _ directory: TemporaryStore, object id: UInt64,
        _ change: (inout HintFile.Entry, _ entries: [HintFile.Entry], _ segmentSize: UInt64) -> Void
    ) throws {
        let path = directory.path + "/" + HintFile.fileName(1)
        let bytes = try Data(contentsOf: URL(fileURLWithPath: path))
        let (number, size, entries, isCompact) = try bytes.withUnsafeBytes { raw in
            let reader = try HintReader.open(raw).get()
            return (reader.segmentNumber, reader.segmentSize, reader.entries, reader.isCompact)
        }
        let position = try #require(entries.firstIndex { $0.kind == .put && $0.id == id })
        var writer = HintWriter(
            segmentNumber: number, segmentSize: size, format: isCompact ? .v2(baseSequence: 0) : .v1)
        for (index, var entry) in entries.enumerated() {
            if index == position { change(&entry, entries, size) }
            writer.append(entry)
        }
        try Data(writer.finish()).write(to: URL(fileURLWithPath: path))
    }

    /// Objects 5 and 6 "at" each other's frames: the frames still follow each other, so open uses the
    /// hint; compaction compares it with the segment before it drops anything, and stops.
    @Test func aHintEntryPointingAtAnotherFrameStopsCompactionAndKeepsTheSegment() throws {
        let directory = TemporaryStore("compact-forged-hint")
        let live = try makeStore(directory)
        // Object 6's entry names object 5, then (the first entry naming 5 being object 5's own) object 5's
        // entry names object 6.
        try forgeHint(directory, object: 6) { entry, _, _ in entry.id = 5 }
        try forgeHint(directory, object: 5) { entry, _, _ in entry.id = 6 }
        let hint = directory.path + "/" + HintFile.fileName(1)
        let segment = directory.path + "/" + LogFormat.segmentFileName(1)

        let store = try directory.open(options: options())
        #expect(store.segmentsLoadedFromHints == 1)
        let error = try #require(throws: LogStoreError.self) { try store.compact() }
        #expect(error.code == .corruptHint, "\(error)")
        #expect(error.file == hint)
        try store.close()

        // The original segment is still there; the forged hint is gone, and every object is intact.
        #expect(FileManager.default.fileExists(atPath: segment))
        #expect(!directory.fileNames().contains { $0.hasSuffix(".compacting") })
        #expect(try Store.verify(at: directory.path).isSound)
        let reopened = try directory.open(options: options())
        for (id, payload) in live { #expect(try reopened.get(id)?.payload == payload, "object \(id)") }
        try reopened.compact()
        for (id, payload) in live { #expect(try reopened.get(id)?.payload == payload, "object \(id)") }
        try reopened.close()
    }

    /// A hint that is valid as a file but describes another frame than its segment holds is used by open
    /// (nothing tells it from a true one without reading the segment), and reported by `verify`.
    @Test func verifyReportsAHintThatDisagreesWithItsSegment() throws {
        let directory = TemporaryStore("verify-forged-hint", unverifiedBecause: "its hint file is forged")
        _ = try makeStore(directory)
        #expect(try Store.verify(at: directory.path).isSound)
        try forgeHint(directory, object: 5) { entry, _, _ in entry.typeTag += 1 }
        let report = try Store.verify(at: directory.path)
        let hint = directory.path + "/" + HintFile.fileName(1)
        #expect(
            report.problems.contains { $0.file == hint && $0.message == "hint file disagrees with its segment" },
            "\(report.problems)")
    }

    @Test func aHintEntryOutsideItsSegmentIsNotUsed() throws {
        let directory = TemporaryStore("compact-outside-hint")
        let live = try makeStore(directory)
        try forgeHint(directory, object: 5) { entry, _, size in entry.offset = UInt32(size) + 100 }

        let store = try directory.open(options: options())
        #expect(store.segmentsLoadedFromHints == 0)
        #expect(store.openNotes.contains { $0.contains("outside the segment") }, "\(store.openNotes)")
        try store.compact()
        for (id, payload) in live { #expect(try store.get(id)?.payload == payload, "object \(id)") }
        try store.close()
        #expect(try Store.verify(at: directory.path).isSound)
    }

    /// A hint that gives a deleted object's older put (segment 1) an id nobody uses makes that segment look
    /// free of dead records, and the tombstone (segment 2) look droppable. Compaction compares every hint
    /// open used with its segment before it drops anything, and stops; the object stays deleted, also when
    /// the next open scans every segment.
    @Test func aHintHidingAnOlderPutNeverLetsItsTombstoneGo() throws {
        let directory = TemporaryStore("compact-forged-tombstone")
        let store = try directory.open(options: options())
        let deleted = try store.put(typeTag: 1, payload: payloadBytes(500, seed: 0))
        var live: [ObjectID: [UInt8]] = [:]
        var index: UInt64 = 0
        func fill(until segments: Int) throws {
            while directory.segmentFiles().count < segments {
                index += 1
                let payload = payloadBytes(500, seed: index)
                live[try store.put(typeTag: 1, payload: payload)] = payload
            }
        }
        try fill(until: 2)
        try store.delete(deleted)
        try fill(until: 3)
        try store.writeHints()
        try store.close()
        try directory.forgeHint(segment: 1) { entries in
            let put = try #require(entries.firstIndex { $0.kind == .put && $0.id == deleted.rawValue })
            entries[put].id = 1_000_000
        }

        let forged = try directory.open(options: options())
        #expect(forged.segmentsLoadedFromHints == 2)
        let error = try #require(throws: LogStoreError.self) { try forged.compact() }
        #expect(error.code == .corruptHint, "\(error)")
        #expect(error.file == directory.path + "/" + HintFile.fileName(1))
        try forged.close()

        try directory.deleteHints()
        let reopened = try directory.open(options: options())
        #expect(try reopened.get(deleted) == nil)
        try reopened.compact()
        #expect(try reopened.get(deleted) == nil)
        for (id, payload) in live { #expect(try reopened.get(id)?.payload == payload, "object \(id)") }
        try reopened.close()
        try directory.deleteHints()
        let scanned = try directory.open(options: options())
        #expect(try scanned.get(deleted) == nil)
        #expect(try scanned.ids() == live.keys.sorted())
        try scanned.close()
    }
}
