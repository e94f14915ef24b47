import Foundation
@_spi(Engine) import LogStoreFormat

/// Prepares the region of a file just ahead of a sequential writer, on a thread of its own: it brings
/// the pages into the page cache, and for a writer of small durable commits it also writes zeros there,
/// so that the writer's `fdatasync` finds the disk blocks allocated already.
///
/// **Page cache.** On a virtual machine whose memory the host backs on first touch, a new page-cache page
/// costs 9–12 µs, and a writer appending 1 MiB spends ~3 ms of every write making pages
/// (`Benchmarks/README.md`). The file is first extended (`ftruncate`, a hole: no disk space) over the
/// region the writer will fill; this thread reads that region ahead of it (a read of a hole puts zeroed
/// pages in the cache and touches no disk), paying the cost on another core.
///
/// **Zeros.** A commit that writes into a block of the hole makes the filesystem allocate it, and the
/// sync then commits that allocation to the journal too: a sync of eight small records (a group commit,
/// 1.8 KB) took ~150 µs instead of ~110 µs, as it crossed into a new block every other time. With
/// `zeroFill` on, the thread writes zeros from ``zeroGap`` to ``zeroWindow`` past the writer, in
/// ``zeroChunk`` pieces, and starts their writeback at once: the blocks are allocated long before the
/// writer gets there, one journal commit per chunk. It does so only while the writer's commits are
/// small (under ``smallAdvance`` on average): large batches would pay twice the disk bandwidth for a
/// gain they do not get. A writer announces each write first (``claim(through:)``); the thread never
/// writes zeros below the announced end, and a claim that reaches a chunk being zeroed waits for it.
///
/// The owner truncates the file to the bytes it wrote before making it durable (a seal, a close); after
/// a crash, the open trims the zeros, written or not (`StoreLoader`).
///
/// `@unchecked Sendable` is not needed: the state is a ``ConditionLock``; the descriptor is an `Int32`
/// the owner keeps open until ``stop()`` has returned.
package final class PageCacheFiller: Sendable {
    /// How far past the writer zeros start: writeback of a chunk is done long before the writer arrives.
    package static let zeroGap = LogFormat.prefillGap
    /// How far past the writer zeros reach.
    package static let zeroWindow = LogFormat.prefillWindow
    /// The piece written at once (and what a claim may have to wait for).
    package static let zeroChunk = LogFormat.prefillChunk
    /// Zeros are written only while the writer advances by less than this per write, on average.
    package static let smallAdvance: UInt64 = 64 << 10

    private struct State {
        /// Fill up to this offset (the writer's position plus the window, capped at the extended size).
        package var target: UInt64 = 0
        /// The page cache is filled up to here.
        package var filled: UInt64 = 0
        /// The end of the writer's last claimed write: nothing below it is ever zeroed.
        package var claimed: UInt64 = 0
        /// Average advance per claim (an exponential moving average over about eight claims).
        package var averageAdvance: UInt64 = 0
        /// Claims so far: the average means something after eight.
        package var claims = 0
        /// Zeros are written (and their writeback started) up to here.
        package var zeroed: UInt64 = 0
        /// The chunk the thread is writing zeros to now.
        package var zeroing: Range<UInt64>?
        /// Writing zeros failed (no space, say): the thread writes no more.
        package var zeroFailed = false
        /// The thread waits for work.
        package var idle = false
        package var stopped = false
        package var finished = false
    }

    private enum Work {
        case fill(UInt64)
        case zero(Range<UInt64>)
        case stop
    }

    private let state = ConditionLock(State(), rank: .pageCacheFiller)
    private let window: UInt64
    private let limit: UInt64
    private let zeroFill: Bool

    /// Starts preparing `fd`'s region from `start` (the writer's position; what lies before it is written)
    /// up to `window` bytes ahead of the writer, never beyond `limit`; with zeros when `zeroFill` is on.
    package init(fd: Int32, io: SystemIO, window: UInt64, limit: UInt64, from start: UInt64 = 0, zeroFill: Bool = false)
    {
        self.window = window
        self.limit = limit
        self.zeroFill = zeroFill
        let chunk = 1 << 20
        state.withLock { state in
            state.target = min(start + window, limit)
            state.filled = start & ~UInt64(chunk - 1)
            state.claimed = start
            state.zeroed = start
        }
        let state = self.state
        let thread = Thread {
            let scratch = UnsafeMutableRawBufferPointer.allocate(byteCount: chunk, alignment: 4096)
            defer { scratch.deallocate() }
            let zeros = UnsafeMutableRawBufferPointer.allocate(byteCount: Int(Self.zeroChunk), alignment: 4096)
            zeros.initializeMemory(as: UInt8.self, repeating: 0)
            defer { zeros.deallocate() }
            while true {
                let work = state.waitUntil { state -> Work? in
                    if state.stopped { return .stop }
                    if let range = Self.nextZeros(state, zeroFill: zeroFill, limit: limit) {
                        state.zeroing = range
                        state.idle = false
                        return .zero(range)
                    }
                    if state.filled < state.target {
                        state.idle = false
                        return .fill(state.filled)
                    }
                    state.idle = true
                    return nil
                }
                switch work {
                case .stop: break
                case .zero(let range):
                    let written = io.writeZeros(
                        fd, UnsafeRawBufferPointer(rebasing: zeros[..<Int(range.count)]), at: range.lowerBound)
                    if written { io.startWriteback(fd, offset: range.lowerBound, length: Int(range.count)) }
                    state.withLock { state in
                        state.zeroing = nil
                        if written { state.zeroed = range.upperBound } else { state.zeroFailed = true }
                    }
                    state.broadcast()  // a claim may wait for this chunk
                    continue
                case .fill(let offset):
                    // End of file, or a read failed: nothing more to fill.
                    let read = io.prefetch(fd, into: scratch, at: offset)
                    state.withLock { state in state.filled = read == 0 ? .max : offset + UInt64(chunk) }
                    continue
                }
                break
            }
            state.withLock { $0.finished = true }
            state.broadcast()
        }
        thread.name = "logstore.fill"
        thread.start()
    }

    /// The next chunk to zero, or nil: only while the writer's advances are small (after eight of them,
    /// so that one large batch at the start does not pass for small), from ``zeroGap`` past
    /// its claimed end (rounded up to a chunk) to ``zeroWindow`` past it.
    private static func nextZeros(_ state: State, zeroFill: Bool, limit: UInt64) -> Range<UInt64>? {
        guard zeroFill, !state.zeroFailed, state.zeroing == nil, state.claims >= 8,
            state.averageAdvance < Self.smallAdvance
        else {
            return nil
        }
        let floor = (state.claimed + Self.zeroGap + Self.zeroChunk - 1) / Self.zeroChunk * Self.zeroChunk
        let start = max(state.zeroed, floor)
        guard start < state.claimed + Self.zeroWindow, start < limit else { return nil }
        return start..<min(start + Self.zeroChunk, limit)
    }

    /// The writer is about to write up to `end`: returns once no zeros are being written below it, and
    /// from then on none will be. Keeps the region ahead of it prepared.
    package func claim(through end: UInt64) {
        let wake = state.waitUntil { state -> Bool? in
            if let zeroing = state.zeroing, zeroing.lowerBound < end { return nil }
            let advance = end > state.claimed ? end - state.claimed : 0
            state.averageAdvance = state.claims == 0 ? advance : (state.averageAdvance * 7 + advance) / 8
            state.claims += 1
            state.claimed = max(state.claimed, end)
            state.target = max(state.target, min(end + window, limit))
            // Wake the thread only when it waits and has work now: not for every small commit.
            return state.idle
                && (state.filled < state.target || Self.nextZeros(state, zeroFill: zeroFill, limit: limit) != nil)
        }
        if wake { state.broadcast() }
    }

    /// Stops the thread and waits until it no longer uses the descriptor.
    package func stop() {
        state.withLock { $0.stopped = true }
        state.broadcast()
        _ = state.waitUntil { $0.finished ? true : nil }
    }
}
