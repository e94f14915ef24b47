import Foundation
@_spi(Engine) import LogStoreFormat
@_spi(Engine) import LogStoreSystem
import TestSupport
import Testing

@testable @_spi(Testing) import LogStore

/// Salvage where the load cannot read a whole segment, or the store is not what it seems: one test each.
@Suite struct SalvageEdgeTests {
    /// A store with objects in three sealed segments (with hints) and the segment being written; closed.
    static func makeStore(_ path: String) throws -> (ids: [ObjectID], store: [ObjectID: Record]) {
        let store = try Store.open(at: path, options: SalvageTests.options)
        var seed: UInt64 = 29
        var ids: [ObjectID] = []
        for _ in 0..<3 {
            ids.append(try store.put(typeTag: 5, payload: Array("object \(ids.count)".utf8)))
            try SalvageTests.sealSegment(store, seed: &seed)
        }
        ids.append(try store.put(typeTag: 5, payload: Array("in the append segment".utf8)))
        try store.writeHints()
        var records: [ObjectID: Record] = [:]
        for id in try store.ids() { records[id] = try store.get(id) }
        try store.close()
        return (ids, records)
    }

    static func segments(_ path: String) throws -> [String] {
        try FileManager.default.contentsOfDirectory(atPath: path).filter { $0.hasSuffix(".seg") }.sorted()
    }

