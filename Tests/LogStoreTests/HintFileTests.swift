import Foundation
import LogStoreExamples
import TestSupport
import Testing

@testable @_spi(Testing) import LogStore
@_spi(Engine) @testable import LogStoreFormat

@Suite struct HintFileTests {
    /// The reader's inlinable copies of the layout constants and of the kind decoding agree with the
    /// format's own.
    @Test func inlinableCopiesAgreeWithTheFormat() {
        #expect(HintReader.headerSize == HintFile.headerSize)
        #expect(HintReader.EntryView.fixedSize == HintFile.entrySize)
        for byte in UInt8.min...UInt8.max { #expect(FrameKind(byte: byte) == FrameKind(rawValue: byte)) }
    }

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

    /// Sealed segments the compactor has not hinted yet get their hints at close, so the next open scans
    /// only the newest segment.
    @Test func closeWritesTheMissingHints() throws {
        let directory = TemporaryStore("hints-close")
        let store = try directory.open(options: options())
        for index in 0..<600 { try store.put(typeTag: 1, payload: payloadBytes(300, seed: UInt64(index))) }
        let segments = try store.statistics().segments.count
        #expect(segments >= 3)
        #expect(directory.fileNames().filter { $0.hasSuffix(".hint") }.isEmpty)
        let expected = try contents(store)
        try store.close()
        #expect(directory.fileNames().filter { $0.hasSuffix(".hint") }.count == segments - 1)
        let reopened = try directory.open(options: options())
        #expect(reopened.segmentsLoadedFromHints == segments - 1)
        #expect(try contents(reopened) == expected)
        try reopened.close()
    }

    /// A read-only store never writes hints, not even at close; the writer's close does.
    @Test func aReadOnlyCloseWritesNoHints() throws {
        let directory = TemporaryStore("hints-read-only")
        let writer = try directory.open(options: options())
        for index in 0..<600 { try writer.put(typeTag: 1, payload: payloadBytes(300, seed: UInt64(index))) }
        var readOnly = options()
        readOnly.readOnly = true
        let reader = try Store.open(at: directory.path, options: readOnly)
        #expect(try reader.count() == 600)
        try reader.close()
        #expect(directory.fileNames().filter { $0.hasSuffix(".hint") }.isEmpty)
        try writer.close()
        #expect(!directory.fileNames().filter { $0.hasSuffix(".hint") }.isEmpty)
    }

    /// The open's reference recount reads only the segments that hold references; it must still count
    /// every one: references only in hinted segments, only in the scanned newest segment, and in both.
    @Test(arguments: ["hinted", "scanned", "both"])
    func theRecountFindsReferencesWhereverTheyAre(placement: String) throws {
        let directory = TemporaryStore("hints-recount-\(placement)")
        var store = try directory.open(options: options())
        let targets = try (0..<20).map { try store.put(typeTag: 1, payload: [UInt8($0)]) }
        func fillSegments(withReferences: Bool) throws {
            for index in 0..<250 {
                let references = withReferences ? [targets[index % targets.count]] : []
                try store.put(typeTag: 2, references: references, payload: payloadBytes(300, seed: UInt64(index)))
            }
        }
        try fillSegments(withReferences: placement != "scanned")
        try fillSegments(withReferences: false)
        try store.close()  // every sealed segment now has its hint
        store = try directory.open(options: options())
        if placement != "hinted" {
            // Objects with references in the newest segment, which has no hint.
            for target in targets.prefix(5) { try store.put(typeTag: 3, references: [target], payload: [7]) }
            try store.close()
            store = try directory.open(options: options())
        }
        #expect(store.segmentsLoadedFromHints >= 2)
        #expect(store.auditReferenceCounts().isEmpty, "\(store.auditReferenceCounts())")
        #expect(throws: LogStoreError.self) { try store.delete(targets[0]) }
        try store.close()
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

    /// The hint the writer makes from a scan of a version-1 segment is byte for byte the hint the old
    /// encoder made (kept below as ``LegacyHint``, the layout of Format.md section 8), and the hint the
    /// version-1 engine wrote, for every sealed segment of the version-1 fixture, including a root name
    /// stored compressed.
    @Test func writtenHintsEqualTheOldLayout() throws {
        let directory = TemporaryStore("hints-streamed")
        try VersionOneFixture.copy(into: directory)
        var compared = 0
        for name in directory.fileNames() where name.hasSuffix(LogFormat.segmentExtension) {
            let bytes = try [UInt8](Data(contentsOf: URL(fileURLWithPath: directory.path + "/" + name)))
            let number = try #require(UInt32(name.dropLast(LogFormat.segmentExtension.count + 1)))
            let (written, legacy) = bytes.withUnsafeBytes {
                (HintWriter.hint(segment: number, bytes: $0), LegacyHint.build(segment: number, bytes: $0))
            }
            #expect(written == legacy?.encoded(), "segment \(name)")
            guard let legacy, let written else { continue }
            compared += 1
            if legacy.entries.contains(where: { $0.name.count >= 600 }) { compared += 1000 }
            // The reader gives back what the old layout holds.
            let read = written.withUnsafeBytes { raw in (try? HintReader.open(raw).get())?.entries }
            #expect(read == legacy.entries, "segment \(name)")
            // And the file on disk, when there is one, is that same hint.
            let hintPath = directory.path + "/" + HintFile.fileName(number)
            if FileManager.default.fileExists(atPath: hintPath) {
                #expect(try [UInt8](Data(contentsOf: URL(fileURLWithPath: hintPath))) == written, "\(hintPath)")
            }
        }
        #expect(compared > 1000 + 4, "sealed segments compared, one with the long root name: \(compared)")
    }

    /// The bytes of a small hint, as Format.md section 8 lays them out (written by the old encoder).
    @Test func aSmallHintHasItsDocumentedBytes() throws {
        let entries = Self.sampleEntries
        var writer = HintWriter(segmentNumber: 7, segmentSize: 4096)
        for entry in entries { writer.append(entry) }
        let bytes = writer.finish()
        #expect(bytes == LegacyHint(segmentNumber: 7, segmentSize: 4096, entries: entries).encoded())
        #expect(bytes == Self.sampleGolden, "\(bytes.map { String(format: "%02x", $0) }.joined(separator: " "))")
    }

    static let sampleEntries: [HintFile.Entry] = [
        .init(
            kind: .put, flags: [.pinned, .commit], sequence: 3, id: 9, typeTag: 2, offset: 48, length: 60,
            references: [ObjectID(1), ObjectID(2)], name: []),
        .init(
            kind: .setRoot, flags: .commit, sequence: 4, id: 9, typeTag: 0, offset: 108, length: 48,
            references: [], name: Array("main".utf8)),
    ]

    /// Header (magic, version 1, header size 48, segment 7 of 4,096 bytes, 2 entries), a `put` entry with
    /// two references, a `setRoot` entry named "main", and the checksum.
    static let sampleGolden: [UInt8] = hexBytes(
        """
            4c 4f 47 53 54 48 4e 54 01 00 30 00 00 00 00 00
            07 00 00 00 00 00 00 00 00 10 00 00 00 00 00 00
            02 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00
            01 06 00 00 02 00 00 00 03 00 00 00 00 00 00 00
            09 00 00 00 00 00 00 00 02 00 00 00 30 00 00 00
            3c 00 00 00 00 00 00 00 01 00 00 00 00 00 00 00
            02 00 00 00 00 00 00 00 03 02 00 00 00 00 00 00
            04 00 00 00 00 00 00 00 09 00 00 00 00 00 00 00
            00 00 00 00 6c 00 00 00 30 00 00 00 04 00 00 00
            6d 61 69 6e 65 bc f8 1b bb ed e3 05
        """)

    @Test func hintFilesRoundTrip() throws {
        var writer = HintWriter(segmentNumber: 7, segmentSize: 4096)
        for entry in Self.sampleEntries { writer.append(entry) }
        let bytes = writer.finish()
        let reader = try bytes.withUnsafeBytes { try HintReader.open($0).get() }
        #expect(reader.segmentNumber == 7 && reader.segmentSize == 4096)
        #expect(reader.entries == Self.sampleEntries)
        for cut in 0..<bytes.count {
            let result = Array(bytes.prefix(cut)).withUnsafeBytes { HintReader.open($0) }
            if case .success = result { Issue.record("a hint cut to \(cut) bytes was accepted") }
        }
    }

    /// Random hints: the writer's bytes equal the old layout's, the reader gives the entries back, and a
    /// hint cut short or with a byte changed is refused. The seed is printed; set `LOGSTORE_SEED` to
    /// replay one.
    @Test(arguments: [0, 1, 2, 3])
    func randomHintsRoundTrip(round: Int) throws {
        let seed =
            ProcessInfo.processInfo.environment["LOGSTORE_SEED"].flatMap(UInt64.init)
            ?? (0x4849_4E54 + UInt64(round) * 104_729)
        print("HintFileTests seed \(seed) (replay with LOGSTORE_SEED=\(seed))")
        var random = SplitMix64(seed: seed)
        for trial in 0..<50 {
            let segmentSize = UInt64(LogFormat.segmentHeaderSize) + 1 + random.next() % (1 << 24)
            let number = UInt32(1 + random.next() % UInt64(UInt32.max))
            let entries = (0..<Int(random.next() % 40)).map { _ in
                Self.randomEntry(&random, segmentSize: segmentSize)
            }
            var writer = HintWriter(segmentNumber: number, segmentSize: segmentSize)
            for entry in entries { writer.append(entry) }
            let bytes = writer.finish()
            let context = "seed \(seed), trial \(trial)"
            #expect(
                bytes == LegacyHint(segmentNumber: number, segmentSize: segmentSize, entries: entries).encoded(),
                "\(context)")
            let reader = bytes.withUnsafeBytes { try? HintReader.open($0).get() }
            #expect(reader?.segmentNumber == number && reader?.segmentSize == segmentSize, "\(context)")
            #expect(reader?.entries == entries, "\(context)")
            let cut = Int(random.next() % UInt64(bytes.count))
            if case .success = Array(bytes.prefix(cut)).withUnsafeBytes({ HintReader.open($0) }) {
                Issue.record("\(context): a hint cut to \(cut) bytes was accepted")
            }
            var damaged = bytes
            damaged[Int(random.next() % UInt64(bytes.count))] ^= UInt8(1 + random.next() % 255)
            if case .success = damaged.withUnsafeBytes({ HintReader.open($0) }) {
                Issue.record("\(context): a hint with a changed byte was accepted")
            }
        }
    }

    /// An entry the reader accepts in a segment of `segmentSize` bytes.
    static func randomEntry(_ random: inout SplitMix64, segmentSize: UInt64) -> HintFile.Entry {
        let kinds: [FrameKind] = [.put, .delete, .setRoot, .removeRoot, .reserveIDs]
        let kind = kinds[Int(random.next() % UInt64(kinds.count))]
        let isRoot = kind == .setRoot || kind == .removeRoot
        let offset = UInt64(LogFormat.segmentHeaderSize) + random.next() % (segmentSize - 48)
        let length = UInt64(LogFormat.minimumFrameSize) + random.next() % 4096
        return HintFile.Entry(
            kind: kind, flags: FrameFlags(rawValue: UInt8(random.next() % 16)),
            sequence: random.next() % (LogFormat.maxSequence + 1), id: 1 + random.next() % LogFormat.maxObjectID,
            typeTag: UInt32(truncatingIfNeeded: random.next()), offset: UInt32(offset),
            length: UInt32(min(length, segmentSize - offset)),
            references: (0..<Int(random.next() % 6)).map { _ in ObjectID(random.next()) },
            name: isRoot ? (0..<Int(random.next() % 40)).map { _ in UInt8(truncatingIfNeeded: random.next()) } : [])
    }
}

/// Parses bytes written as hexadecimal pairs separated by spaces.
private func hexBytes(_ text: String) -> [UInt8] {
    text.split(whereSeparator: { $0 == " " || $0 == "\n" }).compactMap { UInt8($0, radix: 16) }
}

/// A test-only copy of the hint encoder as it was before ``HintWriter`` (a value per entry, then the
/// whole file at once), the byte layout of Format.md section 8, to compare the writer's bytes with.
struct LegacyHint: Equatable {
    var segmentNumber: UInt32
    var segmentSize: UInt64
    var entries: [HintFile.Entry]

