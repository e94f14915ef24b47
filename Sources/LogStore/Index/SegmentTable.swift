@_spi(Engine) import LogStoreFormat
@_spi(Engine) import LogStoreSystem

/// What the engine knows about one segment: its mapped file and the counters that decide when it is
/// worth compacting and what its frames may be dropped for.
struct SegmentInfo: Sendable {
    /// Changed only by ``SegmentTable``, which keeps its file map in step.
    fileprivate(set) var file: SegmentFile
    /// Bytes written to the segment (header included).
    var size: UInt64 = 0
    /// Bytes that hold the durable record of a live object.
    var liveBytes: UInt64 = 0
    /// Bytes that must stay but hold no live record: header, kept tombstones, root frames, the id
    /// reservation and the seal. Not garbage, so never a reason to compact again.
    var retainedBytes = UInt64(LogFormat.segmentHeaderSize)
    /// Lowest sequence number of a frame in the segment (`.max`: none), for deciding when a tombstone
    /// may go.
    var minSequence = UInt64.max
    /// Dead (superseded or deleted) put records: a segment without any cannot hold an older copy of a
    /// deleted object.
    var deadRecords = 0
    /// Tombstones and root frames: a segment without any can be compacted from the index alone, without
    /// reading its dead records.
    var controlFrames = 0
    /// Whether the segment has a valid hint file.
    var hasHint = false
    /// The checksum of the hint file open rebuilt the segment's records from, until compaction has compared
    /// that hint with the segment's frames (nil: the records came from a scan or from this session's
    /// writes, or the hint was found true). A hint may speed up an open, but compaction drops a frame only
    /// on what the frames themselves say.
    var unverifiedHint: UInt64?
    /// Whether compaction found that the hint open used disagrees with the segment: the index may be wrong
    /// about the segment's records until the store is opened again, so no pass compacts it.
    var hintDisagrees = false

    /// Bytes that compaction could reclaim.
    var garbageBytes: UInt64 {
        let kept = liveBytes + retainedBytes
        return size - min(size, kept)
    }

    /// Takes `bytes` off the live bytes (never below zero; a debug build stops at a count that would go
    /// below, which only an accounting mistake makes).
    @inline(__always)
    mutating func removeLive(_ bytes: UInt64) {
        assert(liveBytes >= bytes, "segment \(file.number): \(bytes) live bytes removed of \(liveBytes)")
        liveBytes = liveBytes > bytes ? liveBytes - bytes : 0
    }
}

/// The segments of a store, one ``SegmentInfo`` per segment number.
///
/// ``files`` is the number → file map readers and ``DurableView``s use; it is derived from the table and
/// changes only when a segment is added or removed, so views taken meanwhile share it (copy-on-write)
/// while the writer updates the counters with every commit.
struct SegmentTable: Sendable {
    private var infos: [UInt32: SegmentInfo] = [:]
    /// The mapped file of every segment.
    private(set) var files: [UInt32: SegmentFile] = [:]

    /// The segment `number`, or nil when there is none.
    subscript(number: UInt32) -> SegmentInfo? { infos[number] }

    /// The mapped file of segment `number`.
    @inline(__always)
    func file(_ number: UInt32) -> SegmentFile? { files[number] }

    var count: Int { infos.count }
    /// The segment numbers, in increasing order.
    var numbers: [UInt32] { infos.keys.sorted() }
    /// Every segment, in no particular order.
    var all: Dictionary<UInt32, SegmentInfo>.Values { infos.values }

    /// Adds segment `file.number` (or gives an existing one this file, keeping its counters).
    mutating func register(_ file: SegmentFile) {
        files[file.number] = file
        if let index = infos.index(forKey: file.number) {
            infos.values[index].file = file
        } else {
            infos[file.number] = SegmentInfo(file: file)
        }
    }

    /// Changes segment `number` in place; nothing happens when there is no such segment.
    @inline(__always)
    mutating func update(_ number: UInt32, _ body: (inout SegmentInfo) -> Void) {
        if let index = infos.index(forKey: number) { body(&infos.values[index]) }
    }

    /// Forgets segment `number` and everything known about it.
    mutating func remove(_ number: UInt32) {
        infos[number] = nil
        files[number] = nil
    }

    /// Forgets every segment (close: the files are let go).
    mutating func removeAll() {
        infos.removeAll()
        files.removeAll()
    }

    /// Bytes of segment `number` that compaction could reclaim (0 when there is no such segment).
    func garbageBytes(of number: UInt32) -> UInt64 { infos[number]?.garbageBytes ?? 0 }
}
