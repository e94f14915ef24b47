import Foundation
import TestSupport
import Testing

@testable @_spi(Testing) import LogStore

/// The thread that prepares the region ahead of a writer: it fills the page cache, writes zeros ahead of
/// small writes when asked to, never touches what the writer claimed, and stops cleanly.
@Suite struct PageCacheFillerTests {
    @Test func fillsAheadWithoutChangingTheFileAndStops() throws {
        let file = try ExtendedFile("filler", size: 16 << 20)
        let data = [UInt8](repeating: 0xAB, count: 1 << 20)
        let filler = PageCacheFiller(fd: file.fd, io: file.io, window: 4 << 20, limit: file.size)
        while file.written < 8 << 20 {
            try file.append(data)
            filler.claim(through: file.written)
        }
        filler.stop()
        filler.stop()  // a second stop returns at once
        // The writer's bytes are intact, the rest of the extension still reads as zeros, and the size is
        // the one the owner set (cutting it back is the owner's job).
        #expect(try file.io.size(file.fd, path: file.path) == file.size)
        #expect(try file.read(1 << 20, at: 7 << 20) == data)
        #expect(try file.read(1 << 20, at: 9 << 20).allSatisfy { $0 == 0 })
    }

    /// Small claimed writes with zeros on: the writer's bytes are all intact (zeros never land below a
    /// claim), and zeros are written ahead of the last write, within the window.
    @Test func zerosGoAheadOfSmallWritesAndNeverOverThem() throws {
        let file = try ExtendedFile("filler-zeros", size: 8 << 20)
        let filler = PageCacheFiller(fd: file.fd, io: file.io, window: 2 << 20, limit: file.size, zeroFill: true)
        var expected: [UInt8] = []
        for index in 0..<3000 {
            let record = payloadBytes(700 + index % 200, seed: UInt64(index)).map { $0 | 1 }  // never zero
            try file.append(record, claimingFrom: filler)
            expected += record
        }
        // Let the thread catch up with the last claim, then stop it.
        let written = file.written
        filler.claim(through: written)
        var zeroEnd: UInt64 = 0
        for _ in 0..<500 {
            let regions = try #require(file.io.dataRegions(file.fd, after: written, size: file.size))
            zeroEnd = regions.last?.upperBound ?? 0
            if zeroEnd >= written + PageCacheFiller.zeroWindow - PageCacheFiller.zeroChunk { break }
            usleep(10_000)
        }
        filler.stop()
        #expect(try file.read(Int(written), at: 0) == expected)
        #expect(zeroEnd > written + PageCacheFiller.zeroGap, "zeros ahead of the writer")
        #expect(zeroEnd <= written + PageCacheFiller.zeroWindow + PageCacheFiller.zeroChunk)
        #expect(try file.read(Int(file.size - written), at: written).allSatisfy { $0 == 0 })
    }

    /// Large writes: no zeros (they would cost the disk twice the bytes for no gain).
    @Test func noZerosAheadOfLargeWrites() throws {
        let file = try ExtendedFile("filler-large", size: 16 << 20)
        let data = [UInt8](repeating: 0xCD, count: 256 << 10)
        // Large from the first claim: the filler judges the size only after eight claims.
        let filler = PageCacheFiller(fd: file.fd, io: file.io, window: 2 << 20, limit: file.size, zeroFill: true)
        for _ in 0..<20 {
            try file.append(data, claimingFrom: filler)
            usleep(2_000)  // time for the thread to zero, were it to
        }
        filler.stop()
        let regions = try #require(file.io.dataRegions(file.fd, after: file.written, size: file.size))
        #expect(regions.isEmpty, "no zeros after large writes: \(regions)")
        #expect(try file.read(Int(file.written), at: 0) == [UInt8](repeating: 0xCD, count: Int(file.written)))
    }

    /// `dataRegions` lists what follows an offset, region by region, and nothing after the last one.
    @Test func dataRegionsListWhatFollowsAHole() throws {
        let file = try ExtendedFile("regions", size: 4 << 20)
        let block = [UInt8](repeating: 7, count: 64 << 10)
        for offset: UInt64 in [0, 1 << 20, 3 << 20] { try file.write(block, at: offset) }
        try file.io.syncData(file.fd, path: file.path)
        let regions = try #require(file.io.dataRegions(file.fd, after: 64 << 10, size: file.size))
        let mebibyte: UInt64 = 1 << 20
        let blockSize = UInt64(block.count)
        let expected: [Range<UInt64>] = [
            mebibyte..<(mebibyte + blockSize), (3 * mebibyte)..<(3 * mebibyte + blockSize),
        ]
        #expect(regions == expected)
        #expect(file.io.dataRegions(file.fd, after: 3 * mebibyte + blockSize, size: file.size) == [])
        #expect(file.io.dataEnd(file.fd, size: file.size) == 64 << 10)
    }

