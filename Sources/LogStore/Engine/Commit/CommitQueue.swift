import Dispatch
@_spi(Engine) import LogStoreFormat
@_spi(Engine) import LogStoreSystem

/// The state of the commit pipeline, guarded by its ``ConditionLock``: encoded batches waiting for the
/// group-commit leader, the segment tail they go to, sequence and durability bookkeeping, the leader's
/// gathering figures, the first failure, and buffers to reuse.
struct CommitQueue: Sendable {
    /// Sequence number of the next batch.
    var nextSequence: UInt64
    /// Every batch with a sequence number up to this one is written (and synced, per policy) and visible.
    var durableSequence: UInt64
    /// Encoded batches not yet taken by a leader, per target segment.
    var pending: [PendingChunk] = []
    /// The edits of the pending batches, in commit order.
    var pendingEdits: [BatchEdit] = []
    /// The next segment number to create, for the writer and the compactor alike.
    var nextSegmentNumber: UInt32
    /// Segment and offset where the next encoded byte goes (after everything pending).
    var tailSegment: UInt32
    var tailOffset: UInt64
    var tailCapacity: Int
    /// The base sequence number of the tail segment (its header's).
    var tailBaseSequence: UInt64
    /// The dictionary new put payloads are compressed against (the store's newest); nil: none yet.
    var dictionary: CompressionDictionary?
    /// The sequence number of the last batch encoded before `dictionary` was installed: later ones are
    /// compressed against it (or a newer one).
    var dictionaryFence: UInt64 = 0
    /// Gathers payloads for the store's first dictionary; nil when the store has one or builds none.
    var dictionarySampler: DictionarySampler?
    /// The segment being written and its written size; changed only by the leader.
    var active: SegmentFile?
    var activeSize: UInt64
    /// Whether a leader is writing now.
    var flushing = false
    /// Committers waiting while a leader writes, each on its own semaphore, so that a leader wakes only
    /// those its sync served (and one more to lead the next group), not every waiter.
    var waiters: [(ticket: UInt64, semaphore: DispatchSemaphore)] = []
    /// Committers inside `commit` that have not queued their batch yet: a new leader gives them a
    /// moment, so one sync serves them too instead of the next one.
    var arriving = 0
    /// Committers spinning while they wait (see ``CommitSignals``).
    var spinners = 0
    /// How long the last group's sync took (0 without one).
    var lastSyncNanoseconds: UInt64 = 0
    /// Batches of committers (``Store/commit(_:)`` callers, who wait for them) in `pending`.
    var pendingCommitters = 0
    /// Committers in the system when the last group was flushed: those it served plus those queued
    /// meanwhile. They are likely to commit again at once, so a new leader waits a moment (at most
    /// ``maximumGatherNanoseconds``) until that many batches are queued, and one sync serves them
    /// all, instead of leading a small group while the others queue for the next sync.
    var expectedCommitters = 0
    /// How long a leader may wait for expected committers: half the duration of the last sync.
    var maximumGatherNanoseconds: UInt64 = 0
    /// While a leader waits for committers: how many it has already taken (nil when none waits).
    /// A committer that queues the last expected batch, or that no longer arrives, wakes it.
    var gatheringCommitters: Int?

    /// Whether a gathering leader has what it waits for.
    var gathered: Bool {
        guard let taken = gatheringCommitters else { return false }
        return arriving == 0 && taken + pendingCommitters >= expectedCommitters
    }
    /// The segments the leader is writing now (the compactor leaves them alone).
    var flushingSegments: Set<UInt32> = []
    /// The chunks the leader is writing now (pending records' references are read from them).
    var flushingChunks: [PendingChunk] = []
    /// Counts of the group commit since the store was opened.
    var groupCommits = StoreStatistics.GroupCommits()
    /// Objects freed by reference counting since the store was opened.
    var collectedByCount = 0
    /// Sees the ids of every batch accepted while someone observes (mark-sweep, from its snapshot on).
    var observer: AcceptedBatchObserver?
    /// The checks and observers a layer above installed (``Store/installBatchHooks(_:)``).
    var hooks: BatchHooks?
    /// Written but not yet synced (interval and never policies).
    var dirty = false
    /// The first write or sync failure; the store refuses writes once it is set.
    var failure: LogStoreError?
    var closed = false
    /// Ids below this are reserved on disk.
    var reservedIDs: UInt64
    /// Buffers to reuse.
    var spareBuffers: [SpareBuffer] = []

    /// A leader's share of work: the chunks to write and the edits of their batches, in commit order.
    struct Work {
        var chunks: [PendingChunk]
        var edits: [BatchEdit]
        var lastSequence: UInt64
        /// Committers' batches among them.
        var committers: Int
    }

    mutating func takeWork() -> Work {
        let work = Work(
            chunks: pending, edits: pendingEdits, lastSequence: nextSequence - 1, committers: pendingCommitters)
        pendingCommitters = 0
        flushingSegments = Set(pending.map(\.segment))
        flushingChunks = pending
        pending.removeAll()
        pendingEdits.removeAll(keepingCapacity: true)
        return work
    }

