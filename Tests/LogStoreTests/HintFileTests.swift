import Foundation
import LogStoreExamples
import TestSupport
import Testing

@testable @_spi(Testing) import LogStore
@testable import LogStoreFormat

@Suite struct HintFileTests {
    struct Contents: Equatable {
        var records: [Record]
        var roots: [String: ObjectID]
        var counts: [UInt32: Int]
        var liveBytes: UInt64
        /// Reopening may skip the rest of an id reservation (at most 64 ids), never go back.
        var nextID: ObjectID

        static func == (lhs: Contents, rhs: Contents) -> Bool {
            lhs.records == rhs.records && lhs.roots == rhs.roots && lhs.counts == rhs.counts
                && lhs.liveBytes == rhs.liveBytes && lhs.nextID >= rhs.nextID
                && lhs.nextID.rawValue <= rhs.nextID.rawValue + LogFormat.idReservationBlock
        }
    }

    func contents(_ store: Store) throws -> Contents {
        let stats = try store.statistics()
        return Contents(
            records: try store.ids().compactMap { try store.get($0) }, roots: try store.roots(),
            counts: try store.countsByType(), liveBytes: stats.liveBytes, nextID: stats.nextID)
    }

    func options() -> StoreOptions {
        var options = testOptions(segmentSize: 1 << 16)
        options.compaction.background = false
        return options
    }

    /// A closed store of several sealed segments with overwrites, deletes, roots, unpinned objects and
    /// compaction outputs, all with hints.
    func makeStore(_ directory: TemporaryStore) throws -> Contents {
        let store = try directory.open(options: options())
        var random = SplitMix64(seed: 11)
        var ids: [ObjectID] = []
        for index in 0..<600 {
            let references = ids.isEmpty ? [] : [ids[Int(random.next() % UInt64(ids.count))]]
            let id = try store.put(
                typeTag: UInt32(index % 3), references: references, payload: payloadBytes(300, seed: random.next()))
            ids.append(id)
            if index % 7 == 0 { try store.put(id, typeTag: 5, references: references, payload: [1, 2, 3]) }
            if index % 50 == 0 { try store.setRoot("root-\(index % 3)", to: id) }
        }
        let child = store.newID()
        try store.write { batch in
            batch.put(child, typeTag: 9, payload: [9], pinned: false)
            batch.put(ids[0], typeTag: 9, references: [child], payload: [8])
        }
        try store.compact()
        try store.writeHints()
        #expect(directory.fileNames().filter { $0.hasSuffix(".hint") }.count >= 3)
        let result = try contents(store)
        try store.close()
        return result
    }

    @Test func openWithHintsEqualsOpenByScan() throws {
        let directory = TemporaryStore("hints")
        let expected = try makeStore(directory)
        var store = try directory.open(options: options())
        #expect(store.segmentsLoadedFromHints >= 3)
        #expect(try contents(store) == expected)
        #expect(store.auditReferenceCounts().isEmpty)
        try store.close()
        for name in directory.fileNames() where name.hasSuffix(".hint") {
            try FileManager.default.removeItem(atPath: directory.path + "/" + name)
        }
        store = try directory.open(options: options())
        #expect(store.segmentsLoadedFromHints == 0)
        #expect(try contents(store) == expected)
        try store.close()
        #expect(try Store.verify(at: directory.path).isSound)
    }

    @Test func aDamagedOrStaleHintFallsBackToScanning() throws {
        let directory = TemporaryStore("hints-bad")
        let expected = try makeStore(directory)
        let hints = directory.fileNames().filter { $0.hasSuffix(".hint") }.map { directory.path + "/" + $0 }
        // Flip a byte in one hint, cut another short, and give a third the bytes of another segment's.
        let originals = try hints.prefix(3).map { try Data(contentsOf: URL(fileURLWithPath: $0)) }
        var first = originals[0]
        first[first.count / 2] ^= 0xFF
        try first.write(to: URL(fileURLWithPath: hints[0]))
        try originals[1].prefix(originals[1].count - 5).write(to: URL(fileURLWithPath: hints[1]))
        try originals[1].write(to: URL(fileURLWithPath: hints[2]))  // the hint of another segment

        let report = try Store.verify(at: directory.path)
        #expect(report.problems.filter { $0.file.hasSuffix(".hint") }.count >= 3, "\(report.problems)")

        let store = try directory.open(options: options())
        #expect(store.openNotes.count >= 3, "\(store.openNotes)")
        #expect(try contents(store) == expected)
        // Hints it could not use are written again.
        try store.writeHints()
        try store.close()
        #expect(try Store.verify(at: directory.path).isSound)
        let again = try directory.open(options: options())
        #expect(again.openNotes.isEmpty)
        #expect(try contents(again) == expected)
        try again.close()
    }

    /// The hint compaction writes straight from a scan is byte for byte the hint `build` describes, for
    /// every sealed segment, including a root name stored compressed.
    @Test func streamedHintsEqualBuiltHints() throws {
        let directory = TemporaryStore("hints-streamed")
        _ = try makeStore(directory)
        var options = options()
        options.compressionMinimumSize = 0
        let store = try directory.open(options: options)
        try store.setRoot(String(repeating: "a long root name ", count: 40), to: try #require(store.ids().first))
        // Enough records after it to seal its segment (64 KiB segments).
        for index in 0..<400 { try store.put(typeTag: 1, payload: payloadBytes(300, seed: UInt64(index))) }
        try store.compact()
        try store.close()
        var compared = 0
        for name in directory.fileNames() where name.hasSuffix(LogFormat.segmentExtension) {
            let bytes = try [UInt8](Data(contentsOf: URL(fileURLWithPath: directory.path + "/" + name)))
            let number = try #require(UInt32(name.dropLast(LogFormat.segmentExtension.count + 1)))
            let (streamed, built) = bytes.withUnsafeBytes {
                (HintFile.encodedHint(segment: number, bytes: $0), HintFile.build(segment: number, bytes: $0))
            }
            #expect(streamed == built?.encoded(), "segment \(name)")
            if let built {
                compared += 1
                if built.entries.contains(where: { $0.name.count > 600 }) { compared += 1000 }
            }
        }
        #expect(compared > 1000 + 3, "sealed segments compared, one with the long root name: \(compared)")
    }

    @Test func hintFilesRoundTrip() throws {
        let hint = HintFile(
            segmentNumber: 7, segmentSize: 4096,
            entries: [
                .init(
                    kind: .put, flags: [.pinned, .commit], sequence: 3, id: 9, typeTag: 2, offset: 48, length: 60,
                    references: [ObjectID(1), ObjectID(2)], name: []),
                .init(
                    kind: .setRoot, flags: .commit, sequence: 4, id: 9, typeTag: 0, offset: 108, length: 48,
                    references: [], name: Array("main".utf8)),
            ])
        let bytes = hint.encoded()
        #expect(bytes.withUnsafeBytes { HintFile.decode($0) } == .success(hint))
        for cut in 0..<bytes.count {
            let result = Array(bytes.prefix(cut)).withUnsafeBytes { HintFile.decode($0) }
            if case .success = result { Issue.record("a hint cut to \(cut) bytes decoded") }
        }
    }
}
