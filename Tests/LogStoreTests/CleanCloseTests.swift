import Foundation
@_spi(Engine) import LogStoreFormat
import TestSupport
import Testing

@testable @_spi(Testing) import LogStore

#if canImport(Glibc)
    import Glibc
#endif

/// After a clean close nothing at the end of the log can be torn: damage or a change of size there is
/// corruption, refused with file and offset, never cut. Only after a crash is a tail cut.
@Suite struct CleanCloseTests {
    /// A cleanly closed store of one segment; returns it, its segment and the end of each batch.
    func closedStore(_ label: String) throws -> (TemporaryStore, String, [Int]) {
        let directory = TemporaryStore(
            label, unverifiedBecause: "each test changes the last segment after the clean close")
        let store = try directory.open(options: testOptions(segmentSize: 1 << 20))
        for index in 0..<20 { try store.put(typeTag: 1, payload: payloadBytes(200, seed: UInt64(index))) }
        try store.close()
        let path = try #require(directory.segmentFiles().last)
        return (directory, path, try batchEnds(path))
    }

    /// The offsets where the batches of segment `path` end.
    func batchEnds(_ path: String) throws -> [Int] {
        let data = [UInt8](try Data(contentsOf: URL(fileURLWithPath: path)))
        var ends: [Int] = []
        data.withUnsafeBytes { raw in
            _ = SegmentScanner(bytes: raw).scan { frame in
                if frame.flags.contains(.commit) { ends.append(frame.offset + frame.length) }
            }
        }
        return ends
    }

    func rewrite(_ path: String, _ change: (inout [UInt8]) -> Void) throws {
        var data = [UInt8](try Data(contentsOf: URL(fileURLWithPath: path)))
        change(&data)
        try Data(data).write(to: URL(fileURLWithPath: path))
    }

    @Test func aFlippedByteInTheLastBatchAfterACleanCloseIsCorruption() throws {
        let (directory, path, ends) = try closedStore("clean-flip")
        let lastBatch = ends[ends.count - 2]
        let before = try Data(contentsOf: URL(fileURLWithPath: path))
        try rewrite(path) { $0[lastBatch + 50] ^= 0x5A }
        let damaged = try Data(contentsOf: URL(fileURLWithPath: path))
        for readOnly in [true, false] {
            let error = try #require(openError(directory.path, readOnly: readOnly, segmentSize: 1 << 20))
            #expect(error.code == .corruptFrame, "\(error)")
            #expect(error.file == path)
            #expect(error.offset == UInt64(lastBatch))
        }
        #expect(try Data(contentsOf: URL(fileURLWithPath: path)) == damaged, "nothing was cut")
        #expect(!directory.fileNames().contains { $0.contains("torn") })
        let report = try Store.verify(at: directory.path)
        #expect(report.problems.contains { $0.file == path && $0.offset == UInt64(lastBatch) }, "\(report.problems)")
        #expect(before != damaged)
    }

    @Test func aSegmentTruncatedAtABatchBoundaryAfterACleanCloseIsCorruption() throws {
        let (directory, path, ends) = try closedStore("clean-truncated")
        let boundary = ends[ends.count - 3]
        try rewrite(path) { $0.removeSubrange(boundary...) }
        for readOnly in [true, false] {
            let error = try #require(openError(directory.path, readOnly: readOnly, segmentSize: 1 << 20))
            #expect(error.code == .corruptFrame, "\(error)")
            #expect(error.file == path && error.offset == UInt64(boundary), "\(error)")
            #expect(error.message.contains("lost"), "\(error)")
        }
        let report = try Store.verify(at: directory.path)
        #expect(!report.isSound)
        #expect(report.problems.contains { $0.file == path && $0.offset == UInt64(boundary) }, "\(report.problems)")
    }

    @Test func bytesAppendedAfterACleanCloseAreCorruptionNotATornTail() throws {
        let (directory, path, ends) = try closedStore("clean-appended")
        try rewrite(path) { $0 += [1, 2, 0, 0, 9, 9, 9] }
        let error = try #require(openError(directory.path, segmentSize: 1 << 20))
        #expect(error.code == .corruptFrame && error.file == path && error.offset == UInt64(ends.last ?? 0), "\(error)")
        #expect(!directory.fileNames().contains { $0.contains("torn") })
        #expect(!(try Store.verify(at: directory.path).isSound))
    }

    /// A killed writer leaves no clean-close record: its torn tail is cut. Once the store is closed
    /// cleanly, the same bytes at the end are corruption; an open for writing removes the record again.
    @Test func onlyACrashLetsATornTailBeCut() throws {
        let directory = TemporaryStore("clean-crash")
        let child = try RunningTool(["crash-writer", directory.path, "--seed", "7"], binary: .crashHarness)
        _ = child.waitForFirstLine(timeout: 60)
        usleep(100_000)
        child.killNow()
        _ = child.finish()
        let garbage: [UInt8] = [1, 2, 0, 0, 9, 9, 9]
        let path = try #require(directory.segmentFiles().last)
        try rewrite(path) { $0 += garbage }
        let afterKill = try directory.open()
        #expect(afterKill.recovery?.savedTo != nil, "the torn tail is cut and kept")
        try afterKill.close()
        let size = try #require(FileManager.default.attributesOfItem(atPath: path)[.size] as? Int)

        // Closed cleanly: the same bytes at the end are refused, and left as they are.
        try rewrite(path) { $0 += garbage }
        let error = try #require(openError(directory.path, segmentSize: 1 << 20))
        #expect(error.code == .corruptFrame && error.file == path && error.offset == UInt64(size), "\(error)")
        try rewrite(path) { $0.removeLast(garbage.count) }

        // Opened for writing and never closed (as a crash): a tail is a torn tail again.
        do { _ = try directory.open() }
        try rewrite(path) { $0 += garbage }
        let reopened = try directory.open()
        #expect(reopened.recovery?.cutOffset == UInt64(size), "\(String(describing: reopened.recovery))")
        try reopened.close()
    }

    /// A segment the manifest lists was created durably before it was listed: found empty, its data is
    /// lost; it is not an interrupted creation to remove.
    @Test func aListedSegmentTruncatedToZeroIsAnError() throws {
        let directory = TemporaryStore(
            "listed-empty", unverifiedBecause: "a segment the manifest lists is truncated to zero bytes")
        do {
            let store = try directory.open(options: testOptions())
            for index in 0..<200 { try store.put(typeTag: 1, payload: payloadBytes(600, seed: UInt64(index))) }
            try store.close()
        }
        try forgetCleanClose(directory.path)  // even after a crash
        let path = try #require(directory.segmentFiles().last)
        try Data().write(to: URL(fileURLWithPath: path))
        for readOnly in [true, false] {
            let error = try #require(openError(directory.path, readOnly: readOnly, segmentSize: 1 << 20))
            #expect(error.code == .corruptSegmentHeader && error.file == path, "\(error)")
            #expect(error.message.contains("manifest lists"), "\(error)")
        }
        #expect(FileManager.default.fileExists(atPath: path))
        let report = try Store.verify(at: directory.path)
        #expect(report.problems.contains { $0.file == path }, "\(report.problems) \(report.notes)")
    }
}