    /// Adds to a leader's work what was queued since it took it (the leader still holds `flushing`).
    mutating func takeMore(_ work: Work) -> Work {
        guard !pending.isEmpty else { return work }
        let more = takeWork()
        var merged = work
        var chunks = more.chunks
        // Bytes that continue the leader's last chunk join it (one write instead of two): only the leader
        // appends to a chunk it took, here, under this lock, before it writes the chunk; readers of
        // pending records read it under this lock too.
        if let last = merged.chunks.last, let first = chunks.first, !first.createsSegment,
            first.segment == last.segment, first.startOffset == last.endOffset, first.buffer.count <= 1 << 16,
            let source = first.buffer.bytes.baseAddress
        {
            let count = first.buffer.count
            last.buffer.reserve(count).copyMemory(from: source, byteCount: count)
            last.buffer.commit(count)
            chunks.removeFirst()
        }
        merged.chunks += chunks
        merged.edits += more.edits
        merged.lastSequence = more.lastSequence
        merged.committers += more.committers
        flushingSegments.formUnion(work.chunks.map(\.segment))
        flushingChunks = merged.chunks
        return merged
    }

    /// Removes and returns the waiters to wake now: those whose batch is durable; every one after a
    /// failure or close; and, when no leader is writing, the first of the others, to lead the next group.
    mutating func waitersToWake() -> [DispatchSemaphore] {
        guard !waiters.isEmpty else { return [] }
        if failure != nil || closed {
            defer { waiters.removeAll() }
            return waiters.map(\.semaphore)
        }
        var wake: [DispatchSemaphore] = []
        var remaining: [(ticket: UInt64, semaphore: DispatchSemaphore)] = []
        for waiter in waiters {
            if waiter.ticket <= durableSequence { wake.append(waiter.semaphore) } else { remaining.append(waiter) }
        }
        if !flushing, !remaining.isEmpty { wake.append(remaining.removeFirst().semaphore) }
        waiters = remaining
        return wake
    }

    mutating func buffer() -> WriteBuffer { spareBuffers.popLast()?.buffer ?? WriteBuffer() }

    /// An emptied buffer of a written chunk, kept for a later chunk.
    ///
    /// `@unchecked Sendable`: nothing else refers to it while it is filed here (the chunk that held it
    /// was written and dropped, see ``PendingChunk``), and it leaves the list, under the queue's lock,
    /// only into a new chunk.
    struct SpareBuffer: @unchecked Sendable {
        let buffer: WriteBuffer
    }

    /// The segments the writer may still append to: those with pending or flushing bytes, the tail's
    /// and the active one. Compaction and hint writing leave them alone.
    var busySegments: Set<UInt32> {
        var busy = Set(pending.map(\.segment)).union(flushingSegments)
        busy.insert(tailSegment)
        if let active { busy.insert(active.number) }
        return busy
    }

    /// The pending chunk a batch of at most `bound` bytes goes into, starting a new segment (of
    /// `segmentSize` bytes, or larger for a larger batch) when the tail has no room: a batch never spans
    /// segments.
    /// - parameter segmentSize: the capacity of a new segment (asked only when one is made).
    mutating func chunk(for bound: Int, segmentSize: () -> Int) -> PendingChunk {
        let header = UInt64(LogFormat.segmentHeaderSize)
        // A batch that does not fit starts a new segment; an empty segment left behind is harmless.
        // Room for the seal frame that ends every full segment is kept free.
        let room = UInt64(bound + LogFormat.sealRoom)
        if tailCapacity == 0 || tailOffset + room > UInt64(tailCapacity) {
            tailSegment = nextSegmentNumber
            nextSegmentNumber += 1
            tailBaseSequence = nextSequence
            let capacity = max(segmentSize(), LogFormat.segmentHeaderSize + Int(room))
            pending.append(
                PendingChunk(
                    segment: tailSegment, startOffset: header, createsSegment: true, capacity: capacity,
                    buffer: buffer(), firstSequence: nextSequence, baseSequence: tailBaseSequence))
            tailOffset = header
            tailCapacity = capacity
        } else if pending.last?.segment != tailSegment {
            pending.append(
                PendingChunk(
                    segment: tailSegment, startOffset: tailOffset, createsSegment: false, capacity: tailCapacity,
                    buffer: buffer(), firstSequence: nextSequence, baseSequence: tailBaseSequence))
        }
        // Both branches leave a chunk for the tail segment last.
        return pending[pending.count - 1]
    }

    /// Hands the active segment over to be sealed by someone else (compaction): takes the writer slot,
    /// and sends the next batch to a new segment. Returns the segment, its size and the newest durable
    /// sequence. Call only while no leader writes and nothing is pending.
    mutating func handOverTail() -> (file: SegmentFile, size: UInt64, sequence: UInt64)? {
        guard let active else { return nil }
        flushing = true
        tailCapacity = 0
        tailSegment = 0
        return (active, activeSize, durableSequence)
    }
}
