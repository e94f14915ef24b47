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
    /// that hint with the segment's frames (nil: the records came from a scan or from writes since the
    /// open, or the hint was found true). A hint may speed up an open, but compaction drops a frame only
    /// on what the frames themselves say.
    var unverifiedHint: UInt64?
    /// Whether compaction found that the hint open used disagrees with the segment: the index may be wrong
    /// about the segment's records until the store is opened again, so no pass compacts it.
    var hintDisagrees = false

    /// A segment of `file` of which nothing is known yet.
    init(file: SegmentFile) { self.file = file }

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

    /// Adds segment `info.file.number` with the counters of `info` (a compaction output, or an input put
    /// back); replaces what was known about a segment of that number.
    mutating func install(_ info: SegmentInfo) {
        files[info.file.number] = info.file
        infos[info.file.number] = info
    }

    /// Changes segment `number` in place; nothing happens when there is no such segment. Private: every
    /// change of a counter has a name below.
    @inline(__always)
    private mutating func update(_ number: UInt32, _ body: (inout SegmentInfo) -> Void) {
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

    /// Bytes written to segment `number` (0 when there is none).
    func size(of number: UInt32) -> UInt64 { infos[number]?.size ?? 0 }
}

/// The named changes of the counters: what the commit leader, replay, compaction and the hint checks do to
/// a segment. Each does nothing when there is no segment `number`.
extension SegmentTable {
    /// The leader created segment `file`: it holds its header, and its first batch has `firstSequence`.
    mutating func create(_ file: SegmentFile, size: UInt64, firstSequence: UInt64) {
        register(file)
        update(file.number) { info in
            info.size = size
            info.minSequence = firstSequence
        }
    }

    /// A seal frame of `bytes` bytes now ends segment `number`, which is `size` bytes long.
    mutating func recordSeal(_ number: UInt32, bytes: UInt64, size: UInt64) {
        update(number) { info in
            info.size = size
            info.retainedBytes += bytes
        }
    }

    /// A durable batch (``BatchEdit``) ends at `endOffset` of segment `number`.
    @inline(__always)
    mutating func recordBatch(
        _ number: UInt32, endOffset: UInt64, sequence: UInt64, controlFrames: Int, retainedBytes: UInt64
    ) {
        update(number) { info in
            info.size = max(info.size, endOffset)
            info.minSequence = min(info.minSequence, sequence)
            info.controlFrames += controlFrames
            info.retainedBytes += retainedBytes
        }
    }

    /// `bytes` more bytes of segment `number` hold live records.
    @inline(__always)
    mutating func addLive(_ bytes: UInt64, to number: UInt32) {
        update(number) { $0.liveBytes += bytes }
    }

    /// The live record `old` died (superseded or deleted).
    @inline(__always)
    mutating func recordDeath(of old: IndexEntry) {
        update(old.segment) { info in
            info.removeLive(UInt64(old.length))
            info.deadRecords += 1
        }
    }

    /// A live record moved from `old` to `new` (compaction copied it).
    @inline(__always)
    mutating func moveLive(from old: IndexEntry, to new: IndexEntry) {
        update(old.segment) { $0.removeLive(UInt64(old.length)) }
        update(new.segment) { $0.liveBytes += UInt64(new.length) }
    }

    /// Replay read a segment (``SegmentReplayEdit``): its counters, where its log ends, and whether its
    /// records came from its hint file.
    mutating func recordReplayed(_ edit: SegmentReplayEdit) {
        update(edit.segment) { info in
            info.controlFrames += edit.controlFrames
            info.deadRecords += edit.deadRecords
            info.minSequence = edit.minSequence
            info.retainedBytes = edit.retainedBytes
            info.size = edit.validSize
            if let checksum = edit.hint {
                info.hasHint = true
                info.unverifiedHint = checksum
            }
        }
    }

    /// A hint file of segment `number` was written.
    mutating func recordHintWritten(_ number: UInt32) {
        update(number) { $0.hasHint = true }
    }

    /// The hint open used for segment `number` was found to agree with the segment.
    mutating func recordHintTrue(_ number: UInt32) {
        update(number) { $0.unverifiedHint = nil }
    }

    /// The hint open used for segment `number` was found to disagree with the segment: it is no longer a
    /// valid hint, and nothing is compacted or collected on what the index says of the segment.
    mutating func recordHintDisagrees(_ number: UInt32) {
        update(number) { info in
            info.unverifiedHint = nil
            info.hasHint = false
            info.hintDisagrees = true
        }
    }
}
