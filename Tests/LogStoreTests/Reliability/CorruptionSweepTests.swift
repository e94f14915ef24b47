import Foundation
import LogStoreExamples
import TestSupport
import Testing

@testable @_spi(Testing) import LogStore

/// Every file of a small store (segments sealed and being written, hint files, the dictionary, the
/// manifest, the identity file) damaged one byte at a time and cut at every length: `verify` reports each
/// change, an open either refuses, recovers with a report, or reads what was written; no read ever
/// returns different data, and nothing crashes. Every 29th byte and length in the suite, all of them with
/// `LOGSTORE_RELIABILITY=full`. Each sweep runs over an unencrypted and an encrypted store (whose open and
/// verify have its key).
@Suite(.serialized) struct CorruptionSweepTests {
    /// The store's files and what it holds.
    struct Original: Sendable {
        var files: [(name: String, bytes: [UInt8])] = []
        var records: [ObjectID: Record] = [:]
        var roots: [String: ObjectID] = [:]
        /// Whether the store is encrypted (with ``testCipher(_:)``).
        var encrypted = false
    }

    static func options(encrypted: Bool) -> StoreOptions {
        var options = testOptions(segmentSize: LogStoreLimits.minSegmentSize)
        options.compaction.background = false
        if encrypted { options.cipher = testCipher() }
        return options
    }

    /// Builds the store: a sealed compaction output compressed against a dictionary (with its hint), a
    /// sealed segment compacted after overwrites, and the segment being written.
    static func makeOriginal(encrypted: Bool = false) throws -> Original {
        let directory = TemporaryStore("sweep-source")
        if encrypted { directory.verifies(with: testCipher()) }
        let store = try Store.open(at: directory.path, options: options(encrypted: encrypted))
        var original = Original()
        original.encrypted = encrypted
        var random = SplitMix64(seed: 1_234)
        func put(_ count: Int) throws {
            for _ in 0..<count {
                let id = store.newID()
                let text =
                    "{\"id\":\(id.rawValue),\"name\":\"item\",\"tags\":[\"x\",\"y\"],\"n\":\(random.next() % 1000)}"
                let payload = Array(String(repeating: text, count: 1 + Int(random.next() % 4)).utf8)
                let references = original.records.keys.sorted().suffix(2).filter { _ in random.next() % 2 == 0 }
                let record = Record(
                    id: id, typeTag: 1 + UInt32(id.rawValue % 2), references: references, payload: payload)
                try store.put(record)
                original.records[id] = record
            }
        }
        try put(30)
        try store.setRoot("first", to: ObjectID(1))
        original.roots["first"] = ObjectID(1)
        _ = try store.rewriteAllSegments()
        try put(15)
        for id in original.records.keys.sorted().prefix(8) {
            let record = Record(id: id, typeTag: 3, references: [], payload: Array("overwritten \(id.rawValue)".utf8))
            try store.put(record)
            original.records[id] = record
        }
        _ = try store.compact()
        try put(10)
        try store.close()
        for name in directory.fileNames() {
            original.files.append(
                (name, [UInt8](try Data(contentsOf: URL(fileURLWithPath: directory.path + "/" + name)))))
        }
        return original
    }

    /// What happened to one damaged copy.
    struct Finding {
        var verifyDetected = false
        var openRefused = false
        var recoveredWithReport = false
        var silent: [String] = []
    }

