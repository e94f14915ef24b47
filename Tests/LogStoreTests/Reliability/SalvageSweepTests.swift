import Foundation
import LogStoreExamples
@_spi(Engine) import LogStoreFormat
@_spi(Engine) import LogStoreSystem
import TestSupport
import Testing

@testable @_spi(Testing) import LogStore

/// Salvage over the corruption sweep's damaged stores (`CorruptionSweepTests`): each file of a small store
/// damaged one byte at a time and cut at every length, then salvaged. For every copy:
/// - the damaged store is not changed (every file's bytes the same);
/// - the salvaged store is sound (`verify`);
/// - every object is copied as last committed, or named lost, or its record lies in a damaged range whose
///   contents are unknown (salvaged ∪ reported lost = all);
/// - every object whose record is outside every reported damaged range is copied exactly;
/// - nothing copied differs from what was committed unless the report says so (an older version, a lost
///   deletion, a placeholder);
/// - a flipped byte of a segment lies in a reported damaged range.
///
/// Every 31st byte and length, all of them with `LOGSTORE_RELIABILITY=full`.
@Suite(.serialized) struct SalvageSweepTests {
    /// Where each object's record is in the undamaged store: file name and byte range.
    static func locations(of original: CorruptionSweepTests.Original) throws -> [ObjectID: (String, Range<UInt64>)] {
        let copy = TemporaryStore("salvage-locations", unverifiedBecause: "a copy opened read-only")
        for file in original.files {
            try Data(file.bytes).write(to: URL(fileURLWithPath: copy.path + "/" + file.name))
        }
        var options = CorruptionSweepTests.options(encrypted: false)
        options.readOnly = true
        let store = try Store.open(at: copy.path, options: options)
        defer { try? store.close() }
        return store.state.withLock { state in
            var locations: [ObjectID: (String, Range<UInt64>)] = [:]
            state.forEachDurable { id, entry in
                let name = LogFormat.segmentFileName(entry.segment)
                locations[ObjectID(id)] = (name, UInt64(entry.offset)..<UInt64(entry.offset) + UInt64(entry.length))
            }
            return locations
        }
    }