    /// A claim that reaches a chunk the thread is zeroing waits for it: the zero write is slowed down
    /// (injected delay), the writer jumps far ahead and writes at once, and its bytes are intact.
    /// Without the wait, the late zeros would land on them.
    @Test func aClaimWaitsForTheZerosBeneathIt() throws {
        let faults = FaultInjector()
        let file = try ExtendedFile("filler-claim-wait", size: 8 << 20, faults: faults)
        faults.inject(.zeroFill, .delay(microseconds: 300_000), times: 1000)
        let filler = PageCacheFiller(fd: file.fd, io: file.io, window: 2 << 20, limit: file.size, zeroFill: true)
        let small = [UInt8](repeating: 0x11, count: 500)
        for _ in 0..<10 { try file.append(small, claimingFrom: filler) }
        // Wait until the thread is inside its first (delayed) zero write.
        for _ in 0..<500 where faults.calls(.zeroFill) == 0 { usleep(1_000) }
        try #require(faults.calls(.zeroFill) > 0)
        let start = file.written
        let large = [UInt8](repeating: 0x22, count: 2 << 20)
        try file.append(large, claimingFrom: filler)
        filler.stop()
        #expect(try file.read(large.count, at: start) == large)
    }

    /// A zero write that fails (no space, say) stops the zeros; the writer's bytes are untouched.
    @Test func aFailedZeroWriteStopsTheZeros() throws {
        let faults = FaultInjector()
        let file = try ExtendedFile("filler-zero-failure", size: 8 << 20, faults: faults)
        faults.inject(.zeroFill, .error(ENOSPC))
        let filler = PageCacheFiller(fd: file.fd, io: file.io, window: 2 << 20, limit: file.size, zeroFill: true)
        let record = [UInt8](repeating: 0x33, count: 700)
        for _ in 0..<400 {
            try file.append(record, claimingFrom: filler)
            usleep(100)
        }
        filler.stop()
        #expect(faults.calls(.zeroFill) == 1, "no zero write after the failed one")
        // Nothing past the block the writer ended in.
        let blockEnd = (file.written + 4095) / 4096 * 4096
        #expect(file.io.dataRegions(file.fd, after: blockEnd, size: file.size)?.isEmpty == true)
        #expect(try file.read(Int(file.written), at: 0).allSatisfy { $0 == 0x33 })
    }

    /// Through a store: small durable puts get zeros ahead of them in the segment being written, unless
    /// `writesZerosAhead` is off; either way a clean close cuts the segment back to its frames.
    @Test(arguments: [true, false])
    func storesWriteZerosAheadOfSmallCommitsWhenAsked(_ zerosAhead: Bool) throws {
        let directory = TemporaryStore("store-zeros")
        var options = testOptions(segmentSize: 8 << 20)
        options.tuning.writesZerosAhead = zerosAhead
        let store = try directory.open(options: options)
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

/// A file in a fresh directory, extended (a hole) to `size` and open for reading and writing, written at
/// its end the way a segment's writer does.
final class ExtendedFile {
    let directory: TemporaryStore
    let path: String
    let io: SystemIO
    let fd: Int32
    let size: UInt64
    /// Bytes appended so far.
    private(set) var written: UInt64 = 0

    init(_ name: String, size: UInt64, faults: FaultInjector? = nil) throws {
        directory = TemporaryStore(name)
        path = directory.path + "/file"
        io = SystemIO(faults: faults)
        fd = try io.open(path, flags: O_RDWR | O_CREAT | O_CLOEXEC)
        self.size = size
        try io.truncate(fd, to: size, path: path)
    }

    deinit { io.close(fd) }

    func write(_ bytes: [UInt8], at offset: UInt64) throws {
        try bytes.withUnsafeBytes { try io.writeAll(fd, $0, at: offset, path: path) }
    }

    /// Writes `bytes` at the end, first claiming them from `filler` when one is given.
    func append(_ bytes: [UInt8], claimingFrom filler: PageCacheFiller? = nil) throws {
        filler?.claim(through: written + UInt64(bytes.count))
        try write(bytes, at: written)
        written += UInt64(bytes.count)
    }

    func read(_ count: Int, at offset: UInt64) throws -> [UInt8] {
        try io.read(fd, count: count, at: offset, path: path)
    }
}
