import Foundation
import TestSupport
import Testing

@testable @_spi(Testing) import LogStore

/// A damaged or missing segment manifest is an error, never a note, and is never rewritten by an open:
/// without it a lost segment could not be told from one compaction removed.
@Suite struct ManifestTests {
    /// A closed store of at least three segments.
    func storeOfThreeSegments(_ label: String) throws -> TemporaryStore {
        let directory = TemporaryStore(
            label, unverifiedBecause: "each test damages or removes the manifest, or removes a segment it lists")
        let store = try directory.open(options: testOptions())
        for index in 0..<300 { try store.put(typeTag: 1, payload: payloadBytes(600, seed: UInt64(index))) }
        try store.close()
        #expect(directory.segmentFiles().count >= 3)
        return directory
    }

    @Test func aDamagedManifestIsAnErrorAndIsLeftAsItIs() throws {
        let directory = try storeOfThreeSegments("manifest-damaged")
        let path = directory.path + "/SEGMENTS"
        var bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: path)))
        for index in 24..<bytes.count { bytes[index] = 0xEE }  // garbage over the numbers and checksum
        try Data(bytes).write(to: URL(fileURLWithPath: path))
        try FileManager.default.removeItem(atPath: directory.segmentFiles()[1])
        for readOnly in [false, true] {
            let error = try #require(openError(directory.path, readOnly: readOnly))
            #expect(error.code == .corruptManifest && error.file == path && error.offset != nil, "\(error)")
        }
        let report = try Store.verify(at: directory.path)
        #expect(report.problems.contains { $0.file == path }, "\(report.problems)")
        #expect([UInt8](try Data(contentsOf: URL(fileURLWithPath: path))) == bytes, "never rewritten")
    }

    @Test func aMissingManifestInAStoreWithSegmentsIsAnError() throws {
        let directory = try storeOfThreeSegments("manifest-missing")
        let path = directory.path + "/SEGMENTS"
        try FileManager.default.removeItem(atPath: path)
        for readOnly in [false, true] {
            let error = try #require(openError(directory.path, readOnly: readOnly))
            #expect(error.code == .corruptManifest && error.file == path, "\(error)")
        }
        #expect(!(try Store.verify(at: directory.path).isSound))
        #expect(!directory.fileNames().contains("SEGMENTS"))
    }

    /// Manifests of version 1 (no clean-close record) are still read: a segment they list must be there.
    @Test func aVersionOneManifestIsStillRead() throws {
        let directory = try storeOfThreeSegments("manifest-v1")
        let numbers = directory.segmentFiles().compactMap {
            LogFormat.segmentNumber(fromFileName: ($0 as NSString).lastPathComponent)
        }
        var bytes = Array("LOGSTMAN".utf8) + [1, 0, 0, 0]
        for value in [UInt32(numbers.count)] { bytes += withUnsafeBytes(of: value.littleEndian, Array.init) }
        bytes += withUnsafeBytes(of: UInt64(0).littleEndian, Array.init)
        for number in numbers { bytes += withUnsafeBytes(of: number.littleEndian, Array.init) }
        let checksum = bytes.withUnsafeBytes { Checksum.xxh3($0) }
        bytes += withUnsafeBytes(of: checksum.littleEndian, Array.init)
        try Data(bytes).write(to: URL(fileURLWithPath: directory.path + "/SEGMENTS"))
        let store = try directory.open(options: testOptions())
        #expect(try store.count() == 300)
        try store.close()
        try FileManager.default.removeItem(atPath: directory.segmentFiles()[1])
        try Data(bytes).write(to: URL(fileURLWithPath: directory.path + "/SEGMENTS"))
        #expect(openError(directory.path, readOnly: true)?.code == .missingSegment)
    }
}
