import Foundation
import LogStoreEncryption
import LogStoreExamples
@_spi(Engine) import LogStoreFormat
import TestSupport
import Testing

@testable @_spi(Testing) import LogStore

/// A cipher with a fixed key, for tests.
func testCipher(_ seed: UInt8 = 7) -> AESGCMCipher {
    // A key of 32 bytes is never refused.
    (try? AESGCMCipher(key: (0..<32).map { UInt8($0) &+ seed })) ?? { fatalError("unreachable") }()
}

/// Options of an encrypted test store.
func encryptedOptions(segmentSize: Int = 1 << 16, cipher: any StoreCipher = testCipher()) -> StoreOptions {
    var options = testOptions(segmentSize: segmentSize)
    options.cipher = cipher
    return options
}

/// A payload that holds a marker of 16 random bytes (which must never appear in any file of an
/// encrypted store) in the middle of compressible text.
func markedPayload(_ index: Int, seed: UInt64) -> (payload: [UInt8], marker: [UInt8]) {
    var generator = SplitMix64(seed: seed &+ UInt64(index))
    let marker = (0..<16).map { _ in UInt8(truncatingIfNeeded: generator.next()) }
    let text = Array("{\"title\":\"note \(index)\",\"body\":\"the quick brown fox jumps over the lazy dog\"}".utf8)
    return (text + marker + text, marker)
}

/// Every file under `directory`, recursively, with its bytes.
func everyFile(under directory: String) -> [(path: String, bytes: [UInt8])] {
    guard let names = FileManager.default.subpaths(atPath: directory) else { return [] }
    return names.sorted().compactMap { name in
        let path = directory + "/" + name
        guard let data = FileManager.default.contents(atPath: path) else { return nil }
        return (path, [UInt8](data))
    }
}

/// Whether `haystack` holds `needle` anywhere.
func contains(_ haystack: [UInt8], _ needle: [UInt8]) -> Bool {
    guard needle.count <= haystack.count, let first = needle.first else { return needle.isEmpty }
    var index = 0
    while index <= haystack.count - needle.count {
        if haystack[index] == first, haystack[index..<index + needle.count].elementsEqual(needle) { return true }
        index += 1
    }
    return false
}

@Suite("Encrypted stores")
struct EncryptedStoreTests {
    @Test("an encrypted store reads back every record, reference and root across reopen and compaction")
    func roundTrip() throws {
        let seed = testSeed("EncryptedStoreTests.roundTrip", default: 0xE1)
        let directory = TemporaryStore("encrypted-round-trip")
        directory.verifies(with: testCipher())
        var written: [ObjectID: (payload: [UInt8], references: [ObjectID])] = [:]
        do {
            let store = try directory.open(options: encryptedOptions())
            var previous: ObjectID?
            for index in 0..<3_000 {
                let payload = markedPayload(index, seed: seed).payload
                let references = previous.map { [$0] } ?? []
                let id = try store.put(typeTag: 1, references: references, payload: payload)
                written[id] = (payload, references)
                if index % 7 == 0 { previous = id }
            }
            try store.setRoot("the newest note", to: previous ?? ObjectID(1))
            try store.close()
        }
        func check(_ store: Store) throws {
            for (id, expected) in written {
                let record = try #require(try store.get(id), "object \(id), seed \(seed)")
                #expect(record.payload == expected.payload, "seed \(seed)")
                #expect(record.references == expected.references, "seed \(seed)")
            }
            #expect(try store.root(named: "the newest note") != nil)
        }
        let reopened = try directory.open(options: encryptedOptions())
        #expect(reopened.segmentsLoadedFromHints > 0, "hints are read, decrypted")
        try check(reopened)
        try reopened.rewriteAllSegments()
        try check(reopened)
        try reopened.close()
        let again = try directory.open(options: encryptedOptions())
        try check(again)
        try again.close()
        let report = try Store.verify(at: directory.path, cipher: testCipher())
        #expect(report.problems.isEmpty, "\(report.problems)")
        #expect(report.liveObjects == written.count)
    }

    @Test("no byte sequence of a payload or a root name appears in any file of an encrypted store")
    func noPlaintextOnDisk() throws {
        let seed = testSeed("EncryptedStoreTests.noPlaintextOnDisk", default: 0xE2)
        let directory = TemporaryStore("encrypted-scan")
        directory.verifies(with: testCipher())
        var markers: [[UInt8]] = []
        let rootName = "a root name that must stay secret"
        do {
            let store = try directory.open(options: encryptedOptions())
            for index in 0..<2_000 {
                let (payload, marker) = markedPayload(index, seed: seed)
                let id = try store.put(typeTag: 2, payload: payload)
                markers.append(marker)
                if index == 5 { try store.setRoot(rootName, to: id) }
            }
            try store.compact()
            try store.rewriteAllSegments()
            for index in 2_000..<2_100 {
                let (payload, marker) = markedPayload(index, seed: seed)
                try store.put(typeTag: 2, payload: payload)
                markers.append(marker)
            }
            try store.close()
        }
        let files = everyFile(under: directory.path)
        #expect(files.contains { $0.path.hasSuffix(".hint") }, "hint files are scanned too")
        #expect(files.contains { $0.path.hasSuffix(".dict") }, "dictionary files are scanned too")
        let secrets = markers + [Array(rootName.utf8), Array("the quick brown fox".utf8)]
        for file in files {
            for secret in secrets {
                #expect(!contains(file.bytes, secret), "\(file.path) holds plaintext (seed \(seed))")
            }
        }
    }