    /// Salvages the store made of `original`'s files with file `index` replaced by `bytes`, and returns
    /// what is wrong.
    static func examine(
        _ original: CorruptionSweepTests.Original, locations: [ObjectID: (String, Range<UInt64>)], file index: Int,
        bytes: [UInt8], flipped: Int?
    ) throws -> [String] {
        let damaged = TemporaryStore("salvage-source", unverifiedBecause: "a copy with a damaged file")
        for (position, file) in original.files.enumerated() {
            try Data(position == index ? bytes : file.bytes).write(
                to: URL(fileURLWithPath: damaged.path + "/" + file.name))
        }
        let before = damaged.fileNames().map { name in
            (name, try? Data(contentsOf: URL(fileURLWithPath: damaged.path + "/" + name)))
        }
        let output = TemporaryStore("salvage-output", unverifiedBecause: "checked here, with its report")
        let destination = output.path + "/salvaged"
        var wrong: [String] = []
        let outcome = Result { () throws(LogStoreError) in try Store.salvage(from: damaged.path, to: destination) }
        let report: SalvageReport
        switch outcome {
        case .success(let value):
            report = value
        case .failure(let error):
            // Not recognizable as a store at all: refused, and nothing written.
            if error.code == .notAStore || error.code == .unsupportedVersion {
                if FileManager.default.fileExists(atPath: destination) {
                    wrong.append("refused, but wrote \(destination)")
                }
                return wrong
            }
            throw error
        }
        let after = damaged.fileNames().map { name in
            (name, try? Data(contentsOf: URL(fileURLWithPath: damaged.path + "/" + name)))
        }
        if before.map(\.0) != after.map(\.0) || zip(before, after).contains(where: { $0.1 != $1.1 }) {
            wrong.append("the damaged store was changed")
        }
        let verification = try Store.verify(at: destination)
        if !verification.isSound { wrong.append("the salvaged store is not sound: \(verification.problems.prefix(2))") }
        let copy = try Store.open(at: destination, options: StoreOptions(createIfMissing: false, readOnly: true))
        defer { try? copy.close() }
        let lost = Dictionary(report.lostObjects.map { ($0.id, $0.loss) }, uniquingKeysWith: { first, _ in first })
        let unknown = report.damagedRanges.filter { !$0.isIdentified }
        func inRange(_ location: (String, Range<UInt64>), _ ranges: [SalvageReport.DamagedRange]) -> Bool {
            ranges.contains { range in
                // An empty range at a file's end: it was cut there, and how much followed is unknown.
                range.file.hasSuffix("/" + location.0) && range.start < location.1.upperBound
                    && (range.start == range.end || location.1.lowerBound < range.end)
            }
        }
        for (id, record) in original.records {
            let found = try copy.get(id)
            let location = locations[id]
            let untouched = location.map { !inRange($0, report.damagedRanges) } ?? false
            if found == record {
                if let loss = lost[id] { wrong.append("object \(id) copied as committed but reported \(loss)") }
                continue
            }
            var unreadable = false
            if case .unreadable = lost[id] { unreadable = true }
            if untouched, !unreadable {
                wrong.append("object \(id) is outside every damaged range but not copied as committed")
            }
            if let found, lost[id] == nil, found.typeTag != SalvageReport.placeholderTypeTag {
                wrong.append("object \(id) copied with other contents, not reported")
            }
            if found?.typeTag == SalvageReport.placeholderTypeTag, !report.placeholders.contains(id) {
                wrong.append("object \(id) is a placeholder the report does not list")
            }
            if lost[id] == nil, !(location.map { inRange($0, unknown) } ?? false) {
                wrong.append("object \(id) not copied, not reported lost, not in a range of unknown contents")
            }
        }
        for id in try copy.ids() where original.records[id] == nil {
            wrong.append("object \(id) appeared")
        }
        for (name, id) in original.roots where try copy.root(named: name) != id {
            if !report.lostRootChanges.contains(where: { $0.name == name }), unknown.isEmpty {
                wrong.append("root \(name) differs, not reported")
            }
        }
        if let flipped, original.files[index].name.hasSuffix(".seg") {
            let name = original.files[index].name
            let offset = UInt64(flipped)
            if !report.damagedRanges.contains(where: {
                $0.file.hasSuffix("/" + name) && $0.start <= offset && offset < $0.end
            }) {
                wrong.append("the flipped byte is in no reported damaged range")
            }
        }
        if !wrong.isEmpty { wrong.append("report: \(report.damagedRanges), \(report.lostObjects)") }
        return wrong
    }

    static var stride: Int { ReliabilityBudget.isFull ? 1 : 31 }

    @Test func salvageOfEveryFlippedByte() throws {
        let original = try CorruptionSweepTests.makeOriginal()
        let locations = try Self.locations(of: original)
        var wrong: [String] = []
        var copies = 0
        for (index, file) in original.files.enumerated() {
            for offset in Swift.stride(from: 0, to: file.bytes.count, by: Self.stride) {
                var bytes = file.bytes
                bytes[offset] ^= 0x01 << UInt8(offset % 8)
                copies += 1
                wrong += try Self.examine(original, locations: locations, file: index, bytes: bytes, flipped: offset)
                    .map { "\(file.name) byte \(offset) flipped: \($0)" }
            }
        }
        print("salvage sweep, flipped bytes: \(copies) damaged copies salvaged, \(wrong.count) findings")
        #expect(wrong.isEmpty, "\(wrong.prefix(10))")
    }

    @Test func salvageOfEveryTruncation() throws {
        let original = try CorruptionSweepTests.makeOriginal()
        let locations = try Self.locations(of: original)
        var wrong: [String] = []
        var copies = 0
        for (index, file) in original.files.enumerated() {
            for length in Swift.stride(from: 0, to: file.bytes.count, by: Self.stride) {
                copies += 1
                wrong += try Self.examine(
                    original, locations: locations, file: index, bytes: Array(file.bytes.prefix(length)), flipped: nil
                ).map { "\(file.name) cut to \(length): \($0)" }
            }
        }
        print("salvage sweep, truncated files: \(copies) damaged copies salvaged, \(wrong.count) findings")
        #expect(wrong.isEmpty, "\(wrong.prefix(10))")
    }
}