    @Test func theSourceNamedLikeTheStagingFolderIsRefusedAndKept() throws {
        let directory = TemporaryStore("salvage-staging-name")
        let source = directory.path + "/app.salvage-partial"
        _ = try Self.makeStore(source)
        #expect { try Store.salvage(from: source, to: directory.path + "/app") } throws: {
            ($0 as? LogStoreError)?.code == .invalidArgument
        }
        #expect(try Store.verify(at: source).isSound)
        // A symbolic link in the staging folder's place, to a store, is refused and the store kept.
        let other = directory.path + "/other"
        _ = try Self.makeStore(other)
        try FileManager.default.createSymbolicLink(
            atPath: directory.path + "/copy.salvage-partial", withDestinationPath: other)
        #expect { try Store.salvage(from: source, to: directory.path + "/copy") } throws: {
            ($0 as? LogStoreError)?.code == .invalidArgument
        }
        #expect(try Store.verify(at: other).isSound)
    }

    @Test func anEmptiedSegmentIsReportedWhole() throws {
        let directory = TemporaryStore("salvage-empty-segment", unverifiedBecause: "damaged on purpose")
        let source = directory.path + "/store"
        let (ids, _) = try Self.makeStore(source)
        // The newest segment (the append segment, no hint) emptied: its data is lost, contents unknown.
        let newest = try #require(try Self.segments(source).last)
        try Data().write(to: URL(fileURLWithPath: source + "/" + newest))
        let report = try Store.salvage(from: source, to: directory.path + "/copy")
        #expect(!report.isComplete)
        #expect(
            report.damagedRanges.contains { $0.file.hasSuffix(newest) && !$0.isIdentified }, "\(report.damagedRanges)")
        #expect(try SalvageTests.contents(directory.path + "/copy").records[ids[3]] == nil)
    }

    @Test func aMissingSegmentIsReportedFromItsHintOrAsUnknown() throws {
        let directory = TemporaryStore("salvage-missing-segment", unverifiedBecause: "damaged on purpose")
        let source = directory.path + "/store"
        let (ids, _) = try Self.makeStore(source)
        let second = try Self.segments(source)[1]
        try FileManager.default.removeItem(atPath: source + "/" + second)
        // Its hint is left: the objects it held are named.
        let report = try Store.salvage(from: source, to: directory.path + "/copy")
        #expect(report.lostObjects.map(\.id).contains(ids[1]), "\(report.lostObjects)")
        #expect(report.damagedRanges.contains { $0.file.hasSuffix(second) && $0.isIdentified })
        // Without its hint the manifest still says it is missing: a range of unknown contents.
        try FileManager.default.removeItem(
            atPath: source + "/" + second.replacingOccurrences(of: ".seg", with: ".hint"))
        let unhinted = try Store.salvage(from: source, to: directory.path + "/copy-2")
        #expect(unhinted.damagedRanges.contains { $0.file.hasSuffix(second) && !$0.isIdentified })
        #expect(!unhinted.isComplete)
    }

    @Test func aDamagedManifestLeavesDoubt() throws {
        let directory = TemporaryStore("salvage-manifest", unverifiedBecause: "damaged on purpose")
        let source = directory.path + "/store"
        let (_, records) = try Self.makeStore(source)
        var manifest = [UInt8](try Data(contentsOf: URL(fileURLWithPath: source + "/SEGMENTS")))
        manifest[manifest.count / 2] ^= 0x40
        try Data(manifest).write(to: URL(fileURLWithPath: source + "/SEGMENTS"))
        let report = try Store.salvage(from: source, to: directory.path + "/copy")
        #expect(!report.doubts.isEmpty && !report.isComplete, "\(report.doubts)")
        #expect(try SalvageTests.contents(directory.path + "/copy").records == records)
    }

    @Test func objectsOnlyALostObjectReachedArePinnedAndListed() throws {
        let directory = TemporaryStore("salvage-orphans", unverifiedBecause: "damaged on purpose")
        let source = directory.path + "/store"
        let store = try Store.open(at: source, options: SalvageTests.options)
        var seed: UInt64 = 31
        let (first, second) = (store.newID(), store.newID())
        try store.write { batch in
            batch.put(Record(id: first, typeTag: 7, payload: [1], isPinned: false))
            batch.put(Record(id: second, typeTag: 7, payload: [2], isPinned: false))
        }
        try SalvageTests.sealSegment(store, seed: &seed)
        let holder = try store.put(
            typeTag: 8, references: [first, second], payload: Array("holder".utf8), pinned: false)
        try store.setRoot("main", to: holder)
        try SalvageTests.sealSegment(store, seed: &seed)
        try store.writeHints()
        try store.close()
        let frame = try SalvageTests.frame(.put, id: holder.rawValue, in: source)
        try SalvageTests.damage(frame.path, at: frame.offset)

        let report = try Store.salvage(from: source, to: directory.path + "/copy")
        #expect(report.lostObjects.map(\.id) == [holder])
        #expect(report.orphans == [first, second], "\(report.orphans)")
        let copy = try Store.open(at: directory.path + "/copy", options: SalvageTests.options)
        try copy.collectGarbage()
        #expect(try copy.get(first)?.isPinned == true && copy.get(second) != nil)
        try copy.close()
    }

    @Test func aTornTailIsANoteNotALoss() throws {
        let directory = TemporaryStore("salvage-torn", unverifiedBecause: "a torn tail on purpose")
        let source = directory.path + "/store"
        let store = try Store.open(at: source, options: SalvageTests.options)
        let id = try store.put(typeTag: 1, payload: [1, 2, 3])
        try store.close()
        try forgetCleanClose(source)  // as a crash would leave it
        let newest = try #require(try Self.segments(source).last)
        let handle = try FileHandle(forWritingTo: URL(fileURLWithPath: source + "/" + newest))
        try handle.seekToEnd()
        try handle.write(contentsOf: Data([1, 2, 0, 0, 9, 9, 9]))  // a frame header cut short
        try handle.close()
        let report = try Store.salvage(from: source, to: directory.path + "/copy")
        #expect(report.isComplete, "\(report.damagedRanges) \(report.problems)")
        #expect(report.notes.contains { $0.contains("never committed") }, "\(report.notes)")
        #expect(try SalvageTests.contents(directory.path + "/copy").records.keys.sorted() == [id])
    }

    @Test func aStoreOpenForWritingIsRefused() throws {
        let directory = TemporaryStore("salvage-open")
        let source = directory.path + "/store"
        let store = try Store.open(at: source, options: SalvageTests.options)
        try store.put(typeTag: 1, payload: [1])
        #expect { try Store.salvage(from: source, to: directory.path + "/copy") } throws: {
            ($0 as? LogStoreError)?.code == .locked
        }
        try store.close()
        #expect(try Store.salvage(from: source, to: directory.path + "/copy").isComplete)
    }
}
