import Foundation
import Testing

@testable @_spi(Testing) import LogStore

/// The thread that prepares the region ahead of a writer: it fills the page cache, writes zeros ahead of
/// small writes when asked to, never touches what the writer claimed, and stops cleanly.
@Suite struct PageCacheFillerTests {
    @Test func fillsAheadWithoutChangingTheFileAndStops() throws {
        let directory = TemporaryDirectory("filler")
        let path = directory.path + "/file"
        let io = SystemIO(faults: nil)
        let fd = try io.open(path, flags: O_RDWR | O_CREAT | O_CLOEXEC)
        defer { io.close(fd) }
        let extended: UInt64 = 16 << 20
        try io.truncate(fd, to: extended, path: path)
        let data = [UInt8](repeating: 0xAB, count: 1 << 20)
        let filler = PageCacheFiller(fd: fd, io: io, window: 4 << 20, limit: extended)
        var written: UInt64 = 0
        while written < 8 << 20 {
            try data.withUnsafeBytes { try io.writeAll(fd, $0, at: written, path: path) }
            written += UInt64(data.count)
            filler.claim(through: written)
        }
        filler.stop()
        filler.stop()  // a second stop returns at once
        // The writer's bytes are intact, the rest of the extension still reads as zeros, and the size is
        // the one the owner set (cutting it back is the owner's job).
        #expect(try io.size(fd, path: path) == extended)
        #expect(try io.read(fd, count: 1 << 20, at: 7 << 20, path: path) == data)
        #expect(try io.read(fd, count: 1 << 20, at: 9 << 20, path: path).allSatisfy { $0 == 0 })
    }

    /// Small claimed writes with zeros on: the writer's bytes are all intact (zeros never land below a
    /// claim), and zeros are written ahead of the last write, within the window.
    @Test func zerosGoAheadOfSmallWritesAndNeverOverThem() throws {
        let directory = TemporaryDirectory("filler-zeros")
        let path = directory.path + "/file"
        let io = SystemIO(faults: nil)
        let fd = try io.open(path, flags: O_RDWR | O_CREAT | O_CLOEXEC)
        defer { io.close(fd) }
        let extended: UInt64 = 8 << 20
        try io.truncate(fd, to: extended, path: path)
        let filler = PageCacheFiller(fd: fd, io: io, window: 2 << 20, limit: extended, zeroFill: true)
        var written: UInt64 = 0
        var expected: [UInt8] = []
        for index in 0..<3000 {
            let record = payloadBytes(700 + index % 200, seed: UInt64(index)).map { $0 | 1 }  // never zero
            filler.claim(through: written + UInt64(record.count))
            try record.withUnsafeBytes { try io.writeAll(fd, $0, at: written, path: path) }
            written += UInt64(record.count)
            expected += record
        }
        // Let the thread catch up with the last claim, then stop it.
        filler.claim(through: written)
        var zeroEnd: UInt64 = 0
        for _ in 0..<500 {
            let regions = try #require(io.dataRegions(fd, after: written, size: extended))
            zeroEnd = regions.last?.upperBound ?? 0
            if zeroEnd >= written + PageCacheFiller.zeroWindow - PageCacheFiller.zeroChunk { break }
            usleep(10_000)
        }
        filler.stop()
        #expect(try io.read(fd, count: Int(written), at: 0, path: path) == expected)
        #expect(zeroEnd > written + PageCacheFiller.zeroGap, "zeros ahead of the writer")
        #expect(zeroEnd <= written + PageCacheFiller.zeroWindow + PageCacheFiller.zeroChunk)
        #expect(try io.read(fd, count: Int(extended - written), at: written, path: path).allSatisfy { $0 == 0 })
    }

