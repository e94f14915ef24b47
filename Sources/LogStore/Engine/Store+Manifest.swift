/// Keeping the `SEGMENTS` manifest current: rewritten (temporary name, sync, rename, directory sync)
/// after a segment is created and before segments are deleted, so it never lists a segment that was
/// removed on purpose and a listed segment that is missing at open is data loss.
extension Store {
    /// Writes the manifest of the segments the state holds now.
    func writeManifest() throws(LogStoreError) {
        try manifestLock.withLock { _ throws(LogStoreError) in
            let numbers = state.withLock { $0.segments.keys.sorted() }
            let reserved = max(queue.withLock { $0.reservedIDs }, nextID.withLock { $0 })
            try Self.writeManifest(
                SegmentManifest(segments: numbers, reservedIDs: reserved), directory: directory, io: io)
        }
    }

    static func writeManifest(_ manifest: SegmentManifest, directory: String, io: SystemIO) throws(LogStoreError) {
        let path = directory + "/" + SegmentManifest.fileName
        do {
            try io.replaceFile(path, with: manifest.encoded(), directory: directory)
        } catch {
            throw LogStoreError(.ioError, "cannot write the segment manifest", file: path, underlying: error)
        }
    }
}
