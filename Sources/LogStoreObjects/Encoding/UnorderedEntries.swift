import LogStore

/// Canonical encodings of unordered collections (dictionaries, sets) whose entries hold references.
///
/// Entries are sorted by their encoded key bytes, so equal collections encode alike whatever their
/// iteration order. A reference, though, is written as an index into the object's reference list, given
/// in the order references are met: encoding the entries in iteration order and sorting the bytes
/// afterwards would leave the indices (and the list) in iteration order, so a reloaded dictionary would
/// encode differently and be rewritten by every save. When an entry wrote a reference, the collection is
/// therefore encoded a second time, in the canonical order: by the ids its key refers to, then by the
/// key's bytes.
extension PayloadEncoder {
    /// Encodes `entries` (a key and, for dictionaries, a value each) into frame `frame`, in canonical
    /// order.
    func encodeUnordered<Key: Encodable, Value: Encodable>(
        _ entries: [(key: Key, value: Value?)], frame: Int, path: [any CodingKey]
    ) throws {
        let mark = unorderedMark()
        state.capturingReferences += 1
        defer { state.capturingReferences -= 1 }
        var ranges: [(start: Int, keyEnd: Int, end: Int)] = []
        var keyReferences: [[ObjectID]] = []
        ranges.reserveCapacity(entries.count)
        keyReferences.reserveCapacity(entries.count)
        for index in entries.indices {
            let start = try entryBoundary(in: frame, path: path)
            let before = capturedReferences.count
            try encodeKey(of: entries[index], at: index, frame: frame, path: path)
            keyReferences.append(before == capturedReferences.count ? [] : Array(capturedReferences[before...]))
            let keyEnd = try entryBoundary(in: frame, path: path)
            try encodeValue(of: entries[index], at: index, frame: frame, path: path)
            ranges.append((start, keyEnd, try entryBoundary(in: frame, path: path)))
        }
        guard capturedReferences.count > mark.captured else {
            sortEntries(ranges)
            return
        }
        let bytes = state.writer.bytes
        let order = entries.indices.sorted { lhs, rhs in
            if keyReferences[lhs] != keyReferences[rhs] {
                return keyReferences[lhs].lexicographicallyPrecedes(keyReferences[rhs]) { $0.rawValue < $1.rawValue }
            }
            let left = bytes[ranges[lhs].start..<ranges[lhs].keyEnd]
            return left.lexicographicallyPrecedes(bytes[ranges[rhs].start..<ranges[rhs].keyEnd])
        }
        rollBack(to: mark)
        for (position, index) in order.enumerated() {
            _ = try entryBoundary(in: frame, path: path)
            try encodeKey(of: entries[index], at: position, frame: frame, path: path)
            _ = try entryBoundary(in: frame, path: path)
            try encodeValue(of: entries[index], at: position, frame: frame, path: path)
        }
        _ = try entryBoundary(in: frame, path: path)
    }

    private func encodeKey<Key: Encodable, Value: Encodable>(
        of entry: (key: Key, value: Value?), at index: Int, frame: Int, path: [any CodingKey]
    ) throws {
        let step = entry.value == nil ? 1 : 2
        try encodeValue(entry.key, parent: frame, basePath: path, key: IndexKey(step * index))
    }

    private func encodeValue<Key: Encodable, Value: Encodable>(
        of entry: (key: Key, value: Value?), at index: Int, frame: Int, path: [any CodingKey]
    ) throws {
        guard let value = entry.value else { return }
        try encodeValue(value, parent: frame, basePath: path, key: IndexKey(2 * index + 1))
    }
}