    /// Writes the files with file `index` replaced by `bytes`, verifies, opens, and compares every read.
    static func examine(_ original: Original, file index: Int, bytes: [UInt8]) throws -> Finding {
        let copy = TemporaryStore("sweep", unverifiedBecause: "a copy with a damaged file")
        for (position, file) in original.files.enumerated() {
            try Data(position == index ? bytes : file.bytes).write(
                to: URL(fileURLWithPath: copy.path + "/" + file.name))
        }
        var finding = Finding()
        do {
            let report = try Store.verify(at: copy.path, cipher: original.encrypted ? testCipher() : nil)
            finding.verifyDetected = !report.isSound
        } catch {
            finding.verifyDetected = true
        }
        let store: Store
        do {
            store = try Store.open(at: copy.path, options: options(encrypted: original.encrypted))
        } catch {
            finding.openRefused = true
            return finding
        }
        defer { try? store.close() }
        finding.recoveredWithReport = store.recovery != nil
        for (id, record) in original.records {
            let found: Record?
            do { found = try store.get(id) } catch { continue }  // refused: detected
            guard let found else {
                if !finding.recoveredWithReport { finding.silent.append("object \(id) missing without a report") }
                continue
            }
            if found != record { finding.silent.append("object \(id) reads different data") }
        }
        if let ids = try? store.ids(), let extra = ids.first(where: { original.records[$0] == nil }) {
            finding.silent.append("object \(extra) appeared")
        }
        for (name, id) in original.roots {
            do {
                let root = try store.root(named: name)
                if root != id, root != nil || !finding.recoveredWithReport {
                    finding.silent.append("root \(name) names \(root.map { "\($0)" } ?? "nothing")")
                }
            } catch {
                continue  // refused: detected
            }
        }
        return finding
    }

    struct Tally: CustomStringConvertible {
        var damaged = 0
        var detectedByVerify = 0
        var refusedByOpen = 0
        var recoveredWithReport = 0
        var silent: [String] = []
        var undetected: [String] = []

        mutating func add(_ finding: Finding, _ context: String) {
            damaged += 1
            if finding.verifyDetected { detectedByVerify += 1 } else { undetected.append(context) }
            if finding.openRefused { refusedByOpen += 1 }
            if finding.recoveredWithReport { recoveredWithReport += 1 }
            silent += finding.silent.prefix(2).map { "\(context): \($0)" }
        }

        var description: String {
            "\(damaged) damaged copies, \(detectedByVerify) detected by verify, \(refusedByOpen) refused by open, "
                + "\(recoveredWithReport) recovered with a report, \(silent.count) silently different"
        }
    }

    static var stride: Int { ReliabilityBudget.isFull ? 1 : 29 }

    @Test(arguments: [false, true])
    func everyFlippedByteIsDetected(encrypted: Bool) throws {
        let original = try Self.makeOriginal(encrypted: encrypted)
        // The fuzz corpus (Tests/Fixtures/FuzzCorpus) holds these files: LOGSTORE_WRITE_FUZZ_CORPUS=1 writes
        // them again.
        if !encrypted, ProcessInfo.processInfo.environment["LOGSTORE_WRITE_FUZZ_CORPUS"] != nil {
            for file in original.files where [".seg", ".hint", ".dict"].contains(where: file.name.hasSuffix) {
                try Data(file.bytes).write(
                    to: URL(fileURLWithPath: MutationFuzzer.corpusDirectory + "/v2-" + file.name))
            }
        }
        var tally = Tally()
        for (index, file) in original.files.enumerated() {
            for offset in Swift.stride(from: 0, to: file.bytes.count, by: Self.stride) {
                var bytes = file.bytes
                bytes[offset] ^= 0x01 << UInt8(offset % 8)
                tally.add(try Self.examine(original, file: index, bytes: bytes), "\(file.name) byte \(offset) flipped")
            }
        }
        print(
            "corruption sweep\(encrypted ? " (encrypted)" : ""), flipped bytes "
                + "(\(original.files.map { "\($0.name) \($0.bytes.count) B" })): \(tally)")
        #expect(tally.silent.isEmpty, "\(tally.silent.prefix(10))")
        #expect(tally.undetected.isEmpty, "\(tally.undetected.count) undetected: \(tally.undetected.prefix(10))")
    }

    @Test(arguments: [false, true])
    func everyTruncationIsDetected(encrypted: Bool) throws {
        let original = try Self.makeOriginal(encrypted: encrypted)
        var tally = Tally()
        for (index, file) in original.files.enumerated() {
            for length in Swift.stride(from: 0, to: file.bytes.count, by: Self.stride) {
                tally.add(
                    try Self.examine(original, file: index, bytes: Array(file.bytes.prefix(length))),
                    "\(file.name) cut to \(length)")
            }
        }
        print("corruption sweep\(encrypted ? " (encrypted)" : ""), truncated files: \(tally)")
        #expect(tally.silent.isEmpty, "\(tally.silent.prefix(10))")
        #expect(tally.undetected.isEmpty, "\(tally.undetected.count) undetected: \(tally.undetected.prefix(10))")
    }
}
