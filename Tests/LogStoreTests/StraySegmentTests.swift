import Foundation
import TestSupport
import Testing

@testable @_spi(Testing) import LogStore

/// A file named like a segment that cannot be one is reported for what it is, naming it.
@Suite struct StraySegmentTests {
    @Test func aStrayShortFileAfterAnUnsealedSegmentIsNamedAsTooShort() throws {
        let directory = TemporaryStore("stray-segment")
        var options = testOptions()
        options.compaction.background = false
        let store = try directory.open(options: options)
        while directory.segmentFiles().count < 3 { try store.put(typeTag: 1, payload: payloadBytes(2000, seed: 1)) }
        try store.close()
        let stray = directory.path + "/" + LogFormat.segmentFileName(9)
        try Data([1, 2, 3, 4]).write(to: URL(fileURLWithPath: stray))

        var readOnly = options
        readOnly.readOnly = true
        for options in [options, readOnly] {
            let error = try #require(throws: LogStoreError.self) {
                try directory.open(options: options)
            }
            #expect(error.code == .corruptSegmentHeader, "\(error)")
            #expect(error.file == stray, "\(error)")
            #expect(error.message.contains("only 4 bytes: too short to be a segment"), "\(error)")
        }
        #expect(try Data(contentsOf: URL(fileURLWithPath: stray)) == Data([1, 2, 3, 4]))

        // Verify names it as the one problem; the segments before it are sound.
        let report = try Store.verify(at: directory.path)
        #expect(report.problems.count == 1, "\(report.problems)")
        #expect(report.problems.first?.file == stray)
        #expect(report.segments >= 3)

        // Moved away, the store opens as it was.
        try FileManager.default.removeItem(atPath: stray)
        let reopened = try directory.open(options: options)
        #expect(try reopened.count() > 0)
        try reopened.close()
    }
}
