import Foundation
import Testing

@testable @_spi(Testing) import LogStore

/// The thread that fills the page cache ahead of a writer: it reads, never writes, and stops cleanly.
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
            filler.advance(to: written)
        }
        filler.stop()
        filler.stop()  // a second stop returns at once
        // The writer's bytes are intact, the rest of the extension still reads as zeros, and the size is
        // the one the owner set (cutting it back is the owner's job).
        #expect(try io.size(fd, path: path) == extended)
        #expect(try io.read(fd, count: 1 << 20, at: 7 << 20, path: path) == data)
        #expect(try io.read(fd, count: 1 << 20, at: 9 << 20, path: path).allSatisfy { $0 == 0 })
    }
}
