@_spi(Engine) import LogStoreFormat
@_spi(Engine) import LogStoreSystem

/// Keeping the `SEGMENTS` manifest current: rewritten (temporary name, sync, rename, directory sync)
/// after a segment is created and before segments are deleted, so it never lists a segment that was
/// removed on purpose and a listed segment that is missing at open is data loss. A clean close records
/// the append segment's exact size in it; an open for writing removes that record before it writes.
extension Store {
    /// Writes the manifest of the segments the index holds now, with `cleanClose` when closing cleanly.
    func writeManifest(cleanClose: SegmentManifest.CleanClose? = nil) throws(LogStoreError) {
        try pipeline.writeManifest(cleanClose: cleanClose)
    }

    /// At open for writing: rewrites the manifest unless the one on disk already lists exactly the
    /// segments there are, records exactly the dictionaries there are (a manifest written before the
    /// store recorded its dictionaries gets their records now) and holds no clean-close record (so an open
    /// that has nothing to write, e.g. on a full disk, writes nothing).
    func refreshManifestAtOpen(onDisk: SegmentManifest?) throws(LogStoreError) {
        let (numbers, records) = state.withLock { ($0.segments.numbers, $0.dictionaries.records) }
        if let onDisk, onDisk.segments == numbers, onDisk.cleanClose == nil, onDisk.dictionaries ?? [] == records {
            return
        }
        try writeManifest()
    }

    /// At a clean close (everything written and synced, no failure): records the append segment and its
    /// size, so the next open knows that no tail of it can be torn. Records nothing when the size the
    /// store knows is not the file's.
    func recordCleanClose() throws(LogStoreError) {
        let append = state.withLock { state -> (SegmentFile, UInt64)? in
            let writerSegments = state.segments.all.filter { !SegmentStatistics.isOutput($0.file) }
            guard let newest = writerSegments.max(by: { $0.file.number < $1.file.number }) else { return nil }
            return (newest.file, newest.size)
        }
        var record = SegmentManifest.CleanClose(appendSegment: 0, appendSize: 0)
        if let (file, size) = append {
            guard (try? io.size(file.fd, path: file.path)) == size else { return }
            record = SegmentManifest.CleanClose(appendSegment: file.number, appendSize: size)
        }
        try writeManifest(cleanClose: record)
    }
}
