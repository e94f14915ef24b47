@_spi(Engine) import LogStoreFormat
@_spi(Engine) import LogStoreSystem

/// Hint files: written for every sealed segment (by the compactor thread, and for compaction outputs
/// as they are made), used by open instead of scanning, deleted with their segment.
///
/// Every writer of a hint holds the compaction lock (``Store/compactionLock``): a hint is written under a
/// temporary name that depends only on its segment, and a pass deletes the hints of its inputs.
extension Store {
    /// The hint files of the store's segments.
    var hints: HintFiles { HintFiles(state: state, io: io, directory: directory, encryption: options.encryption) }

    /// Writes the hint file of every sealed segment that has none yet, now (the background compactor
    /// does it too), so the next open rebuilds the index from hints instead of scanning. Waits while a
    /// compaction pass runs: it takes the compaction lock, so calling it from a compaction's `progress`
    /// callback deadlocks (as calling ``compact(progress:)`` there does).
    /// - throws: ``LogStoreError`` with code `closed`, `readOnly`, or `ioError`.
    public func writeHints() throws(LogStoreError) {
        guard !options.readOnly else { throw LogStoreError(.readOnly, "the store is open read-only", file: directory) }
        try checkOpen()
        try writeMissingHints()
    }

    /// Writes the hint file of every sealed segment that has none yet, under the compaction lock.
    /// - throws: ``LogStoreError`` with code `closed` once ``close()`` has begun, `ioError` when a hint
    ///   cannot be written.
    func writeMissingHints() throws(LogStoreError) {
        try withCompactionLock { () throws(LogStoreError) in try writeMissingHintsHoldingCompactionLock() }
    }

    /// ``writeMissingHints()`` for a caller that holds the compaction lock.
    func writeMissingHintsHoldingCompactionLock() throws(LogStoreError) {
        let missing = pipeline.withBusySegments { busy in
            state.withLock { state in
                state.segments.numbers.compactMap { number -> (SegmentFile, UInt64)? in
                    guard !busy.contains(number), let info = state.segments[number], !info.hasHint else { return nil }
                    return (info.file, info.size)
                }
            }
        }
        for (file, size) in missing where try hints.write(for: file, size: size) {
            state.withLock { $0.segments.recordHintWritten(file.number) }
        }
    }
}
