@_spi(Engine) import LogStoreFormat
@_spi(Engine) import LogStoreSystem
import Synchronization

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
    /// Serializes rewrites; holds the highest id reservation written, so manifests never go back.
    private let lock = Mutex<UInt64>(0)

    init(directory: String, io: SystemIO, index: ConditionLock<IndexState>, nextID: ConditionLock<UInt64>) {
        self.directory = directory
        self.io = io
        self.index = index
        self.nextID = nextID
    }

    /// Writes the manifest of the segments and dictionaries the index holds now, with `cleanClose` when
    /// closing cleanly. `reservedIDs` is the pipeline's id reservation, read by the caller (which may hold
    /// the queue lock: this takes no lock of the pipeline); the manifest records the largest of it, every
    /// reservation written before and the next id.
    func write(reservedIDs: UInt64, cleanClose: SegmentManifest.CleanClose? = nil) throws(LogStoreError) {
        try lock.withLock { written throws(LogStoreError) in
            let (numbers, dictionaries) = index.withLock { ($0.segments.numbers, $0.dictionaries.records) }
            let reserved = max(reservedIDs, written, nextID.withLock { $0 })
            try Self.write(
                SegmentManifest(
                    segments: numbers, reservedIDs: reserved, cleanClose: cleanClose,
                    dictionaries: dictionaries.isEmpty ? nil : dictionaries),
                directory: directory, io: io)
            written = reserved
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