    @Test("a missing key, a wrong key and a cipher for an unencrypted store are refused before anything is read")
    func keyChecks() throws {
        let directory = TemporaryStore("encrypted-keys")
        directory.verifies(with: testCipher())
        do {
            let store = try directory.open(options: encryptedOptions())
            try store.put(typeTag: 1, payload: [1, 2, 3])
            try store.close()
        }
        #expect(throws: LogStoreError.self) { try Store.open(at: directory.path, options: testOptions()) }
        do {
            _ = try Store.open(at: directory.path, options: testOptions())
        } catch {
            #expect(error.code == .keyRequired)
        }
        do {
            _ = try Store.open(at: directory.path, options: encryptedOptions(cipher: testCipher(9)))
            Issue.record("a wrong key opened the store")
        } catch {
            #expect(error.code == .wrongKey)
        }
        do {
            _ = try Store.verify(at: directory.path, cipher: testCipher(9))
            Issue.record("verify took a wrong key")
        } catch {
            #expect(error.code == .wrongKey)
        }
        var readOnly = encryptedOptions(cipher: testCipher(9))
        readOnly.readOnly = true
        do {
            _ = try Store.open(at: directory.path, options: readOnly)
            Issue.record("a wrong key opened the store read-only")
        } catch {
            #expect(error.code == .wrongKey)
        }
        let plain = TemporaryStore("plain-with-key")
        try plain.open(options: testOptions()).close()
        do {
            _ = try Store.open(at: plain.path, options: encryptedOptions())
            Issue.record("a cipher opened an unencrypted store")
        } catch {
            #expect(error.code == .notEncrypted)
        }
    }
}

@Suite("Encrypted stores: readers beside a writer")
struct EncryptedReaderTests {
    @Test("a read-only open beside the writer follows its batches, segment rolls and compactions")
    func readerFollowsWriter() throws {
        let seed = testSeed("EncryptedReaderTests.readerFollowsWriter", default: 0xE3)
        let directory = TemporaryStore("encrypted-follow")
        directory.verifies(with: testCipher())
        var options = encryptedOptions()
        options.compaction.background = false
        let writer = try directory.open(options: options)
        var written: [ObjectID: [UInt8]] = [:]
        for index in 0..<200 {
            let payload = markedPayload(index, seed: seed).payload
            written[try writer.put(typeTag: 1, payload: payload)] = payload
        }
        var readOnly = encryptedOptions()
        readOnly.readOnly = true
        let reader = try Store.open(at: directory.path, options: readOnly)
        defer { try? reader.close() }
        for round in 0..<4 {
            for index in 0..<400 {
                let payload = markedPayload(round * 1_000 + index, seed: seed).payload
                let id = try writer.put(typeTag: 1, payload: payload)
                written[id] = payload
                if index % 3 == 0, let old = written.keys.first(where: { $0 != id }) {
                    try writer.delete(old)
                    written[old] = nil
                }
            }
            if round == 2 { try writer.compact() }
            try reader.refresh()
            for (id, payload) in written {
                #expect(try reader.get(id)?.payload == payload, "object \(id), round \(round), seed \(seed)")
            }
        }
        try writer.close()
    }
}

@Suite("Encrypted stores: batches")
struct EncryptedBatchTests {
    @Test("batches of many frames read back after a reopen that scans every segment")
    func manyFrameBatches() throws {
        let seed = testSeed("EncryptedBatchTests", default: 0xE6)
        let directory = TemporaryStore("encrypted-batches")
        directory.verifies(with: testCipher())
        var written: [ObjectID: Record] = [:]
        do {
            let store = try directory.open(options: encryptedOptions())
            var previous: [ObjectID] = []
            for round in 0..<60 {
                var batch = WriteBatch()
                for index in 0..<(1 + round % 17) {
                    let record = Record(
                        id: store.newID(), typeTag: UInt32(index % 3), references: Array(previous.suffix(index % 4)),
                        payload: markedPayload(round * 100 + index, seed: seed).payload)
                    batch.put(record)
                    written[record.id] = record
                    previous.append(record.id)
                }
                batch.setRoot("round \(round % 5)", to: previous[previous.count - 1])
                try store.write(batch)
            }
            try store.close()
        }
        for name in directory.fileNames() where name.hasSuffix(".hint") {
            try FileManager.default.removeItem(atPath: directory.path + "/" + name)
        }
        let store = try directory.open(options: encryptedOptions())
        for (id, record) in written { #expect(try store.get(id) == record, "object \(id), seed \(seed)") }
        try store.close()
    }
}
