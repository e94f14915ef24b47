import LogStoreFormat
import LogStoreSystem

/// Bytes waiting to be written to one segment, starting at `startOffset` of that segment.
///
/// `@unchecked Sendable` (its `buffer` is a mutable class): a chunk lives in the commit queue, which
/// only a ``ConditionLock`` reaches, and its buffer is written only while the chunk is the queue's
/// last pending chunk, by a committer holding that lock (``CommitPipeline/enqueue``). A leader takes
/// the pending chunks under the lock, which ends their writes: from then on (writing them to the
/// segment, or reading a pending record's references) the buffer is only read, until the leader,
/// again under the lock, empties it and files it among the spare buffers (``CommitQueue/SpareBuffer``),
/// after which no chunk refers to it. Every hand-over thus goes through the lock's mutex, which orders
/// the writes before the reads.
final class PendingChunk: @unchecked Sendable {
    let segment: UInt32
    let startOffset: UInt64
    /// The segment does not exist yet: the leader creates it (capacity `capacity`) before writing.
    let createsSegment: Bool
    let capacity: Int
    let buffer: WriteBuffer
    /// Sequence number of the first batch in the chunk.
    let firstSequence: UInt64

    init(
        segment: UInt32, startOffset: UInt64, createsSegment: Bool, capacity: Int, buffer: WriteBuffer,
        firstSequence: UInt64
    ) {
        self.firstSequence = firstSequence
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
        guard case .success(let frame) = FrameDecoder.decode(bytes, at: start) else { return [] }
        return FrameDecoder.references(of: frame, in: bytes)
    }
}
