import Foundation
@_spi(Engine) import LogStoreFormat
import TestSupport
import Testing

@testable @_spi(Testing) import LogStore

/// A store written by the format-version-1 engine (the committed fixture) opens and works unchanged: it
/// reads as it was written, new data goes to version-2 segments, compaction rewrites what it copies in
/// version 2, and `compact --rewrite-all` converts the whole store.
@Suite struct FormatMigrationTests {
    /// The header versions of the store's segment files, by file name.
    func versions(_ directory: TemporaryStore) throws -> [String: UInt16] {
        var versions: [String: UInt16] = [:]
        for path in directory.segmentFiles() {
            let bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: path)).prefix(LogFormat.segmentHeaderSize))
            let header = try bytes.withUnsafeBytes { try SegmentHeader.decode($0).get() }
            versions[URL(fileURLWithPath: path).lastPathComponent] = header.formatVersion
        }
        return versions
    }

    /// Every live record and root, read through the engine.
    func contents(_ store: Store) throws -> (records: [ObjectID: Record], roots: [String: ObjectID]) {
        var records: [ObjectID: Record] = [:]
        for id in try store.ids() { records[id] = try store.get(id) }
        return (records, try store.roots())
    }

    func export(_ directory: TemporaryStore) throws -> String {
        let result = try ToolRunner.run(["export", directory.path])
        #expect(result.status == 0, "\(result.stderr)")
        return result.stdout
    }

    @Test func aVersionOneStoreReadsAsItWasWritten() throws {
        let directory = TemporaryStore("v1-read")
        try VersionOneFixture.copy(into: directory)
        #expect(Set(try versions(directory).values) == [1])
        let expected = try String(contentsOfFile: VersionOneFixture.export, encoding: .utf8)
        #expect(try export(directory) == expected)
        let report = try Store.verify(at: directory.path)
        #expect(report.isSound, "\(report.problems)")
        #expect(report.liveObjects == expected.split(separator: "\n").filter { $0.contains("\"payload\"") }.count)
    }

    @Test func writingToAVersionOneStoreStartsAVersionTwoSegment() throws {
        let directory = TemporaryStore("v1-write")
        try VersionOneFixture.copy(into: directory)
        let before = try versions(directory)
        var options = StoreOptions(segmentSize: 1 << 16)
        options.compaction.background = false
        let store = try directory.open(options: options)
        var (records, roots) = try contents(store)
        let old = try #require(records.keys.sorted().first)
        let added = try store.put(typeTag: 5, references: [old], payload: Array("new".utf8))
        records[added] = try store.get(added)
        let replaced = try #require(records.keys.sorted().last { $0 != added })
        try store.put(replaced, typeTag: 6, payload: [1, 2, 3])
        records[replaced] = try store.get(replaced)
        try store.setRoot("v2", to: added)
        roots["v2"] = added
        try store.close()

        let after = try versions(directory)
        // The version-1 segments are there as they were (the append one sealed); the new one is version 2.
        for (name, version) in before { #expect(after[name] == version, "\(name)") }
        let new = after.filter { before[$0.key] == nil }
        #expect(!new.isEmpty && new.values.allSatisfy { $0 == 2 }, "\(after)")

        let reopened = try directory.open(options: options)
        let read = try contents(reopened)
        #expect(read.records == records)
        #expect(read.roots == roots)
        try reopened.close()
        #expect(try Store.verify(at: directory.path).isSound)
    }

    @Test func compactionRewritesWhatItCopiesInVersionTwo() throws {
        let directory = TemporaryStore("v1-compact")
        try VersionOneFixture.copy(into: directory)
        var options = StoreOptions(segmentSize: 1 << 16)
        options.compaction.background = false
        let store = try directory.open(options: options)
        let expected = try contents(store)
        let report = try store.compact()
        #expect(report.segmentsCompacted > 0)
        #expect(try contents(store).records == expected.records)
        try store.close()
        let outputs = try versions(directory).filter { name, _ in
            !FileManager.default.fileExists(atPath: VersionOneFixture.directory + "/" + name)
        }
        #expect(!outputs.isEmpty && outputs.values.allSatisfy { $0 == 2 }, "\(outputs)")
        #expect(try Store.verify(at: directory.path).isSound)
    }

    @Test func rewriteAllConvertsTheWholeStore() throws {
        let directory = TemporaryStore("v1-rewrite-all")
        try VersionOneFixture.copy(into: directory)
        let expected = try String(contentsOfFile: VersionOneFixture.export, encoding: .utf8)
        let result = try ToolRunner.run(["compact", "--rewrite-all", "--segment-size", "65536", directory.path])
        #expect(result.status == 0, "\(result.output)")
        let versions = try versions(directory)
        #expect(!versions.isEmpty && Set(versions.values) == [2], "\(versions)")
        // Every sealed segment has a hint, of version 2.
        for name in versions.keys.sorted().dropLast() {
            let hint = directory.path + "/" + name.replacingOccurrences(of: ".seg", with: ".hint")
            let bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: hint)))
            #expect(try bytes.withUnsafeBytes { try HintReader.open($0).get().isCompact }, "\(hint)")
        }
        #expect(try export(directory) == expected)
        #expect(try Store.verify(at: directory.path).isSound)
        // Smaller than it was.
        func bytes(_ path: String) throws -> Int {
            try FileManager.default.contentsOfDirectory(atPath: path).reduce(0) { total, name in
                total + ((try FileManager.default.attributesOfItem(atPath: path + "/" + name)[.size] as? Int) ?? 0)
            }
        }
        #expect(try bytes(directory.path) < bytes(VersionOneFixture.directory))
    }

    @Test func aReadOnlyOpenOfAVersionOneStoreChangesNothing() throws {
        let directory = TemporaryStore("v1-read-only")
        try VersionOneFixture.copy(into: directory)
        var options = StoreOptions()
        options.readOnly = true
        let store = try directory.open(options: options)
        #expect(try store.count() > 1000)
        try store.close()
        for name in try FileManager.default.contentsOfDirectory(atPath: VersionOneFixture.directory) {
            let original = try Data(contentsOf: URL(fileURLWithPath: VersionOneFixture.directory + "/" + name))
            let copy = try Data(contentsOf: URL(fileURLWithPath: directory.path + "/" + name))
            #expect(original == copy, "\(name)")
        }
    }
}