    /// The hint of a sealed segment, from a scan of its frames.
    static func build(segment number: UInt32, bytes: UnsafeRawBufferPointer) -> LegacyHint? {
        var entries: [HintFile.Entry] = []
        let outcome = SegmentScanner(bytes: bytes).scan { frame in
            let isRoot = frame.kind == .setRoot || frame.kind == .removeRoot
            entries.append(
                HintFile.Entry(
                    kind: frame.kind, flags: frame.flags, sequence: frame.sequence, id: frame.id,
                    typeTag: frame.typeTag,
                    offset: UInt32(frame.offset), length: UInt32(frame.length),
                    references: FrameDecoder.references(of: frame, in: bytes),
                    name: isRoot ? (FrameDecoder.payload(of: frame, in: bytes) ?? []) : []))
        }
        guard outcome.damages.isEmpty, outcome.sealedAt != nil else { return nil }
        return LegacyHint(segmentNumber: number, segmentSize: UInt64(bytes.count), entries: entries)
    }

    /// The file's bytes.
    func encoded() -> [UInt8] {
        var size = HintFile.headerSize + LogFormat.frameChecksumSize
        for entry in entries { size += HintFile.entrySize + entry.references.count * 8 + entry.name.count }
        var bytes = [UInt8](repeating: 0, count: size)
        bytes.withUnsafeMutableBytes { raw in
            guard let base = raw.baseAddress else { return }
            for (index, byte) in HintFile.magic.enumerated() { raw[index] = byte }
            base.writeLE(HintFile.version, at: 8)
            base.writeLE(UInt16(HintFile.headerSize), at: 10)
            base.writeLE(UInt64(segmentNumber), at: 16)
            base.writeLE(segmentSize, at: 24)
            base.writeLE(UInt64(entries.count), at: 32)
            var cursor = HintFile.headerSize
            for entry in entries {
                base.storeBytes(of: entry.kind.rawValue, toByteOffset: cursor, as: UInt8.self)
                base.storeBytes(of: entry.flags.rawValue, toByteOffset: cursor + 1, as: UInt8.self)
                base.writeLE(UInt32(entry.references.count), at: cursor + 4)
                base.writeLE(entry.sequence, at: cursor + 8)
                base.writeLE(entry.id, at: cursor + 16)
                base.writeLE(entry.typeTag, at: cursor + 24)
                base.writeLE(entry.offset, at: cursor + 28)
                base.writeLE(entry.length, at: cursor + 32)
                base.writeLE(UInt32(entry.name.count), at: cursor + 36)
                cursor += HintFile.entrySize
                for reference in entry.references {
                    base.writeLE(reference.rawValue, at: cursor)
                    cursor += 8
                }
                for byte in entry.name {
                    raw[cursor] = byte
                    cursor += 1
                }
            }
            base.writeLE(Checksum.xxh3(UnsafeRawPointer(base), count: cursor), at: cursor)
        }
        return bytes
    }
}
