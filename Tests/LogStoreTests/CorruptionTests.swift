import Foundation
import LogStoreExamples
import TestSupport
import Testing

@testable @_spi(Testing) import LogStore

/// Damages a small store byte by byte and length by length: opening either refuses with a typed
/// error or recovers a valid prefix; no crash, and never a wrong payload.
@Suite struct CorruptionTests {
    /// A closed store of two segments, its records, and the bytes of each segment file.
    struct Fixture {
        let directory = TemporaryStore("corruption-source")
        var records: [ObjectID: Record] = [:]
        var segments: [(name: String, bytes: [UInt8])] = []

        init() throws {
            let store = try directory.open(options: testOptions(segmentSize: 1 << 16))
            var random = SplitMix64(seed: 42)
            while directory.segmentFiles().count < 2 || records.count < 120 {
                let payload = payloadBytes(
                    Int(random.next() % 900), seed: random.next(), compressible: records.count % 3 == 0)
                let references = records.isEmpty ? [] : [ObjectID(1 + random.next() % UInt64(records.count))]
                let id = try store.put(typeTag: UInt32(records.count % 3), references: references, payload: payload)
                records[id] = Record(
                    id: id, typeTag: UInt32(records.count % 3), references: references, payload: payload)
            }
            try store.close()
            segments = try directory.segmentFiles().map {
                (($0 as NSString).lastPathComponent, [UInt8](try Data(contentsOf: URL(fileURLWithPath: $0))))
            }
        }

        /// Writes the store into a new directory with segment `damaged` replaced by `bytes`.
        func damagedCopy(segment damaged: Int, bytes: [UInt8]) throws -> TemporaryStore {
            let copy = TemporaryStore("corruption", unverifiedBecause: "a copy with a damaged segment")
            for (index, segment) in segments.enumerated() {
                try Data(index == damaged ? bytes : segment.bytes).write(
                    to: URL(fileURLWithPath: copy.path + "/" + segment.name))
            }
            return copy
        }
    }

    /// Opens a damaged copy; returns whether it opened. Checks that no wrong payload is ever returned.
    func openAndCheck(_ copy: TemporaryStore, _ fixture: Fixture, damagedIsNewest: Bool, context: String) throws
        -> Bool
    {
        let store: Store
        do {
            store = try copy.open(options: testOptions(segmentSize: 1 << 16))
        } catch {
            let corruption: [LogStoreError.Code] = [.corruptFrame, .corruptSegmentHeader, .unsupportedVersion]
            #expect(corruption.contains(error.code), "\(context): \(error)")
            #expect(error.file != nil, "\(context): error names no file")
            return false
        }
        #expect(damagedIsNewest, "\(context): damage in a sealed segment was not refused")
        for (id, record) in fixture.records {
            if let found = try? store.get(id) { #expect(found == record, "\(context): wrong record \(id)") }
        }
        let visible = try store.ids()
        #expect(Set(visible).isSubset(of: Set(fixture.records.keys)), "\(context)")
        try store.close()
        return true
    }

    @Test func flippedBytesAreDetected() throws {
        let fixture = try Fixture()
        var checked = 0
        for (index, segment) in fixture.segments.enumerated() {
            let isNewest = index == fixture.segments.count - 1
            let count = segment.bytes.count
            let offsets = Set(
                Array(0..<min(count, 160)) + Array(max(0, count - 160)..<count)
                    + Array(stride(from: 0, to: count, by: 37)))
            for offset in offsets.sorted() {
                var bytes = segment.bytes
                bytes[offset] ^= 0x5A
                let copy = try fixture.damagedCopy(segment: index, bytes: bytes)
                let report = try Store.verify(at: copy.path)
                #expect(
                    !report.isSound || !report.notes.isEmpty, "segment \(index) offset \(offset): damage not reported")
                _ = try openAndCheck(copy, fixture, damagedIsNewest: isNewest, context: "flip \(index)@\(offset)")
                checked += 1
            }
        }
        #expect(checked > 1000)
    }

    @Test func truncationAtEveryLength() throws {
        let fixture = try Fixture()
        let newest = fixture.segments.count - 1
        let bytes = fixture.segments[newest].bytes
        for length in 0..<bytes.count {
            let copy = try fixture.damagedCopy(segment: newest, bytes: Array(bytes.prefix(length)))
            let opened = try openAndCheck(copy, fixture, damagedIsNewest: true, context: "truncate newest to \(length)")
            #expect(opened, "a truncated newest segment must recover, length \(length)")
        }
        let sealed = fixture.segments[0].bytes
        for length in stride(from: 0, to: sealed.count, by: 101) {
            let copy = try fixture.damagedCopy(segment: 0, bytes: Array(sealed.prefix(length)))
            let opened = try openAndCheck(
                copy, fixture, damagedIsNewest: false, context: "truncate sealed to \(length)")
            #expect(!opened)
        }
    }

    @Test func wrongMagicAndUnknownVersionAreTypedErrors() throws {
        let fixture = try Fixture()
        var wrongMagic = fixture.segments[0].bytes
        wrongMagic[0] = UInt8(ascii: "X")
        let copy = try fixture.damagedCopy(segment: 0, bytes: wrongMagic)
        #expect {
            try copy.open()
        } throws: { error in
            (error as? LogStoreError)?.code == .corruptSegmentHeader && (error as? LogStoreError)?.offset == 0
        }

        var newer = fixture.segments[0].bytes
        newer[8] = 9  // format version 9
        let checksum = newer.withUnsafeBytes { Checksum.xxh3($0.baseAddress!, count: 40) }
        withUnsafeBytes(of: checksum.littleEndian) { for index in 0..<8 { newer[40 + index] = $0[index] } }
        let newerCopy = try fixture.damagedCopy(segment: 0, bytes: newer)
        #expect {
            try newerCopy.open()
        } throws: { error in
            (error as? LogStoreError)?.code == .unsupportedVersion
        }
    }
}
