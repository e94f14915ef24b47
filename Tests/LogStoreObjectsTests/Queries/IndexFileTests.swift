import CXXHash
import Foundation
import LogStore
import LogStoreEncryption
import TestSupport
import Testing

@_spi(Testing) @testable import LogStoreObjects

/// A class stored under `Ticket`'s name that declares no index: opening a store with it in place of
/// `Ticket` removes `Ticket`'s indexes.
final class UnindexedTicket: PersistentObject {
    static let typeName = "test.Ticket"
    var title: String
    init(title: String) { self.title = title }
}

/// A class stored under `Ticket`'s name with fewer indexes: an index file written for `Ticket` is of
/// another declaration.
final class ReindexedTicket: PersistentObject {
    static let typeName = "test.Ticket"
    static let indexes: [IndexDefinition] = [.ordered(\ReindexedTicket.due, field: "due")]
    var title: String
    var due: Date
    init(title: String, due: Date) {
        self.title = title
        self.due = due
    }
}

/// Index files: written at a clean close, read by the next build instead of the records, and trusted only
/// for what their checksum, their store, their declaration and each object's version prove.
@Suite struct IndexFileTests {
    let base = Date(timeIntervalSinceReferenceDate: 800_000_000)

    /// Inserts tickets numbered `range` (code `c<n>`, due `n` minutes after `base`), each with a new label
    /// named `labelName` when one is given.
    private func insertTickets(_ objects: ObjectStore, _ range: Range<Int>, labelName: String? = nil) throws {
        let context = objects.makeContext()
        let label = labelName.map(Label.init)
        for number in range {
            try context.insert(
                Ticket(
                    title: "t\(number)", code: "c\(number)", due: base.addingTimeInterval(Double(number) * 60),
                    priority: number % 5, status: number % 2 == 0 ? "open" : "done", labels: label.map { [$0] } ?? []))
        }
        try context.save()
    }

