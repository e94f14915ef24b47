@_spi(Engine) import LogStoreFormat
@_spi(Engine) import LogStoreSystem
import Synchronization

/// Rewrites the `SEGMENTS` manifest (temporary name, sync, rename, directory sync) from the segments the
/// index holds, one rewrite at a time. The commit pipeline calls it after creating a segment, compaction
/// before deleting segments, the store at open and at a clean close.
final class ManifestWriter: Sendable {
    private let directory: String
    private let io: SystemIO
    private let index: ConditionLock<IndexState>
    /// The next id the store hands out: ids below it are reserved in the manifest.
    private let nextID: ConditionLock<UInt64>
    /// Serializes rewrites.
    private let lock = Mutex(())

    init(directory: String, io: SystemIO, index: ConditionLock<IndexState>, nextID: ConditionLock<UInt64>) {
        self.directory = directory
        self.io = io
        self.index = index
        self.nextID = nextID
    }

    /// Writes the manifest of the segments the index holds now, with `cleanClose` when closing cleanly.
    /// `reservedIDs` (read under the rewrite lock, so manifests never go back) is the pipeline's id
    /// reservation.
    func write(reservedIDs: () -> UInt64, cleanClose: SegmentManifest.CleanClose? = nil) throws(LogStoreError) {
        try lock.withLock { _ throws(LogStoreError) in
            let numbers = index.withLock { $0.segments.numbers }
            let reserved = max(reservedIDs(), nextID.withLock { $0 })
            try Self.write(
                SegmentManifest(segments: numbers, reservedIDs: reserved, cleanClose: cleanClose),
                directory: directory, io: io)
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
