import Foundation
@_spi(Engine) import LogStoreFormat
@_spi(Engine) import LogStoreSystem
import TestSupport
import Testing

@testable @_spi(Testing) import LogStore

/// `Store.salvage`: one test per kind of loss (an object lost and referred to, an older version copied, a
/// lost deletion, a lost root change), a sound store copied whole, refusals, an interrupted salvage, and the
/// tool's command.
@Suite struct SalvageTests {
    static var options: StoreOptions {
        var options = testOptions(segmentSize: LogStoreLimits.minSegmentSize)
        options.compaction.background = false
        return options
    }

    /// Writes incompressible pinned records (type 99) until the segment being written is sealed, so that what
    /// was written before is in a sealed segment (which gets a hint file).
    static func sealSegment(_ store: Store, seed: inout UInt64) throws {
        let before = store.state.withLock { $0.segments.numbers.count }
        while store.state.withLock({ $0.segments.numbers.count }) == before {
            let payload = (0..<2_000).map { _ -> UInt8 in
                seed = seed &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
                return UInt8(truncatingIfNeeded: seed >> 33)
            }
            try store.put(typeTag: 99, payload: payload)
        }
    }

    /// The offset and file of the committed frame of `kind` for `id` (a root name for root frames) with the
    /// highest sequence number.
    static func frame(_ kind: FrameKind, id: UInt64, in directory: String) throws -> (path: String, offset: Int) {
        var found: (path: String, offset: Int, sequence: UInt64)?
        for name in try FileManager.default.contentsOfDirectory(atPath: directory) where name.hasSuffix(".seg") {
            let path = directory + "/" + name
            let bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: path)))
            bytes.withUnsafeBytes { raw in
                _ = SegmentScanner(bytes: raw).scan { frame in
                    if frame.kind == kind, frame.id == id, frame.sequence >= found?.sequence ?? 0 {
                        found = (path, frame.offset, frame.sequence)
                    }
                }
            }
        }
        let frame = try #require(found, "no \(kind) frame of \(id)")
        return (frame.path, frame.offset)
    }

    /// Flips a bit in the byte `distance` bytes into the frame at `offset` of `path`.
    static func damage(_ path: String, at offset: Int, distance: Int = 3) throws {
        var bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: path)))
        bytes[offset + distance] ^= 0x10
        try Data(bytes).write(to: URL(fileURLWithPath: path))
    }

    /// Every record and root of the store at `path`.
    static func contents(_ path: String) throws -> (records: [ObjectID: Record], roots: [String: ObjectID]) {
        let store = try Store.open(at: path, options: StoreOptions(createIfMissing: false, readOnly: true))
        defer { try? store.close() }
        var records: [ObjectID: Record] = [:]
        for id in try store.ids() { records[id] = try store.get(id) }
        return (records, try store.roots())
    }

    @Test func aSoundStoreIsCopiedWhole() throws {
        let directory = TemporaryStore("salvage-sound")
        let source = directory.path + "/store"
        let store = try Store.open(at: source, options: Self.options)
        var seed: UInt64 = 7
        // A chain, a cycle of unpinned objects held by a root, a deleted object, overwrites, roots.
        let leaf = try store.put(typeTag: 1, payload: Array("leaf".utf8))
        let middle = try store.put(typeTag: 1, references: [leaf], payload: Array("middle".utf8))
        let (first, second) = (store.newID(), store.newID())
        try store.write { batch in
            batch.put(Record(id: first, typeTag: 2, references: [second], payload: [1], isPinned: false))
            batch.put(Record(id: second, typeTag: 2, references: [first], payload: [2], isPinned: false))
            batch.setRoot("cycle", to: first)
        }
        try Self.sealSegment(store, seed: &seed)
        let gone = try store.put(typeTag: 3, payload: [9])
        try store.put(middle, typeTag: 1, references: [leaf], payload: Array("middle, second version".utf8))
        try store.delete(gone)
        try store.setRoot("middle", to: middle)
        try store.writeHints()
        let highest = store.newID()
        try store.close()
        let original = try Self.contents(source)

        let report = try Store.salvage(from: source, to: directory.path + "/copy")
        #expect(report.isComplete, "\(report)")
        #expect(report.salvagedObjects == original.records.count && report.salvagedRoots == 2)
        let copied = try Self.contents(directory.path + "/copy")
        #expect(copied.records == original.records)
        #expect(copied.roots == original.roots)
        // Ids the source handed out are never handed out again by the copy.
        let copy = try Store.open(at: directory.path + "/copy", options: Self.options)
        #expect(copy.newID() > highest)
        try copy.close()
    }

    @Test func aLostObjectThatIsReferredToGetsAPlaceholder() throws {
        let directory = TemporaryStore("salvage-lost", unverifiedBecause: "the source is damaged on purpose")
        let source = directory.path + "/store"
        let store = try Store.open(at: source, options: Self.options)
        var seed: UInt64 = 11
        try Self.sealSegment(store, seed: &seed)
        let target = try store.put(typeTag: 5, payload: Array("the target".utf8))
        try Self.sealSegment(store, seed: &seed)
        let referrer = try store.put(typeTag: 6, references: [target], payload: Array("the referrer".utf8))
        try store.setRoot("entry", to: referrer)
        try Self.sealSegment(store, seed: &seed)
        try store.writeHints()
        try store.close()
        let frame = try Self.frame(.put, id: target.rawValue, in: source)
        try Self.damage(frame.path, at: frame.offset)

        let report = try Store.salvage(from: source, to: directory.path + "/copy")
        #expect(!report.isComplete)
        #expect(
            report.lostObjects == [
                .init(id: target, typeTag: 5, loss: .lost, file: frame.path, offset: UInt64(frame.offset))
            ], "\(report.lostObjects)")
        #expect(report.danglingReferences == [.init(referrer: referrer, root: nil, target: target)])
        #expect(report.placeholders == [target])
        #expect(report.damagedRanges.count == 1 && report.damagedRanges[0].isIdentified, "\(report.damagedRanges)")
        let copied = try Self.contents(directory.path + "/copy")
        let placeholder = try #require(copied.records[target])
        #expect(placeholder.typeTag == SalvageReport.placeholderTypeTag && !placeholder.isPinned)
        #expect(String(decoding: placeholder.payload, as: UTF8.self).contains("lost"))
        #expect(copied.records[referrer]?.references == [target])
        #expect(copied.roots == ["entry": referrer])
        #expect(try Store.verify(at: directory.path + "/copy").isSound)
    }

    @Test func anOlderVersionCopiedIsReported() throws {
        let directory = TemporaryStore("salvage-older", unverifiedBecause: "the source is damaged on purpose")
        let source = directory.path + "/store"
        let store = try Store.open(at: source, options: Self.options)
        var seed: UInt64 = 13
        let id = try store.put(typeTag: 7, payload: Array("version 1".utf8))
        let firstVersion = try #require(try store.snapshot().versionedGet(id)).version
        try Self.sealSegment(store, seed: &seed)
        try store.put(id, typeTag: 7, payload: Array("version 2".utf8))
        try Self.sealSegment(store, seed: &seed)
        try store.writeHints()
        try store.close()
        let frame = try Self.frame(.put, id: id.rawValue, in: source)
        try Self.damage(frame.path, at: frame.offset)

        let report = try Store.salvage(from: source, to: directory.path + "/copy")
        #expect(
            report.lostObjects.map(\.loss) == [.olderVersionCopied(sequence: firstVersion)], "\(report.lostObjects)")
        #expect(try Self.contents(directory.path + "/copy").records[id]?.payload == Array("version 1".utf8))
    }

    @Test func aLostDeletionIsReported() throws {
        let directory = TemporaryStore("salvage-deletion", unverifiedBecause: "the source is damaged on purpose")
        let source = directory.path + "/store"
        let store = try Store.open(at: source, options: Self.options)
        var seed: UInt64 = 17
        let id = try store.put(typeTag: 8, payload: Array("deleted later".utf8))
        try Self.sealSegment(store, seed: &seed)
        try store.delete(id)
        try Self.sealSegment(store, seed: &seed)
        try store.writeHints()
        try store.close()
        let frame = try Self.frame(.delete, id: id.rawValue, in: source)
        try Self.damage(frame.path, at: frame.offset)

        let report = try Store.salvage(from: source, to: directory.path + "/copy")
        #expect(report.lostObjects.map(\.id) == [id] && report.lostObjects.first?.loss == .deletionLost)
        #expect(try Self.contents(directory.path + "/copy").records[id]?.payload == Array("deleted later".utf8))
    }

    @Test func aLostRootChangeIsReported() throws {
        let directory = TemporaryStore("salvage-root", unverifiedBecause: "the source is damaged on purpose")
        let source = directory.path + "/store"
        let store = try Store.open(at: source, options: Self.options)
        var seed: UInt64 = 19
        let (old, new) = (try store.put(typeTag: 1, payload: [1]), try store.put(typeTag: 1, payload: [2]))
        try store.setRoot("main", to: old)
        try Self.sealSegment(store, seed: &seed)
        try store.setRoot("main", to: new)
        try Self.sealSegment(store, seed: &seed)
        try store.writeHints()
        try store.close()
        // Root frames carry the target as their id.
        let frame = try Self.frame(.setRoot, id: new.rawValue, in: source)
        try Self.damage(frame.path, at: frame.offset)

        let report = try Store.salvage(from: source, to: directory.path + "/copy")
        #expect(
            report.lostRootChanges.map { [$0.name, "\($0.lostTarget.map { "\($0)" } ?? "-")", "\($0.copiedTarget!)"] }
                == [["main", "\(new)", "\(old)"]], "\(report.lostRootChanges)")
        #expect(try Self.contents(directory.path + "/copy").roots == ["main": old])
    }

    @Test func refusalsWriteNothing() throws {
        let directory = TemporaryStore("salvage-refusals")
        let source = directory.path + "/store"
        try Store.open(at: source, options: Self.options).close()
        let occupied = directory.path + "/occupied"
        try FileManager.default.createDirectory(atPath: occupied, withIntermediateDirectories: true)
        try Data("mine".utf8).write(to: URL(fileURLWithPath: occupied + "/notes.txt"))
        for (destination, code) in [
            (occupied, LogStoreError.Code.invalidArgument), (source + "/inside", .invalidArgument),
            (source, .invalidArgument),
        ] {
            #expect(throws: LogStoreError.self) { try Store.salvage(from: source, to: destination) }
            do {
                try Store.salvage(from: source, to: destination)
            } catch {
                #expect(error.code == code, "\(destination): \(error)")
            }
        }
        #expect(try FileManager.default.contentsOfDirectory(atPath: occupied) == ["notes.txt"])
        #expect(!FileManager.default.fileExists(atPath: source + "/inside"))
        let notAStore = directory.path + "/plain"
        try FileManager.default.createDirectory(atPath: notAStore, withIntermediateDirectories: true)
        try Data("x".utf8).write(to: URL(fileURLWithPath: notAStore + "/file.txt"))
        do {
            try Store.salvage(from: notAStore, to: directory.path + "/out")
            Issue.record("a folder that is not a store was salvaged")
        } catch {
            #expect(error.code == .notAStore, "\(error)")
        }
        #expect(!FileManager.default.fileExists(atPath: directory.path + "/out"))
    }

    @Test func anInterruptedSalvageIsReplacedByTheNext() throws {
        let directory = TemporaryStore("salvage-interrupted")
        let source = directory.path + "/store"
        let store = try Store.open(at: source, options: Self.options)
        let id = try store.put(typeTag: 1, payload: [1, 2, 3])
        try store.close()
        // What a salvage cut short leaves: a partial store beside the destination.
        let partial = try Store.open(at: directory.path + "/copy.salvage-partial", options: Self.options)
        try partial.put(typeTag: 4, payload: [4])
        try partial.close()
        let report = try Store.salvage(from: source, to: directory.path + "/copy")
        #expect(report.isComplete)
        #expect(try Self.contents(directory.path + "/copy").records.keys.sorted() == [id])
        #expect(!FileManager.default.fileExists(atPath: directory.path + "/copy.salvage-partial"))
    }

    @Test func theToolSalvagesAndSaysWhatWasLost() throws {
        let directory = TemporaryStore("salvage-tool", unverifiedBecause: "the source is damaged on purpose")
        let source = directory.path + "/store"
        let store = try Store.open(at: source, options: Self.options)
        var seed: UInt64 = 23
        try Self.sealSegment(store, seed: &seed)
        let lost = try store.put(typeTag: 5, payload: Array("lost".utf8))
        try Self.sealSegment(store, seed: &seed)
        try store.writeHints()
        try store.close()
        let frame = try Self.frame(.put, id: lost.rawValue, in: source)
        try Self.damage(frame.path, at: frame.offset)

        let text = try ToolRunner.run(["salvage", source, directory.path + "/copy"])
        #expect(text.status == 2, "\(text.output)")
        #expect(
            text.stdout.contains("lost object \(lost) (type 5): lost, at \(frame.path) @ \(frame.offset)"),
            "\(text.stdout)")
        #expect(text.stdout.contains("INCOMPLETE"), "\(text.stdout)")
        let json = try ToolRunner.run(["salvage", source, directory.path + "/copy-json", "--json"])
        #expect(json.status == 2, "\(json.output)")
        let summary = try #require(try JSONSerialization.jsonObject(with: Data(json.stdout.utf8)) as? [String: Any])
        #expect(summary["complete"] as? Bool == false)
        let objects = try #require(summary["lostObjects"] as? [[String: Any]])
        #expect(objects.map { $0["id"] as? Int } == [Int(lost.rawValue)], "\(json.stdout)")
        // A sound store: exit code 0.
        let sound = directory.path + "/sound"
        try Store.open(at: sound, options: Self.options).close()
        let complete = try ToolRunner.run(["salvage", sound, directory.path + "/sound-copy"])
        #expect(complete.status == 0 && complete.stdout.contains("complete: nothing was lost"), "\(complete.output)")
    }
}
