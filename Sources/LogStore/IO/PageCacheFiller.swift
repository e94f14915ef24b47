import Foundation

/// Brings the region of a file just ahead of a sequential writer into the page cache, on a thread of its
/// own, so the writer's `pwrite` copies into pages that exist instead of waiting for new ones.
///
/// On a virtual machine whose memory the host backs on first touch, a new page-cache page costs 9–12 µs,
/// and a writer appending 1 MiB spends ~3 ms of every write making pages (`Benchmarks/README.md`). The
/// file is first extended (`ftruncate`, a hole: no disk space) over the region the writer will fill; this
/// thread reads that region ahead of it (a read of a hole puts zeroed pages in the cache and touches no
/// disk), paying the cost on another core. The owner truncates the file to the bytes it wrote before
/// making it durable, so nothing of this is ever on disk.
///
/// `@unchecked Sendable` is not needed: the state is a ``ConditionLock``; the descriptor is an `Int32`
/// the owner keeps open until ``stop()`` has returned.
final class PageCacheFiller: Sendable {
    private struct State {
        /// Fill up to this offset (the writer's position plus the window, capped at the extended size).
        var target: UInt64 = 0
        var stopped = false
        var finished = false
    }

    private let state = ConditionLock(State())
    private let window: UInt64
    private let limit: UInt64

    /// Starts filling `fd`'s region from `start` (the writer's position; what lies before it is written)
    /// up to `window` bytes ahead of the writer, never beyond `limit`.
    init(fd: Int32, io: SystemIO, window: UInt64, limit: UInt64, from start: UInt64 = 0) {
        self.window = window
        self.limit = limit
        state.withLock { $0.target = min(start + window, limit) }
        let state = self.state
        let thread = Thread {
            let chunk = 1 << 20
            let scratch = UnsafeMutableRawBufferPointer.allocate(byteCount: chunk, alignment: 4096)
            defer { scratch.deallocate() }
            var filled = start & ~UInt64(chunk - 1)
            enum Next {
                case fill(through: UInt64)
                case stop
            }
            while true {
                let next = state.waitUntil { state -> Next? in
                    if state.stopped { return .stop }
                    return filled < state.target ? .fill(through: state.target) : nil
                }
                guard case .fill(let target) = next else { break }
                while filled < target {
                    if io.prefetch(fd, into: scratch, at: filled) == 0 { break }
                    filled += UInt64(chunk)
                    if state.withLock({ $0.stopped }) { break }
                }
                if filled < target { break }  // end of file, or a read failed: nothing more to do
            }
            state.withLock { $0.finished = true }
            state.broadcast()
        }
        thread.name = "logstore.fill"
        thread.start()
    }

    /// The writer has written through `offset`: keep the window ahead of it filled.
    func advance(to offset: UInt64) {
        let target = min(offset + window, limit)
        let moved = state.withLock { state -> Bool in
            guard target > state.target else { return false }
            state.target = target
            return true
        }
        if moved { state.broadcast() }
    }

    /// Stops the thread and waits until it no longer uses the descriptor.
    func stop() {
        state.withLock { $0.stopped = true }
        state.broadcast()
        _ = state.waitUntil { $0.finished ? true : nil }
    }
}
