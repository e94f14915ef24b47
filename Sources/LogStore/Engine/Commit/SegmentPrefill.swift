@_spi(Engine) import LogStoreFormat
@_spi(Engine) import LogStoreSystem

/// The page-cache prefill of the segment being written: the segment is extended ahead of the writes (a
/// hole, no disk space), and a thread fills the page cache there (``PageCacheFiller``), so a commit's
/// `pwrite` copies into pages that exist; with small durable commits, it also writes zeros there, so a
/// commit's sync finds its blocks allocated.
///
/// Where the host backs guest memory on first touch (a virtual machine), a new page-cache page costs
/// ~10 µs: appending a 256 KB batch spent ~0.6 ms making pages, as long as the `fdatasync` after it. Where that cost is
/// paid on another core, a durable batch takes the disk's time only (`Benchmarks/README.md`).
///
/// The extension never holds data (only zeros): a seal cuts the segment back to its frames before syncing
/// it, a clean close does the same, and after a crash the open trims an all-zero tail of the newest
/// segment (bytes a torn write left are still cut and saved as before).
final class SegmentPrefill: Sendable {
    /// The segment being prefilled and its filler.
    private struct Filling: Sendable {
        let number: UInt32
        let filler: PageCacheFiller
    }

    /// How far ahead of the writes the page cache is filled.
    static let window: UInt64 = 8 << 20

    private let io: SystemIO
    /// Whether zeros are written ahead too (only pays where every commit is synced).
    private let zeroFill: Bool
    private let filling = RankedMutex<Filling?>(nil, rank: .prefill)

    init(io: SystemIO, zeroFill: Bool) {
        self.io = io
        self.zeroFill = zeroFill
    }

    /// Before a write to `file` from `size` (its end so far) through `end`: extends the file to its capacity
    /// the first time, and keeps the filler ahead of the write (and out of its way). An extension that
    /// fails is skipped (it is only a speed-up).
    func prepare(_ file: SegmentFile, from size: UInt64, through end: UInt64) {
        let capacity = UInt64(file.mappedLength)
        filling.withLock { ahead in
            if let current = ahead, current.number != file.number {
                current.filler.stop()
                ahead = nil
            }
            if ahead == nil {
                #if os(Linux)
                    // To the segment's capacity at once: every change of the file's size costs the next sync
                    // an inode write (extending in steps of a few MiB showed in the commit latency's tail).
                    guard capacity > end, (try? io.truncate(file.fd, to: capacity, path: file.path)) != nil else {
                        return
                    }
                    // Readers find where the log ends by the hole (`SEEK_HOLE`); a filesystem that does not
                    // report it gets no extension (a reader would otherwise scan it, and a seal that cuts it
                    // back could pull pages from under a reader's mapping).
                    guard io.dataEnd(file.fd, size: capacity) < capacity else {
                        try? io.truncate(file.fd, to: size, path: file.path)
                        return
                    }
                    ahead = Filling(
                        number: file.number,
                        filler: PageCacheFiller(
                            fd: file.fd, io: io, window: Self.window, limit: capacity, from: size, zeroFill: zeroFill))
                #else
                    return
                #endif
            }
            ahead?.filler.claim(through: end)
        }
    }

    /// Stops filling `file` (before it is sealed); true when it had been extended and must be cut back.
    func end(of file: SegmentFile) -> Bool {
        filling.withLock { ahead in
            guard let current = ahead, current.number == file.number else { return false }
            current.filler.stop()
            ahead = nil
            return true
        }
    }

    /// Stops the filler without cutting anything back (a failed store: the open trims the tail).
    func stop() {
        filling.withLock { ahead in
            ahead?.filler.stop()
            ahead = nil
        }
    }
}
