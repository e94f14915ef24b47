@_spi(Engine) import LogStoreFormat
@_spi(Engine) import LogStoreSystem

/// The entry points of compaction: thin, they check the store and take the compaction lock, and the
/// ``Compactor`` does the work.
extension Store {
    /// Compacts now: rewrites every sealed segment that holds any garbage (dead or superseded records,
    /// tombstones no longer needed), then deletes the old segments.
    ///
    /// Readers are never blocked for long; writers go on meanwhile. The background compactor (see
    /// ``CompactionOptions``) runs the same code.
    ///
    /// A pass never runs beside ``close()``: one in progress when another thread closes the store finishes
    /// first, and one asked for once the close has begun is refused with `closed`.
    ///
    /// The first pass after the store is opened that compacts anything first compares every hint file the open used with
    /// its segment (a read of those segments, as `verify` does): what the index took from a hint decides
    /// nothing until it is found true.
    /// - parameter progress: called from the compacting thread as bytes of the chosen segments are processed.
    /// - throws: ``LogStoreError`` with code `closed`, `readOnly`, `corruptFrame` when a chosen segment
    ///   is damaged (nothing is deleted then), `corruptHint` (naming the hint file) when a hint the open
    ///   used disagrees with its segment (nothing is compacted until the store is opened again; a true hint is written
    ///   in its place), or `ioError`.
    @discardableResult
    public func compact(progress: ((CompactionProgress) -> Void)? = nil) throws(LogStoreError) -> CompactionReport {
        guard !options.readOnly else { throw LogStoreError(.readOnly, "the store is open read-only", file: directory) }
        try checkWritable()
        try sealActiveSegmentIfItHoldsGarbage()
        return try compactSegments(garbageRatio: 0, progress: progress)
    }

    /// Rewrites every segment into segments of the format this version writes (version 2), dropping
    /// garbage on the way: the segment being written is sealed first, and every sealed segment is
    /// compacted whether it holds garbage or not. A store written by an older version is converted as a
    /// whole (it is also read as it is, and compaction converts what it rewrites). Segments a replica has
    /// not yet received whole (see ``replicate(to:)``) are left for a later call, after the replica's next
    /// pass.
    ///
    /// - throws: as ``compact(progress:)``.
    @discardableResult
    public func rewriteAllSegments(progress: ((CompactionProgress) -> Void)? = nil) throws(LogStoreError)
        -> CompactionReport
    {
        guard !options.readOnly else { throw LogStoreError(.readOnly, "the store is open read-only", file: directory) }
        try checkWritable()
        // A dictionary of today's records, before the seal: what is written from here on uses it, and the
        // rewrite recompresses every older record against it.
        let installed = options.compression && options.sharedDictionary ? try buildDictionaryFromLiveRecords() : nil
        try compaction.sealActiveSegment { _ in true }
        let report = try compactSegments(garbageRatio: 0, rewritingAll: true, progress: progress)
        if installed != nil { try removeUnusedDictionaries() }
        return report
    }

    /// Seals the segment being written when it holds garbage, so an on-demand pass reclaims that too;
    /// the next batch starts a new segment.
    func sealActiveSegmentIfItHoldsGarbage() throws(LogStoreError) {
        try compaction.sealActiveSegment { number in state.withLock { $0.segments.garbageBytes(of: number) } > 0 }
    }

    /// One pass over the sealed segments whose garbage share is at least `garbageRatio` (any garbage
    /// at all when 0).
    ///
    /// - parameter rewritingAll: every sealed segment, garbage or not.
    /// - parameter limit: at most this many segments, those with the largest garbage share first (nil: every
    ///   one that qualifies). The inputs of a pass are deleted at its end, so the disk holds them and their
    ///   copies meanwhile: the background compactor takes one segment per pass to keep that extra small.
    func compactSegments(
        garbageRatio: Double, rewritingAll: Bool = false, limit: Int? = nil, progress: ((CompactionProgress) -> Void)?
    ) throws(LogStoreError) -> CompactionReport {
        guard !options.readOnly else { throw LogStoreError(.readOnly, "the store is open read-only", file: directory) }
        try checkWritable()
        return try withCompactionLock { () throws(LogStoreError) -> CompactionReport in
            try compaction.pass(
                garbageRatio: garbageRatio, rewritingAll: rewritingAll, limit: limit, progress: progress)
        }
    }

    /// Runs `body` holding the compaction lock (one pass, dictionary removal or hint write at a time; see
    /// ``compactionLock`` for the lock order), waiting while another holds it.
    /// - throws: ``LogStoreError`` with code `closed` when ``close()`` has begun (nothing runs then), and
    ///   what `body` throws.
    func withCompactionLock<Result: Sendable>(_ body: () throws(LogStoreError) -> Result) throws(LogStoreError)
        -> Result
    {
        try compactionLock.withLock { closing throws(LogStoreError) -> Result in
            guard !closing else { throw LogStoreError(.closed, "the store is closed", file: directory) }
            return try body()
        }
    }
}
