import Foundation
import TestSupport
import Testing

@testable @_spi(Testing) import LogStore

/// A writer that continues in a segment that held no frame when the store was opened (its creation
/// was the last thing before a crash) must count that segment's first sequence number like any other:
/// compaction drops a tombstone only when no other segment can hold an older copy of its object.
@Suite struct ContinuedSegmentTests {
    /// Incompressible bytes, so that sizes on disk are predictable.
    private func noise(_ count: Int) -> [UInt8] { (0..<count).map { _ in UInt8.random(in: 0...255) } }

    @Test func aTombstoneIsKeptWhileTheContinuedSegmentHoldsTheDeletedObject() throws {
        let directory = TemporaryStore("continued-segment")
        do {
            let store = try Store.open(at: directory.path, options: testOptions())
            try store.put(typeTag: 1, payload: [1])
            try store.close()
            try forgetCleanClose(directory.path)  // as a crash would leave it
        }
        // The crash came right after the writer sealed segment 1 and created segment 2.
        try sealSegmentFile(try #require(directory.segmentFiles().last))
        try Data(SegmentHeader(segmentNumber: 2, createdAtMilliseconds: 1).encoded()).write(
            to: URL(fileURLWithPath: directory.path + "/" + LogFormat.segmentFileName(2)))

        var options = testOptions()
        options.compaction.background = false
        var store = try Store.open(at: directory.path, options: options)
        // Segment 2: the object that is deleted later, among live records.
        let deleted = try store.put(typeTag: 2, payload: [2])
        while directory.segmentFiles().count < 3 { try store.put(typeTag: 3, payload: noise(6000)) }
        // Segment 3: its tombstone, and mostly garbage, so that compaction picks segment 3 and not 2.
        try store.delete(deleted)
        for _ in 0..<7 { try store.delete(try store.put(typeTag: 4, payload: noise(6000))) }
        while directory.segmentFiles().count < 4 { try store.put(typeTag: 3, payload: noise(6000)) }

        let report = try store.compactSegments(garbageRatio: 0.5, progress: nil)
        #expect(report.segmentsCompacted == 1)
        try store.close()
        store = try Store.open(at: directory.path, options: options)
        #expect(try store.get(deleted) == nil, "the deleted object came back")
        #expect(try Store.verify(at: directory.path).isSound)
        try store.close()
    }
}
