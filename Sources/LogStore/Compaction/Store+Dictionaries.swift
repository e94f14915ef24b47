@_spi(Engine) import LogStoreFormat
@_spi(Engine) import LogStoreSystem

/// The shared compression dictionary over a store's life: a new one built from the live records when the
/// whole store is rewritten, and the ones no frame on disk names any more removed after it.
extension Store {
    /// Builds a dictionary from live records taken evenly across the ids (up to 256 KiB of payloads of 16
    /// bytes to 4 KiB; a record that cannot be read is passed over) and makes it the one new writes and
    /// compaction compress against. Nil when no live record is of a size worth sampling.
    /// - returns: the dictionary and the sequence number of the last batch compressed against another.
    func buildDictionaryFromLiveRecords() throws(LogStoreError) -> (dictionary: CompressionDictionary, fence: UInt64)? {
        let view = try snapshot()
        let count = view.count()
        guard count > 0 else { return nil }
        // About twice the records the gather target needs at the smallest sampled sizes, spread evenly.
        let wanted = 2 * DictionarySampler.gatherTarget / 128
        let stride = max(1, count / wanted)
        var payloads: [[UInt8]] = []
        var total = 0
        var position = 0
        func sample(_ id: UInt64, _: IndexEntry) {
            defer { position += 1 }
            guard position % stride == 0, total < DictionarySampler.gatherTarget,
                let record = try? view.get(ObjectID(id)),
                (CompactFrameEncoder.dictionaryMinimumSize...DictionarySampler.maximumSampledPayload).contains(
                    record.payload.count)
            else { return }
            payloads.append(record.payload)
            total += record.payload.count
        }
        view.view.forEach(sample)
        let content = DictionarySampler.content(of: payloads, total: total)
        guard !content.isEmpty else { return nil }
        return try pipeline.installDictionary(content)
    }

    /// Deletes the dictionary files that no frame in any segment on disk names, but the newest: after a full
    /// rewrite recompressed every record against the newest, the older ones.
    ///
    /// Frames of dead records count too (a crash can make an older version of a record the newest durable
    /// one again). Under the compaction lock (no pass writes meanwhile), it first waits until every batch
    /// encoded before the newest dictionary was installed is written; later batches, and every dictionary
    /// installed meanwhile, name only that one or newer ones, which are kept. When a segment cannot be read
    /// to its end, nothing is deleted. Snapshots hold the dictionaries they may read in memory.
    /// - returns: the ids removed.
    @discardableResult
    func removeUnusedDictionaries() throws(LogStoreError) -> [UInt32] {
        try withCompactionLock { () throws(LogStoreError) -> [UInt32] in
            guard let newest = pipeline.newestDictionary else { return [] }
            try pipeline.awaitDurable(newest.fence)
            let (all, files) = state.withLock { state in
                (state.dictionaries.all, state.segments.all.map { ($0.file, $0.size) })
            }
            let active = pipeline.activeSegment
            var named = Set(all.map(\.id).filter { $0 >= newest.id })
            guard named.count < all.count else { return [] }
            for (file, recordedSize) in files {
                guard case .v2 = file.format else { continue }  // version 1 names no dictionary
                let size = active?.number == file.number ? active?.size ?? recordedSize : recordedSize
                guard let found = Self.dictionariesNamed(in: file, size: size) else { return [] }
                named.formUnion(found)
            }
            let unused = all.map(\.id).filter { !named.contains($0) }
            for id in unused {
                state.withLock { $0.dictionaries.remove(id) }
                try StoreDictionaries.remove(id: id, in: directory, io: io)
            }
            if !unused.isEmpty {
                do {
                    try io.syncDirectory(directory)
                } catch {
                    throw LogStoreError(.ioError, "cannot sync the store directory", file: directory, underlying: error)
                }
                // No longer recorded (a record whose file is gone is harmless until then: nothing names it).
                try writeManifest()
            }
            return unused
        }
    }

    /// The dictionaries the frames of a version-2 segment name, walking its first `size` bytes (headers
    /// only); nil when the walk does not reach `size` (damage, or an unfinished batch).
    private static func dictionariesNamed(in file: SegmentFile, size: UInt64) -> Set<UInt32>? {
        guard size <= UInt64(file.mappedLength) else { return nil }
        var named: Set<UInt32> = []
        let outcome = SegmentScanner(bytes: file.bytes(count: Int(size)), verifyChecksums: false).scan { frame in
            if frame.dictionary != 0 { named.insert(frame.dictionary) }
        }
        guard outcome.damages.isEmpty, outcome.committedEnd == Int(size) else { return nil }
        return named
    }
}
