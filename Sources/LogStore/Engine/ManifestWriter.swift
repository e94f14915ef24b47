@_spi(Engine) import LogStoreFormat
@_spi(Engine) import LogStoreSystem

/// Rewrites the `SEGMENTS` manifest (temporary name, sync, rename, directory sync) from the segments and
/// dictionaries the index holds, one rewrite at a time. The commit pipeline calls it after creating a
/// segment and after writing a dictionary file (before any frame names it), compaction before deleting
/// segments, the store at open, after deleting dictionaries and at a clean close.
final class ManifestWriter: Sendable {
    private let directory: String
    private let io: SystemIO
    private let index: ConditionLock<IndexState>
    /// The next id the store hands out: ids below it are reserved in the manifest.
    private let nextID: ConditionLock<UInt64>
    /// Serializes rewrites; holds what they wrote.
    private let lock: RankedMutex<Written>

    /// What the rewrites wrote so far.
    private struct Written {
        /// The highest id reservation written, so manifests never go back.
        var reservedIDs: UInt64 = 0
        /// The highest dictionary id any manifest of the store may record: the one the manifest read at
        /// open recorded, and every one a rewrite tried to record since (a rewrite that failed may still
        /// have replaced the manifest).
        var highestDictionaryID: UInt32
    }

    /// `recordedDictionaryID` is the highest dictionary id the manifest read at open records (0 for none).
    init(
        directory: String, io: SystemIO, index: ConditionLock<IndexState>, nextID: ConditionLock<UInt64>,
        recordedDictionaryID: UInt32 = 0
    ) {
        self.directory = directory
        self.io = io
        self.index = index
        self.nextID = nextID
        self.lock = RankedMutex(Written(highestDictionaryID: recordedDictionaryID), rank: .manifest)
    }

    /// The highest dictionary id a manifest of the store may record: the manifest read at open, or one
    /// written (or tried) since. A new dictionary takes a higher id, so no id is ever recorded with two
    /// contents.
    var highestDictionaryID: UInt32 { lock.withLock { $0.highestDictionaryID } }

    /// Writes the manifest of the segments and dictionaries the index holds now, with `cleanClose` when
    /// closing cleanly. `reservedIDs` is the pipeline's id reservation, read by the caller (which may hold
    /// the queue lock: this takes no lock of the pipeline); the manifest records the largest of it, every
    /// reservation written before and the next id.
    ///
    /// `adding` is a new dictionary (its file already durable): the manifest records it too, and it is
    /// added to the index only once the manifest is durable, before any later rewrite can start (so every
    /// later manifest records it). Until then nothing (no commit, no compaction pass) can find it and
    /// write a frame that names it; when the write fails it never reaches the index.
    func write(
        reservedIDs: UInt64, cleanClose: SegmentManifest.CleanClose? = nil,
        adding dictionary: CompressionDictionary? = nil
    ) throws(LogStoreError) {
        try lock.withLock { written throws(LogStoreError) in
            var (numbers, dictionaries) = index.withLock { ($0.segments.numbers, $0.dictionaries.records) }
            if let dictionary, !dictionaries.contains(where: { $0.id == dictionary.id }) {
                dictionaries.append(
                    SegmentManifest.DictionaryRecord(
                        id: dictionary.id, contentLength: UInt32(dictionary.content.count),
                        contentChecksum: dictionary.contentChecksum))
                dictionaries.sort { $0.id < $1.id }
            }
            let reserved = max(reservedIDs, written.reservedIDs, nextID.withLock { $0 })
            // Before the write: a rewrite that fails after its rename has recorded these ids all the same.
            written.highestDictionaryID = max(written.highestDictionaryID, dictionaries.last?.id ?? 0)
            try Self.write(
                SegmentManifest(
                    segments: numbers, reservedIDs: reserved, cleanClose: cleanClose,
                    dictionaries: dictionaries.isEmpty ? nil : dictionaries),
                directory: directory, io: io)
            written.reservedIDs = reserved
            if let dictionary { index.withLock { $0.dictionaries.add(dictionary) } }
        }
    }

    static func write(_ manifest: SegmentManifest, directory: String, io: SystemIO) throws(LogStoreError) {
        let path = directory + "/" + SegmentManifest.fileName
        let bytes = manifest.encoded()
        do {
            try io.replaceFile(path, with: bytes, directory: directory)
        } catch {
            throw LogStoreError.writeFailed(
                "write the segment manifest", file: path, bytes: bytes.count, underlying: error)
        }
    }
}
