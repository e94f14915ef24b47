@_spi(Engine) import LogStoreFormat
@_spi(Engine) import LogStoreSystem

/// Bytes waiting to be written to one segment, starting at `startOffset` of that segment.
///
/// `@unchecked Sendable` (its `buffer` is a mutable class): a chunk lives in the commit queue, which
/// only a ``ConditionLock`` reaches, and every write to its buffer happens holding that lock: a batch is
/// encoded into the queue's last pending chunk by `CommitPipeline.enqueue` (a committer's, or
/// mark-sweep's), and a leader that takes more work appends the next chunk's bytes to its own last
/// chunk (`CommitQueue.takeMore`). Outside the lock a buffer is only read: by the leader that took the
/// chunk, writing it to the segment after it took it (so after the last write, in its own program
/// order); reads of pending records' references take the lock. The leader empties the buffer and files
/// it among the spare buffers (``CommitQueue/SpareBuffer``) under the lock, after which no chunk refers
/// to it. Every hand-over between threads thus goes through the lock's mutex, which orders the writes
/// before the reads.
final class PendingChunk: @unchecked Sendable {
    let segment: UInt32
    let startOffset: UInt64
    /// The segment does not exist yet: the leader creates it (capacity `capacity`) before writing.
    let createsSegment: Bool
    let capacity: Int
    let buffer: WriteBuffer
    /// Sequence number of the first batch in the chunk.
    let firstSequence: UInt64
    /// The base sequence number of the chunk's segment (its header's): frames are encoded against it.
    let baseSequence: UInt64

    init(
        segment: UInt32, startOffset: UInt64, createsSegment: Bool, capacity: Int, buffer: WriteBuffer,
        firstSequence: UInt64, baseSequence: UInt64
    ) {
        self.firstSequence = firstSequence
        self.baseSequence = baseSequence
        self.segment = segment
        self.startOffset = startOffset
        self.createsSegment = createsSegment
        self.capacity = capacity
        self.buffer = buffer
    }

    var endOffset: UInt64 { startOffset + UInt64(buffer.count) }

    /// The references stored in the pending record `entry`, read from the chunk of `chunks` that holds
    /// it; nil when none does.
    static func references(of entry: IndexEntry, in chunks: [PendingChunk]) -> [ObjectID]? {
        let offset = UInt64(entry.offset)
        guard
            let chunk = chunks.first(where: {
                $0.segment == entry.segment && $0.startOffset <= offset && offset < $0.endOffset
            })
        else { return nil }
        let bytes = chunk.buffer.bytes
        let start = Int(offset - chunk.startOffset)
        let format = FrameFormat.v2(baseSequence: chunk.baseSequence)
        guard case .success(let frame) = FrameDecoder.decode(bytes, at: start, format: format) else { return [] }
        return FrameDecoder.references(of: frame, in: bytes)
    }
}
