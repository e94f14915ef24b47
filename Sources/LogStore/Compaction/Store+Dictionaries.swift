@_spi(Engine) import LogStoreFormat
@_spi(Engine) import LogStoreSystem

/// The shared compression dictionary over a store's life: a new one built from the live records when the
/// whole store is rewritten, and the ones no live record names any more removed after it.
extension Store {
    /// Builds a dictionary from live records taken evenly across the ids (up to 256 KiB of payloads of 16
    /// bytes to 4 KiB) and makes it the one new writes and compaction compress against. Nil when no live
    /// record is of a size worth sampling.
    func buildDictionaryFromLiveRecords() throws(LogStoreError) -> CompressionDictionary? {
        let view = try snapshot()
        let ids = view.ids()
        guard !ids.isEmpty else { return nil }
        // About twice the records the gather target needs at the smallest sampled sizes, spread evenly.
        let wanted = 2 * DictionarySampler.gatherTarget / 128
        let stride = max(1, ids.count / wanted)
        var payloads: [[UInt8]] = []
        var total = 0
        var index = 0
        while index < ids.count, total < DictionarySampler.gatherTarget {
            if let record = try view.get(ids[index]),
                (CompactFrameEncoder.dictionaryMinimumSize...DictionarySampler.maximumSampledPayload).contains(
                    record.payload.count)
            {
                payloads.append(record.payload)
                total += record.payload.count
            }
            index += stride
        }
        let content = DictionarySampler.content(of: payloads, total: total)
        guard !content.isEmpty else { return nil }
        return try pipeline.installDictionary(content)
    }

    /// Deletes the dictionary files that no live record's frame names, but the newest: after a full
    /// rewrite recompressed every record against the newest, the older ones. Frames of dead records may
    /// still name a deleted dictionary; they are never read (snapshots hold the dictionaries they may
    /// read in memory).
    /// - returns: the ids removed.
    @discardableResult
    func removeUnusedDictionaries() throws(LogStoreError) -> [UInt32] {
        let view = try snapshot()
        let all = view.view.dictionaries.all
        guard all.count > 1 else { return [] }
        var named = Set<UInt32>()
        var undecodable = 0
        func note(_: UInt64, _ entry: IndexEntry) {
            guard let file = view.view.segments[entry.segment],
                Int(entry.offset) + Int(entry.length) <= file.mappedLength,
                case .success(let frame) = FrameDecoder.decode(
                    file.bytes(count: Int(entry.offset) + Int(entry.length)), at: Int(entry.offset),
                    format: file.format, verifyChecksum: false)
            else {
                undecodable += 1
                return
            }
            if frame.dictionary != 0 { named.insert(frame.dictionary) }
        }
        view.view.forEach(note)
        // A live record whose frame does not decode may name any dictionary: keep them all.
        guard undecodable == 0 else { return [] }
        let newest = all.last?.id ?? 0
        let unused = all.map(\.id).filter { $0 != newest && !named.contains($0) }
        // Pending batches are compressed against the newest; published ones are in the view.
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
        }
        return unused
    }
}
