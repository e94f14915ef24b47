@_spi(Engine) import LogStoreFormat
@_spi(Engine) import LogStoreSystem

/// Sizes and counts of a store, from memory (no file is read).
public struct StoreStatistics: Sendable {
    /// One segment file.
    public struct Segment: Sendable {
        /// The segment number.
        public var number: UInt32
        /// The file's path.
        public var file: String
        /// Bytes written to it, header included.
        public var bytes: UInt64
        /// Bytes of frames that hold the newest record of a live object.
        public var liveBytes: UInt64
        /// Whether this is the segment being written (never compacted while it is).
        public var isActive: Bool
        /// Whether the compactor wrote this segment.
        public var isCompactionOutput: Bool
        /// Bytes that compaction could reclaim: everything but live records, the header, and (in
        /// compaction outputs) the tombstones, roots and seal that must stay.
        public var garbageBytes: UInt64
    }

    /// How the group commit has done since the store was opened: how many batches shared each write
    /// and sync, and what the leaders waited for.
    public struct GroupCommits: Sendable {
        /// Batches written (every `put`, `delete`, `write`, root change, and the collector's batches).
        public var batches: Int = 0
        /// Writes by a leader, each of one or more batches (and one sync under ``FsyncPolicy/always``).
        public var groups: Int = 0
        /// Time spent in those syncs.
        public var syncNanoseconds: UInt64 = 0
        /// Time leaders spent gathering committers before writing.
        public var gatherNanoseconds: UInt64 = 0

        /// Batches per group: how many commits shared a sync, on average.
        public var batchesPerGroup: Double { groups == 0 ? 0 : Double(batches) / Double(groups) }
    }

    /// The segments, in order.
    public var segments: [Segment]
    /// Number of live objects.
    public var liveObjects: Int
    /// Live objects per type tag.
    public var countsByType: [UInt32: Int]
    /// Number of named roots.
    public var roots: Int
    /// Memory held by the in-memory index, in bytes.
    public var indexMemoryBytes: Int
    /// The next id ``Store/newID()`` would hand out.
    public var nextID: ObjectID
    /// Objects freed by reference counting (their count dropped to zero) since the store was opened.
    public var collectedByCounting: Int
    /// The group commit's counts since the store was opened.
    public var groupCommits: GroupCommits
    /// Why the background compactor's last pass (or mark-sweep, or hint writing) failed, while no later
    /// pass has compacted anything; nil otherwise. After a failure it waits 10 s before the next pass,
    /// doubling with each failure in a row up to 10 minutes.
    public var backgroundCompactionError: LogStoreError?

    /// Bytes in all segments.
    public var totalBytes: UInt64 { segments.reduce(0) { $0 + $1.bytes } }
    /// Bytes of live records in all segments.
    public var liveBytes: UInt64 { segments.reduce(0) { $0 + $1.liveBytes } }
    /// Bytes compaction could reclaim (dead records, tombstones, superseded roots).
    public var garbageBytes: UInt64 { segments.reduce(0) { $0 + $1.garbageBytes } }
}

extension Store {
    /// Sizes and counts of the store.
    /// - throws: ``LogStoreError`` with code `closed`.
    public func statistics() throws(LogStoreError) -> StoreStatistics {
        let next = nextID.withLock { $0 }
        let (active, collected, groupCommits) = pipeline.statistics
        let backgroundError = compactor.withLock { $0 }?.lastError.withLock { $0 }
        return try readState { state in
            StoreStatistics(
                segments: state.segments.all.sorted { $0.file.number < $1.file.number }.map { info in
                    StoreStatistics.Segment(
                        number: info.file.number, file: info.file.path, bytes: info.size, liveBytes: info.liveBytes,
                        isActive: info.file.number == active, isCompactionOutput: SegmentStatistics.isOutput(info.file),
                        garbageBytes: info.garbageBytes)
                },
                liveObjects: state.liveCount,
                countsByType: state.typeCounts,
                roots: state.roots.count,
                indexMemoryBytes: state.index.memoryBytes,
                nextID: ObjectID(next),
                collectedByCounting: collected,
                groupCommits: groupCommits,
                backgroundCompactionError: backgroundError)
        }
    }
}

/// Reads segment facts for statistics.
enum SegmentStatistics {
    /// Whether a mapped segment's header flags it as a compaction output.
    static func isOutput(_ file: SegmentFile) -> Bool {
        if case .success(let header) = SegmentHeader.decode(file.bytes(count: LogFormat.segmentHeaderSize)) {
            return header.isCompactionOutput
        }
        return false
    }
}