extension FormatMigrationTests {
    /// A writer that continues a version-2 segment after a reopen writes against that segment's base
    /// sequence number (from its header), not the one it would give a new segment.
    @Test func aContinuedSegmentKeepsItsBaseSequence() throws {
        let directory = TemporaryStore("v2-continue")
        var written: [ObjectID: UInt64] = [:]
        for round in 0..<3 {
            let store = try directory.open(options: testOptions())
            for index in 0..<5 {
                let id = try store.put(typeTag: 1, payload: [UInt8(round), UInt8(index)])
                written[id] = try store.snapshot().version(of: id)
            }
            try store.close()
        }
        let segments = directory.segmentFiles()
        #expect(segments.count == 1)
        let bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: try #require(segments.first))))
        let header = try bytes.withUnsafeBytes { try SegmentHeader.decode($0).get() }
        #expect(header.formatVersion == 2 && header.baseSequence == 1)
        var sequences: [UInt64: UInt64] = [:]
        let outcome = bytes.withUnsafeBytes { raw in
            SegmentScanner(bytes: raw).scan { frame in
                if frame.kind == .put { sequences[frame.id] = frame.sequence }
            }
        }
        #expect(outcome.damages.isEmpty)
        #expect(sequences == Dictionary(uniqueKeysWithValues: written.map { ($0.key.rawValue, $0.value) }))
        #expect(Set(sequences.values).count == 15)
    }
}