    private func dueBefore(_ minutes: Int) -> FetchDescriptor<Ticket> {
        let cutoff = base.addingTimeInterval(Double(minutes) * 60)
        return FetchDescriptor<Ticket>(predicate: #Predicate { $0.due < cutoff }, sortBy: [SortDescriptor(\.due)])
    }

    /// What the indexes answer (a range on `due` with the order, a priority equality, a code lookup each),
    /// checked against the same questions answered by reading every ticket.
    private func expectIndexesAnswerAsAScan(_ objects: ObjectStore, _ comment: Comment) throws {
        let context = objects.makeContext()
        let all = try context.objects(of: Ticket.self)
        let cutoffMinutes = 150
        let expectedRange = all.filter { $0.due < base.addingTimeInterval(Double(cutoffMinutes) * 60) }
            .sorted { ($0.due, $0.title) < ($1.due, $1.title) }.map(\.title)
        let descriptor = dueBefore(cutoffMinutes)
        #expect(try context.explain(descriptor).index == "due", comment)
        #expect(try context.fetch(descriptor).map(\.title) == expectedRange, comment)
        let priority = FetchDescriptor<Ticket>(predicate: #Predicate { $0.priority == 3 })
        #expect(
            try context.fetch(priority).map(\.title).sorted() == all.filter { $0.priority == 3 }.map(\.title).sorted(),
            comment)
        for ticket in all.prefix(40) {
            let code = try #require(ticket.code)
            #expect(try context.fetchUnique(Ticket.self, where: \.code, equals: code) === ticket, comment)
        }
    }

    private func indexFiles(in directory: TemporaryStore) throws -> [String] {
        try FileManager.default.contentsOfDirectory(atPath: directory.path).filter { $0.hasSuffix(".lsindex") }
    }

    private func fileOfTickets(_ directory: TemporaryStore) throws -> String {
        let names = try indexFiles(in: directory)
        #expect(names.count == 1, "one class declares indexes: \(names)")
        return directory.path + "/" + (try #require(names.first))
    }

    /// Opens, builds the indexes with one query, and closes: the close writes the file.
    private func buildAndClose(_ directory: TemporaryStore) throws {
        try withObjects(directory, types: queryTypes) { objects in
            _ = try objects.makeContext().fetchIDs(dueBefore(10))
        }
    }

    @Test func theNextOpenReadsTheIndexesFromTheirFile() throws {
        let directory = TemporaryStore("index-file-read")
        try withObjects(directory, types: queryTypes) { objects in
            try insertTickets(objects, 0..<300, labelName: "red")
            try expectIndexesAnswerAsAScan(objects, "built from the records")
            #expect(objects.indexFilesRead == 0)
        }
        #expect(try indexFiles(in: directory) == [IndexFile.fileName(tag: TypeNames.tag(for: Ticket.typeName))])
        let path = try fileOfTickets(directory)
        func fileNumber() throws -> Int? {
            try FileManager.default.attributesOfItem(atPath: path)[.systemFileNumber] as? Int
        }
        let written = try fileNumber()
        // Read and used, nothing changed: the close leaves the file as it is (a rewrite is a new file).
        try withObjects(directory, types: queryTypes) { objects in
            try expectIndexesAnswerAsAScan(objects, "read from the file, unchanged")
            #expect(objects.indexFilesRead == 1)
        }
        #expect(try fileNumber() == written)
        try withObjects(directory, types: queryTypes) { objects in
            try expectIndexesAnswerAsAScan(objects, "read from the file")
            #expect(objects.indexFilesRead == 1)
            #expect(objects.indexFileNotes.isEmpty, "\(objects.indexFileNotes)")
            let context = objects.makeContext()
            let label = try #require(try context.objects(of: Label.self).first)
            #expect(try context.referrers(to: label, through: \Ticket.labels).count == 300)
            // The unique index read from the file refuses a code it holds.
            try context.insert(Ticket(title: "again", code: "c7", due: base, priority: 0, status: "open"))
            #expect(throws: ObjectStoreError.self) { try context.save() }
        }
    }

    @Test func aStaleFileIsBroughtUpToDateFromTheRecordsThatChanged() throws {
        let directory = TemporaryStore("index-file-stale")
        try withObjects(directory, types: queryTypes) { objects in try insertTickets(objects, 0..<200) }
        try buildAndClose(directory)
        let path = try fileOfTickets(directory)
        let stale = try Data(contentsOf: URL(fileURLWithPath: path))
        try withObjects(directory, types: queryTypes) { objects in
            let context = objects.makeContext()
            for ticket in try context.objects(of: Ticket.self) {
                let number = Int(ticket.title.dropFirst()) ?? 0
                if number % 4 == 0 { ticket.due = base.addingTimeInterval(Double(1_000 - number) * 60) }
                if number % 7 == 0 { ticket.priority = 3 }
                if number % 5 == 1 { context.delete(ticket) }
            }
            try context.save()
            try insertTickets(objects, 200..<260)
            _ = try context.fetchIDs(dueBefore(10))
        }
        // The file of the earlier state is put back: every change since is in the records, not in it.
        try stale.write(to: URL(fileURLWithPath: path))
        try withObjects(directory, types: queryTypes) { objects in
            try expectIndexesAnswerAsAScan(objects, "a stale file caught up")
            #expect(objects.indexFilesRead == 1)
            let context = objects.makeContext()
            // c1 was deleted after the file was written; c230 inserted after it.
            try context.insert(Ticket(title: "reused", code: "c1", due: base, priority: 0, status: "open"))
            try context.save()
            try context.insert(Ticket(title: "taken", code: "c230", due: base, priority: 0, status: "open"))
            let error = #expect(throws: ObjectStoreError.self) { try context.save() }
            #expect(error?.code == .uniqueViolation)
        }
    }

    @Test func aDamagedFileIsNotedAndTheIndexesAreBuiltFromTheRecords() throws {
        let directory = TemporaryStore("index-file-damaged")
        try withObjects(directory, types: queryTypes) { objects in try insertTickets(objects, 0..<200) }
        try buildAndClose(directory)
        let path = try fileOfTickets(directory)
        var bytes = try Data(contentsOf: URL(fileURLWithPath: path))
        bytes[bytes.count / 2] ^= 0x40
        try bytes.write(to: URL(fileURLWithPath: path))
        try withObjects(directory, types: queryTypes) { objects in
            try expectIndexesAnswerAsAScan(objects, "built after a damaged file")
            #expect(objects.indexFilesRead == 0)
            #expect(objects.indexFileNotes.count == 1)
            #expect(objects.indexFileNotes.first?.contains("checksum mismatch") == true, "\(objects.indexFileNotes)")
        }
        // The close replaced it with a good one.
        try withObjects(directory, types: queryTypes) { objects in
            _ = try objects.makeContext().fetchIDs(dueBefore(10))
            #expect(objects.indexFilesRead == 1)
        }
    }

    @Test func aFileOfAnotherStoreIsNotUsed() throws {
        let first = TemporaryStore("index-file-first")
        let second = TemporaryStore("index-file-second")
        for directory in [first, second] {
            try withObjects(directory, types: queryTypes) { objects in try insertTickets(objects, 0..<100) }
        }
        try buildAndClose(first)
        let name = try #require(try indexFiles(in: first).first)
        try FileManager.default.removeItem(atPath: second.path + "/" + name)
        try FileManager.default.copyItem(atPath: first.path + "/" + name, toPath: second.path + "/" + name)
        try withObjects(second, types: queryTypes) { objects in
            try expectIndexesAnswerAsAScan(objects, "the other store's file ignored")
            #expect(objects.indexFilesRead == 0)
            #expect(objects.indexFileNotes.first?.contains("another store") == true, "\(objects.indexFileNotes)")
        }
    }

    @Test func aFileAheadOfTheStoreIsNotUsed() throws {
        let directory = TemporaryStore("index-file-ahead")
        let older = TemporaryStore("index-file-older")
        try withObjects(directory, types: queryTypes) { objects in try insertTickets(objects, 0..<100) }
        try buildAndClose(directory)
        // A copy of the store as it is now, index file included.
        try FileManager.default.removeItem(atPath: older.path)
        try FileManager.default.copyItem(atPath: directory.path, toPath: older.path)
        try withObjects(directory, types: queryTypes) { objects in
            try insertTickets(objects, 100..<150)
            _ = try objects.makeContext().fetchIDs(dueBefore(10))
        }
        // The newer file, put into the older copy: it names batches that copy never had.
        let name = try #require(try indexFiles(in: directory).first)
        try FileManager.default.removeItem(atPath: older.path + "/" + name)
        try FileManager.default.copyItem(atPath: directory.path + "/" + name, toPath: older.path + "/" + name)
        try withObjects(older, types: queryTypes) { objects in
            try expectIndexesAnswerAsAScan(objects, "a file ahead of the store ignored")
            #expect(try objects.makeContext().objects(of: Ticket.self).count == 100)
            #expect(objects.indexFilesRead == 0)
            #expect(objects.indexFileNotes.first?.contains("past the store's") == true, "\(objects.indexFileNotes)")
        }
    }

    @Test func aFileWrittenForOtherIndexesIsNotRead() throws {
        let data = TypeIndexData(unique: [false], building: [])
        let ties = IndexFile.Ties(storeID: Array(repeating: 7, count: 16), fingerprint: 42, indexCount: 1)
        let bytes = IndexFile.encode(data, sequence: 5, ties: ties)
        guard case .success(let contents) = IndexFile.decode(bytes, ties: ties, unique: [false]) else {
            Issue.record("the file does not read back")
            return
        }
        #expect(contents.sequence == 5)
        var other = ties
        other.fingerprint = 43
        guard case .failure(let problem) = IndexFile.decode(bytes, ties: other, unique: [false]) else {
            Issue.record("a file of other definitions was read")
            return
        }
        #expect(problem.reason.contains("other index definitions"))
        other = ties
        other.indexCount = 2
        guard case .failure = IndexFile.decode(bytes, ties: other, unique: [false, false]) else {
            Issue.record("a file of another index count was read")
            return
        }
    }

    @Test func everyKindOfKeyReadsBackFromAFile() throws {
        let keys: [CompoundKey] = [
            CompoundKey(.absent), CompoundKey(.null), CompoundKey(.bool(false)), CompoundKey(.bool(true)),
            CompoundKey(.int(-5)), CompoundKey(.uint(UInt64.max)), CompoundKey(.double(.nan)),
            CompoundKey(.double(2.5)),
            CompoundKey(.string("é ü")), CompoundKey(.bytes([0, 255])),
            CompoundKey(.uuid(UUID(uuidString: "E621E1F8-C36C-495A-93FC-0C247A3E6E5F") ?? UUID())),
            CompoundKey(.reference(ObjectID(9))), CompoundKey([.string("a"), .int(1), .null]),
        ]
        let objects = keys.enumerated().map { number, key in
            (id: ObjectID(UInt64(number + 1)), keys: TypeIndexData.ObjectKeys(version: 3, keys: [[key]]))
        }
        let data = TypeIndexData(unique: [false], building: objects)
        let ties = IndexFile.Ties(storeID: Array(repeating: 1, count: 16), fingerprint: 1, indexCount: 1)
        guard
            case .success(let contents) = IndexFile.decode(
                IndexFile.encode(data, sequence: 9, ties: ties), ties: ties, unique: [false])
        else {
            Issue.record("the file does not read back")
            return
        }
        for (id, keys) in objects {
            #expect(contents.data.keys(of: id, in: 0).map(\.description) == keys.keys[0].map(\.description))
            #expect(contents.data.version(of: id) == 3)
        }
        #expect(contents.data.holdsNaN[0].count == 1)
        #expect(contents.data.absent[0].count == 1)
    }

    /// Strings that share their start with the previous entry's (written as the shared length and the
    /// rest: ASCII codes, a shared part ending inside a multi-byte character, compound keys, a string after
    /// a number), ids far apart (kept outside the dense pages) and ids in any order read back exactly, and
    /// take fewer bytes than written in full.
    @Test func sharedStartsAndIDsFarApartReadBack() throws {
        let strings = (0..<300).map { String(format: "QT-%012d", $0 * 7) } + ["été", "étés", "éu", "é", "", "x"]
        var objects: [(id: ObjectID, keys: TypeIndexData.ObjectKeys)] = []
        for (number, text) in strings.enumerated() {
            let id = number % 50 == 0 ? ObjectID(UInt64(1) << 50 + UInt64(number)) : ObjectID(UInt64(number + 1))
            let compound =
                number % 3 == 0 ? CompoundKey([.string(text), .int(Int64(number))]) : CompoundKey(.string(text))
            objects.append(
                (
                    id,
                    TypeIndexData.ObjectKeys(
                        version: UInt64(number + 2), keys: [[compound], [CompoundKey(.double(Double(number)))]])
                ))
        }
        objects.append((ObjectID(5_000), TypeIndexData.ObjectKeys(version: 1, keys: [[CompoundKey(.int(3))], []])))
        let unique = [false, false]
        let data = TypeIndexData(unique: unique, building: objects.shuffled())
        let ties = IndexFile.Ties(storeID: Array(repeating: 1, count: 16), fingerprint: 1, indexCount: 2)
        let bytes = IndexFile.encode(data, sequence: 9, ties: ties)
        guard case .success(let contents) = IndexFile.decode(bytes, ties: ties, unique: unique) else {
            Issue.record("the file does not read back")
            return
        }
        for (id, keys) in objects {
            for index in 0..<2 { #expect(contents.data.keys(of: id, in: index) == keys.keys[index], "object \(id)") }
            #expect(contents.data.version(of: id) == keys.version)
        }
        #expect(contents.data.objectCount == objects.count)
        // Written in full, each of the 300 codes would take at least 18 bytes (id, field count, kind, length,
        // 15 bytes); sharing 12 or 13 bytes with the one before, about 8.
        func length(at offset: Int) -> Int {
            Int(
                UInt64(
                    littleEndian: bytes.withUnsafeBytes { $0.loadUnaligned(fromByteOffset: offset, as: UInt64.self) }))
        }
        let firstIndexLength = length(at: IndexFile.headerSize + 8 + length(at: IndexFile.headerSize))
        // The example of Format.md: after "QT-000000000007", "QT-000000000014" is one field, 13 shared bytes
        // and "14".
        let example: [UInt8] = [1, 11, 13, 2, 0x31, 0x34]
        #expect(bytes.indices.contains { bytes[$0...].starts(with: example) })
        #expect(firstIndexLength < 300 * 12, "\(firstIndexLength) bytes")
    }

    /// A string that claims more shared bytes than the previous key has, a shared start after a key that is
    /// not a string, and an object listed twice are refused (with their checksums right).
    @Test func malformedSharedStartsAndRepeatedObjectsAreRefused() throws {
        let ties = IndexFile.Ties(storeID: Array(repeating: 1, count: 16), fingerprint: 1, indexCount: 1)
        func file(objects: [UInt8], entries: [UInt8], objectCount: UInt64) -> [UInt8] {
            var bytes = Array(IndexFile.magic)
            bytes += [2, 0, 0, 0, 1, 0, 0, 0] + Array(repeating: 1, count: 16)
            for field: UInt64 in [1, 9, objectCount, UInt64(16 + objects.count + entries.count)] {
                withUnsafeBytes(of: field.littleEndian) { bytes += $0 }
            }
            for section in [objects, entries] {
                withUnsafeBytes(of: UInt64(section.count).littleEndian) { bytes += $0 }
                bytes += section
            }
            let sum = bytes.withUnsafeBytes { XXH3_64bits($0.baseAddress, $0.count) }
            withUnsafeBytes(of: sum.littleEndian) { bytes += $0 }
            return bytes
        }
        func problem(_ bytes: [UInt8]) -> String? {
            guard case .failure(let problem) = IndexFile.decode(bytes, ties: ties, unique: [false]) else { return nil }
            return problem.reason
        }
        let twoObjects: [UInt8] = [1, 3, 1, 3]
        // Entries: count 2; id 1, one field, "ab"; id 2, one field, sharing 2 bytes, then "c".
        let sound = file(objects: twoObjects, entries: [2, 1, 1, 7, 2, 97, 98, 2, 1, 11, 2, 1, 99], objectCount: 2)
        #expect(problem(sound) == nil)
        let tooMany = file(objects: twoObjects, entries: [2, 1, 1, 7, 2, 97, 98, 2, 1, 11, 3, 1, 99], objectCount: 2)
        #expect(problem(tooMany)?.contains("sharing 3 bytes") == true)
        let afterNumber = file(objects: twoObjects, entries: [2, 1, 1, 4, 2, 2, 1, 11, 1, 1, 99], objectCount: 2)
        #expect(problem(afterNumber)?.contains("sharing 1 bytes") == true)
        let twice = file(objects: [1, 3, 0, 3], entries: [1, 1, 1, 4, 2], objectCount: 2)
        #expect(problem(twice)?.contains("listed twice") == true)
        // A step past 2^64 − 1: ids 1, then 1 + (2^64 − 1).
        let beyond = file(
            objects: [1, 3] + Array(repeating: 0xFF, count: 9) + [0x01, 3], entries: [1, 1, 1, 4, 2], objectCount: 2)
        #expect(problem(beyond)?.contains("beyond 2^64") == true)
        // "é" is C3 A9: sharing only its first byte, then "x", is not UTF-8.
        let split = file(
            objects: twoObjects, entries: [2, 1, 1, 7, 2, 0xC3, 0xA9, 2, 1, 11, 1, 1, 120], objectCount: 2)
        #expect(problem(split)?.contains("not UTF-8") == true)
        // A shared start is only a key's first field.
        let second = file(
            objects: twoObjects, entries: [2, 1, 1, 7, 2, 97, 98, 2, 2, 7, 1, 97, 11, 1, 0], objectCount: 2)
        #expect(problem(second)?.contains("unknown key kind 11") == true)
        // Entries that each rebuild a 1 MiB string from a few bytes (objects 1 to 255, one key each, all of
        // it shared): refused before they take the memory of a far larger file.
        func varint(_ value: Int) -> [UInt8] {
            var value = value
            var bytes: [UInt8] = []
            while value >= 0x80 {
                bytes.append(UInt8(value & 0x7F) | 0x80)
                value >>= 7
            }
            return bytes + [UInt8(value)]
        }
        var entries = varint(255) + [1, 1, 7] + varint(1 << 20) + [UInt8](repeating: 97, count: 1 << 20)
        for id in 2...255 { entries += varint(id) + [1, 11] + varint(1 << 20) + [0] }
        let amplified = file(
            objects: Array([[UInt8]](repeating: [1, 3], count: 255).joined()), entries: entries, objectCount: 255)
        #expect(problem(amplified)?.contains("rebuild more bytes") == true)
    }

    @Test func removingTheIndexesRemovesTheirFile() throws {
        let directory = TemporaryStore("index-file-removed")
        try withObjects(directory, types: queryTypes) { objects in try insertTickets(objects, 0..<50) }
        try buildAndClose(directory)
        #expect(try indexFiles(in: directory).count == 1)
        try withObjects(directory, types: [UnindexedTicket.self, Label.self]) { _ in }
        #expect(try indexFiles(in: directory).isEmpty)
    }

    @Test func anEncryptedStoreKeepsNoIndexFileAndAnswersFromItsRecords() throws {
        let directory = TemporaryStore("index-file-encrypted")
        let cipher = try AESGCMCipher(key: Array(repeating: 7, count: 32))
        directory.verifies(with: cipher)
        var options = StoreOptions()
        options.cipher = cipher
        for round in 0..<2 {
            let objects = try ObjectStore.open(at: directory.path, options: options, types: queryTypes)
            if round == 0 { try insertTickets(objects, 0..<200) }
            try expectIndexesAnswerAsAScan(objects, "encrypted, round \(round)")
            try objects.close()
            #expect(try indexFiles(in: directory).isEmpty, "an index file would hold the indexed values in the clear")
        }
        // No title or code is on disk in the clear.
        for name in try FileManager.default.contentsOfDirectory(atPath: directory.path) {
            let bytes = try Data(contentsOf: URL(fileURLWithPath: directory.path + "/" + name))
            #expect(bytes.range(of: Data("t199".utf8)) == nil && bytes.range(of: Data("c123".utf8)) == nil, "\(name)")
        }
    }

    @Test func aReadOnlyOpenWritesNoFile() throws {
        let directory = TemporaryStore("index-file-read-only")
        try withObjects(directory, types: queryTypes) { objects in try insertTickets(objects, 0..<50) }
        // (The saves built the unique index, and the close wrote its file.)
        for name in try indexFiles(in: directory) {
            try FileManager.default.removeItem(atPath: directory.path + "/" + name)
        }
        let objects = try ObjectStore.open(
            at: directory.path, options: StoreOptions(readOnly: true), types: queryTypes)
        try expectIndexesAnswerAsAScan(objects, "read-only")
        try objects.close()
        #expect(try indexFiles(in: directory).isEmpty)
    }

    @Test func verifyComparesEachFileWithTheRecords() throws {
        let directory = TemporaryStore("index-file-verify")
        try withObjects(directory, types: queryTypes) { objects in try insertTickets(objects, 0..<120) }
        try buildAndClose(directory)
        let path = try fileOfTickets(directory)
        func reports() throws -> [IndexFileReport] {
            let store = try Store.open(
                at: directory.path, options: StoreOptions(createIfMissing: false, readOnly: true))
            defer { try? store.close() }
            return try IndexFileReport.reports(of: store)
        }
        let sound = try #require(try reports().first)
        #expect(sound.objects == 120 && sound.staleObjects == 0 && sound.problems.isEmpty, "\(sound)")

        // Changes since the file was written are stale objects, not damage.
        let written = try Data(contentsOf: URL(fileURLWithPath: path))
        try withObjects(directory, types: queryTypes) { objects in
            let context = objects.makeContext()
            for ticket in try context.objects(of: Ticket.self).prefix(10) { ticket.priority += 1 }
            try context.save()
        }
        try written.write(to: URL(fileURLWithPath: path))
        let stale = try #require(try reports().first)
        #expect(stale.staleObjects == 10 && stale.problems.isEmpty, "\(stale)")

        // A file rewritten with one object's due date changed, its checksum recomputed: its keys disagree
        // with the record.
        let bytes = [UInt8](written)
        let storeID = Array(bytes[16..<32])
        let fingerprint = bytes.withUnsafeBytes {
            UInt64(littleEndian: $0.loadUnaligned(fromByteOffset: 32, as: UInt64.self))
        }
        let sequence = bytes.withUnsafeBytes {
            UInt64(littleEndian: $0.loadUnaligned(fromByteOffset: 40, as: UInt64.self))
        }
        let ties = IndexFile.Ties(storeID: storeID, fingerprint: fingerprint, indexCount: Ticket.indexes.count)
        let unique = Ticket.indexes.map(\.isUnique)
        guard case .success(let contents) = IndexFile.decode(bytes, ties: ties, unique: unique) else {
            Issue.record("the written file does not read back")
            return
        }
        let ids = contents.data.objectIDs.sorted()
        let forgedID = try #require(ids.last)
        let objects = ids.map { id in
            let keys = (0..<unique.count).map { index in
                index == 0 && id == forgedID ? [CompoundKey(.double(-1))] : contents.data.keys(of: id, in: index)
            }
            return (id: id, keys: TypeIndexData.ObjectKeys(version: contents.data.version(of: id) ?? 0, keys: keys))
        }
        let forged = IndexFile.encode(TypeIndexData(unique: unique, building: objects), sequence: sequence, ties: ties)
        try Data(forged).write(to: URL(fileURLWithPath: path))
        let damaged = try #require(try reports().first)
        #expect(damaged.problems.count == 1, "\(damaged)")
        #expect(damaged.problems.first?.contains("object \(forgedID)") == true, "\(damaged)")

        // A flipped byte: the checksum.
        var flipped = forged
        flipped[flipped.count / 3] ^= 1
        try Data(flipped).write(to: URL(fileURLWithPath: path))
        #expect(try reports().first?.problems.first?.contains("checksum mismatch") == true)
    }

    @Test func aFileOfAnotherDeclarationIsANoteForVerifyAndIsNotRead() throws {
        let directory = TemporaryStore("index-file-other-declaration")
        try withObjects(directory, types: queryTypes) { objects in try insertTickets(objects, 0..<50) }
        try buildAndClose(directory)
        // Opened with fewer indexes and no query: the catalog changes, the file stays as it was written.
        try withObjects(directory, types: [ReindexedTicket.self, Label.self]) { _ in }
        let store = try Store.open(at: directory.path, options: StoreOptions(createIfMissing: false, readOnly: true))
        let report = try #require(try IndexFileReport.reports(of: store).first)
        try store.close()
        #expect(report.problems.isEmpty, "\(report)")
        #expect(report.notes.contains { $0.contains("other index definitions") }, "\(report)")
        try withObjects(directory, types: [ReindexedTicket.self, Label.self]) { objects in
            let cutoff = base.addingTimeInterval(600)
            let descriptor = FetchDescriptor<ReindexedTicket>(predicate: #Predicate { $0.due < cutoff })
            let found = try objects.makeContext().fetch(descriptor)
            #expect(found.count == 10)
            #expect(objects.indexFilesRead == 0)
            #expect(objects.indexFileNotes.contains { $0.contains("other index definitions") })
        }
    }

    /// A file whose checksum is right but whose contents break a rule of the format is not read.
    @Test func aFileBreakingTheFormatIsRefusedDespiteItsChecksum() throws {
        let unique = Ticket.indexes.map(\.isUnique)
        let ties = IndexFile.Ties(storeID: Array(repeating: 7, count: 16), fingerprint: 1, indexCount: unique.count)
        let objects = (1...3).map { number in
            (
                id: ObjectID(rawValue: UInt64(number)),
                keys: TypeIndexData.ObjectKeys(
                    version: 5, keys: unique.indices.map { [CompoundKey(.int(Int64($0 * 10 + number)))] })
            )
        }
        let sound = IndexFile.encode(TypeIndexData(unique: unique, building: objects), sequence: 9, ties: ties)
        guard case .success(let contents) = IndexFile.decode(sound, ties: ties, unique: unique) else {
            Issue.record("a sound file does not read")
            return
        }
        #expect(contents.data.objectCount == 3)
        func checksummed(_ bytes: [UInt8]) -> [UInt8] {
            var bytes = bytes
            let sum = bytes.withUnsafeBytes { XXH3_64bits($0.baseAddress, $0.count - 8) }
            withUnsafeBytes(of: sum.littleEndian) { bytes.replaceSubrange(bytes.count - 8..<bytes.count, with: $0) }
            return bytes
        }
        func problem(_ bytes: [UInt8]) -> String? {
            guard case .failure(let problem) = IndexFile.decode(checksummed(bytes), ties: ties, unique: unique) else {
                return nil
            }
            return problem.reason
        }
        var reserved = sound
        reserved[10] = 1
        #expect(problem(reserved)?.contains("reserved") == true)
        // The first object's id (after the header and the objects' section length) changed: the indexes
        // hold keys of an object the file does not list.
        var unlisted = sound
        unlisted[IndexFile.headerSize + 8] = 0x44
        #expect(problem(unlisted)?.contains("does not list") == true)
        // An unsigned key that fits a signed one.
        let unsignedObjects = objects.map { object in
            (
                id: object.id,
                keys: TypeIndexData.ObjectKeys(version: 5, keys: unique.map { _ in [CompoundKey(.uint(4))] })
            )
        }
        let unsigned = IndexFile.encode(
            TypeIndexData(unique: unique, building: unsignedObjects), sequence: 9, ties: ties)
        #expect(problem(unsigned)?.contains("fits a signed one") == true)
    }
}
