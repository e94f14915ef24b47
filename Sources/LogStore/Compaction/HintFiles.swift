@_spi(Engine) import LogStoreFormat
@_spi(Engine) import LogStoreSystem

/// The hint files of a store's segments: writing one for a sealed segment, and checking the ones open
/// rebuilt segments from (``checkEveryReplayedHint()``). Used by compaction, mark-sweep and the writes of
/// missing hints, each holding the compaction lock (``Store/compactionLock``): a hint is written under a
/// temporary name that depends only on its segment, and a pass deletes the hints of its inputs.
struct HintFiles: Sendable {
    /// The index lock: the segment table says which hints exist and which are not checked yet.
    let state: ConditionLock<IndexState>
    let io: SystemIO
    /// The store's directory.
    let directory: String

    /// Writes the hint of one sealed segment: under a temporary name, synced, renamed, directory synced.
    /// Call with the compaction lock held.
    /// - returns: false when no hint can be built (the segment is not sealed, or is damaged).
    @discardableResult
    func write(for file: SegmentFile, size: UInt64) throws(LogStoreError) -> Bool {
        guard let hint = HintWriter.hint(segment: file.number, bytes: file.bytes(count: Int(size))) else {
            return false
        }
        let path = directory + "/" + HintFile.fileName(file.number)
        do {
            try io.replaceFile(path, with: hint, directory: directory)
        } catch {
            throw LogStoreError(.ioError, "cannot write a hint file", file: path, underlying: error)
        }
        return true
    }
}