    /// Large writes: no zeros (they would cost the disk twice the bytes for no gain).
    @Test func noZerosAheadOfLargeWrites() throws {
        let directory = TemporaryDirectory("filler-large")
        let path = directory.path + "/file"
        let io = SystemIO(faults: nil)
        let fd = try io.open(path, flags: O_RDWR | O_CREAT | O_CLOEXEC)
        defer { io.close(fd) }
        let extended: UInt64 = 16 << 20
        try io.truncate(fd, to: extended, path: path)
        let data = [UInt8](repeating: 0xCD, count: 256 << 10)
        // Large from the first claim: the filler judges the size only after eight claims.
        let filler = PageCacheFiller(fd: fd, io: io, window: 2 << 20, limit: extended, zeroFill: true)
        var written: UInt64 = 0
        for _ in 0..<20 {
            filler.claim(through: written + UInt64(data.count))
            try data.withUnsafeBytes { try io.writeAll(fd, $0, at: written, path: path) }
            written += UInt64(data.count)
            usleep(2_000)  // time for the thread to zero, were it to
        }
        filler.stop()
        let regions = try #require(io.dataRegions(fd, after: written, size: extended))
        #expect(regions.isEmpty, "no zeros after large writes: \(regions)")
        #expect(
            try io.read(fd, count: Int(written), at: 0, path: path) == [UInt8](repeating: 0xCD, count: Int(written)))
    }

    /// `dataRegions` lists what follows an offset, region by region, and nothing after the last one.
    @Test func dataRegionsListWhatFollowsAHole() throws {
        let directory = TemporaryDirectory("regions")
        let path = directory.path + "/file"
        let io = SystemIO(faults: nil)
        let fd = try io.open(path, flags: O_RDWR | O_CREAT | O_CLOEXEC)
        defer { io.close(fd) }
        let size: UInt64 = 4 << 20
        try io.truncate(fd, to: size, path: path)
        let block = [UInt8](repeating: 7, count: 64 << 10)
        for offset: UInt64 in [0, 1 << 20, 3 << 20] {
            try block.withUnsafeBytes { try io.writeAll(fd, $0, at: offset, path: path) }
        }
        try io.syncData(fd, path: path)
        let regions = try #require(io.dataRegions(fd, after: 64 << 10, size: size))
        let mebibyte: UInt64 = 1 << 20
        let blockSize = UInt64(block.count)
        let expected: [Range<UInt64>] = [
            mebibyte..<(mebibyte + blockSize), (3 * mebibyte)..<(3 * mebibyte + blockSize),
        ]
        #expect(regions == expected)
        #expect(io.dataRegions(fd, after: 3 * mebibyte + blockSize, size: size) == [])
        #expect(io.dataEnd(fd, size: size) == 64 << 10)
    }

    /// A claim that reaches a chunk the thread is zeroing waits for it: the zero write is slowed down
    /// (injected delay), the writer jumps far ahead and writes at once, and its bytes are intact.
    /// Without the wait, the late zeros would land on them.
    @Test func aClaimWaitsForTheZerosBeneathIt() throws {
        let directory = TemporaryDirectory("filler-claim-wait")
        let path = directory.path + "/file"
        let faults = FaultInjector()
        let io = SystemIO(faults: faults)
        let fd = try io.open(path, flags: O_RDWR | O_CREAT | O_CLOEXEC)
        defer { io.close(fd) }
        let extended: UInt64 = 8 << 20
        try io.truncate(fd, to: extended, path: path)
        faults.inject(.zeroFill, .delay(microseconds: 300_000), times: 1000)
        let filler = PageCacheFiller(fd: fd, io: io, window: 2 << 20, limit: extended, zeroFill: true)
        var written: UInt64 = 0
        let small = [UInt8](repeating: 0x11, count: 500)
        for _ in 0..<10 {
            filler.claim(through: written + UInt64(small.count))
            try small.withUnsafeBytes { try io.writeAll(fd, $0, at: written, path: path) }
            written += UInt64(small.count)
        }
        // Wait until the thread is inside its first (delayed) zero write.
        for _ in 0..<500 where faults.calls(.zeroFill) == 0 { usleep(1_000) }
        try #require(faults.calls(.zeroFill) > 0)
        let large = [UInt8](repeating: 0x22, count: 2 << 20)
        filler.claim(through: written + UInt64(large.count))
        try large.withUnsafeBytes { try io.writeAll(fd, $0, at: written, path: path) }
        filler.stop()
        #expect(try io.read(fd, count: large.count, at: written, path: path) == large)
    }

    /// A zero write that fails (no space, say) stops the zeros; the writer's bytes are untouched.
    @Test func aFailedZeroWriteStopsTheZeros() throws {
        let directory = TemporaryDirectory("filler-zero-failure")
        let path = directory.path + "/file"
        let faults = FaultInjector()
        let io = SystemIO(faults: faults)
        let fd = try io.open(path, flags: O_RDWR | O_CREAT | O_CLOEXEC)
        defer { io.close(fd) }
        let extended: UInt64 = 8 << 20
        try io.truncate(fd, to: extended, path: path)
        faults.inject(.zeroFill, .error(ENOSPC))
        let filler = PageCacheFiller(fd: fd, io: io, window: 2 << 20, limit: extended, zeroFill: true)
        var written: UInt64 = 0
        let record = [UInt8](repeating: 0x33, count: 700)
        for _ in 0..<400 {
            filler.claim(through: written + UInt64(record.count))
            try record.withUnsafeBytes { try io.writeAll(fd, $0, at: written, path: path) }
            written += UInt64(record.count)
            usleep(100)
        }
        filler.stop()
        #expect(faults.calls(.zeroFill) == 1, "no zero write after the failed one")
        // Nothing past the block the writer ended in.
        #expect(io.dataRegions(fd, after: (written + 4095) / 4096 * 4096, size: extended)?.isEmpty == true)
        #expect(try io.read(fd, count: Int(written), at: 0, path: path).allSatisfy { $0 == 0x33 })
    }

    /// Through a store: small durable puts get zeros ahead of them in the segment being written, unless
    /// `writesZerosAhead` is off; either way a clean close cuts the segment back to its frames.
    @Test(arguments: [true, false])
    func storesWriteZerosAheadOfSmallCommitsWhenAsked(_ zerosAhead: Bool) throws {
        let directory = TemporaryDirectory("store-zeros")
        var options = testOptions(segmentSize: 8 << 20)
        options.writesZerosAhead = zerosAhead
        let store = try Store.open(at: directory.path, options: options)
        for index in 0..<50 { try store.put(typeTag: 1, payload: payloadBytes(200, seed: UInt64(index))) }
        let end = try #require(try store.statistics().segments.last).bytes
        let path = try #require(directory.segmentFiles().last)
        let io = SystemIO(faults: nil)
        let fd = try io.open(path, flags: O_RDONLY)
        defer { io.close(fd) }
        let size = try io.size(fd, path: path)
        try #require(size > end, "the segment is extended ahead of the writes")
        let afterFrames = (end + 4095) / 4096 * 4096
        var regions: [Range<UInt64>] = []
        for _ in 0..<(zerosAhead ? 500 : 20) {  // the thread writes them soon after the eighth commit
            regions = try #require(io.dataRegions(fd, after: afterFrames, size: size))
            if !regions.isEmpty { break }
            usleep(2_000)
        }
        #expect(regions.isEmpty == !zerosAhead, "\(regions)")
        #expect(regions.allSatisfy { $0.upperBound <= end + UInt64(TornGroup.window) })
        #expect(try io.read(fd, count: Int(size - afterFrames), at: afterFrames, path: path).allSatisfy { $0 == 0 })
        try store.close()
        #expect(try io.size(fd, path: path) == end)
    }
}
