@_spi(Engine) import LogStoreFormat
@_spi(Engine) import LogStoreSystem

/// When and how a store compacts its segments.
public struct CompactionOptions: Sendable, Equatable {
    /// Run the background compactor thread. Default on.
    public var background: Bool = true
    /// The background compactor compacts while at least this share of all segment bytes is garbage,
    /// one segment per pass. Default 0.2. Only segments with ``segmentGarbageRatio`` of garbage are taken,
    /// and never the one being written, so the store stays at about 4/3 of its live bytes, plus the
    /// segment being written and the copies of the one being compacted (measured: at most 1.44 times the
    /// live bytes, hint files included, during five full random overwrites; `Benchmarks`: `ChurnFigures`).
    public var startGarbageRatio: Double = 0.2
    /// A sealed segment is rewritten when at least this share of its bytes is garbage. Default 0.25.
    /// ``Store/compact(progress:)`` on demand uses any garbage at all.
    public var segmentGarbageRatio: Double = 0.25
    /// How long the background compactor sleeps between two looks at the garbage share (at least 10 ms).
    /// Default 100 ms: a look costs a few microseconds, and a store written at 30 MB/s gains 3 MB of
    /// garbage meanwhile. After a failed pass it waits 10 s before the next, doubling with each failure in
    /// a row up to 10 minutes.
    public var minimumInterval: Duration = .milliseconds(100)
    /// Most bytes per second a pass writes, or nil for no limit. Default nil.
    public var bytesPerSecondLimit: Int?
    /// Least time between two background mark-sweep passes (which free unreachable cycles); `.zero` turns
    /// them off. Default 60 s.
    public var markSweepInterval: Duration = .seconds(60)

    /// The default options.
    public init() {}

    /// Options with the given values.
    public init(
        background: Bool = true, startGarbageRatio: Double = 0.2, segmentGarbageRatio: Double = 0.25,
        minimumInterval: Duration = .milliseconds(100), bytesPerSecondLimit: Int? = nil,
        markSweepInterval: Duration = .seconds(60)
    ) {
        self.markSweepInterval = markSweepInterval
        self.background = background
        self.startGarbageRatio = startGarbageRatio
        self.segmentGarbageRatio = segmentGarbageRatio
        self.minimumInterval = minimumInterval
        self.bytesPerSecondLimit = bytesPerSecondLimit
    }
}

/// What one compaction pass did.
public struct CompactionReport: Sendable, Equatable {
    /// Segment files before and after the pass.
    public var segmentsBefore = 0
    /// Segment files after the pass.
    public var segmentsAfter = 0
    /// Bytes in all segments before the pass.
    public var bytesBefore: UInt64 = 0
    /// Bytes in all segments after the pass.
    public var bytesAfter: UInt64 = 0
    /// Segments rewritten (and deleted).
    public var segmentsCompacted = 0
    /// Live records copied into new segments.
    public var recordsCopied = 0
    /// Bytes of live records copied.
    public var bytesCopied: UInt64 = 0
    /// Tombstones that had to be kept (an older copy of their object may still exist elsewhere).
    public var tombstonesKept = 0
    /// Tombstones dropped.
    public var tombstonesDropped = 0
    /// Segments left alone because a retained moment holds them (``Store/retain(as:)``: rewriting one
    /// would free nothing while the moment keeps its file), or a replica has not yet received them whole
    /// (``Store/replicate(to:)``).
    public var segmentsHeld = 0
    /// Wall-clock duration in seconds.
    public var seconds: Double = 0
}

/// How far a compaction pass is: bytes of the chosen segments read so far, of the total.
public struct CompactionProgress: Sendable {
    /// Bytes of the chosen segments processed so far.
    public var bytesDone: UInt64
    /// Bytes of all chosen segments.
    public var bytesTotal: UInt64
}
