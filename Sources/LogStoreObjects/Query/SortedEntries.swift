import LogStore

/// The entries of one index in order: a list of sorted chunks of at most ``chunkLimit`` entries (a
/// two-level B-tree), so an insert or a removal moves at most one chunk's entries and the chunk list.
struct SortedEntries: Sendable {
    /// A chunk splits in two when it grows past this.
    static let chunkLimit = 128
    private(set) var chunks: [[IndexEntryKey]] = []
    /// The last entry of each chunk, in one contiguous array: the search for a chunk reads it instead of
    /// each chunk's storage (one cache miss per chunk visited otherwise).
    private(set) var fences: [IndexEntryKey] = []
    private(set) var count = 0

    /// The chunk an entry belongs in: the first whose last entry is not below it (the last chunk if none).
    private func chunkIndex(for entry: IndexEntryKey) -> Int {
        var low = 0
        var high = fences.count - 1
        while low < high {
            let middle = (low + high) / 2
            if fences[middle] < entry { low = middle + 1 } else { high = middle }
        }
        return low
    }

    /// Sets the fence of chunk `index` from its last entry.
    private mutating func updateFence(_ index: Int) {
        if let last = chunks[index].last { fences[index] = last }
    }

    private static func position(of entry: IndexEntryKey, in chunk: [IndexEntryKey]) -> Int {
        var low = 0
        var high = chunk.count
        while low < high {
            let middle = (low + high) / 2
            if chunk[middle] < entry { low = middle + 1 } else { high = middle }
        }
        return low
    }

    /// Entries already in order (a build from nothing: one sort instead of an insert each), in chunks half
    /// full so that the inserts after it rarely split one.
    init(sorted entries: [IndexEntryKey]) {
        let size = Self.chunkLimit / 2
        chunks.reserveCapacity((entries.count + size - 1) / size)
        var start = 0
        while start < entries.count {
            let end = min(start + size, entries.count)
            chunks.append(Array(entries[start..<end]))
            fences.append(entries[end - 1])
            start = end
        }
        count = entries.count
    }

    init() {}

    mutating func insert(_ entry: IndexEntryKey) {
        count += 1
        guard !chunks.isEmpty else {
            chunks.append([entry])
            fences.append(entry)
            return
        }
        let index = chunkIndex(for: entry)
        let position = Self.position(of: entry, in: chunks[index])
        chunks[index].insert(entry, at: position)
        if position == chunks[index].count - 1 { fences[index] = entry }
        if chunks[index].count > Self.chunkLimit {
            let upper = Array(chunks[index][(Self.chunkLimit / 2)...])
            chunks[index].removeSubrange((Self.chunkLimit / 2)...)
            chunks.insert(upper, at: index + 1)
            fences.insert(fences[index], at: index + 1)
            updateFence(index)
        }
    }

    /// Removes `entry`; false when it is not there.
    @discardableResult
    mutating func remove(_ entry: IndexEntryKey) -> Bool {
        guard !chunks.isEmpty else { return false }
        let index = chunkIndex(for: entry)
        let position = Self.position(of: entry, in: chunks[index])
        guard position < chunks[index].count, chunks[index][position] == entry else { return false }
        chunks[index].remove(at: position)
        if chunks[index].isEmpty {
            chunks.remove(at: index)
            fences.remove(at: index)
        } else if position == chunks[index].count {
            updateFence(index)
        }
        count -= 1
        return true
    }

    /// A position: chunk and index within it.
    struct Position: Comparable {
        var chunk: Int
        var index: Int
        static func < (lhs: Position, rhs: Position) -> Bool {
            (lhs.chunk, lhs.index) < (rhs.chunk, rhs.index)
        }
    }

    var startPosition: Position { Position(chunk: 0, index: 0) }
    var endPosition: Position { Position(chunk: chunks.count, index: 0) }

    /// The position of the first entry whose key is not below `key` (`after` false), or above it.
    func position(ofKey key: CompoundKey, after: Bool) -> Position {
        firstPosition(after: after) { $0.compare(key) }
    }

    /// The position of the first entry whose key's first fields are not below `prefix` (`after` false), or
    /// above it: an entry `[a, b]` is within the prefix `[a]`.
    func position(ofPrefix prefix: [IndexValue], after: Bool) -> Position {
        firstPosition(after: after) { key in
            for (field, value) in prefix.enumerated() {
                guard let own = key.value(at: field) else { return -1 }
                let result = own.compare(value)
                if result != 0 { return result }
            }
            return 0
        }
    }

    private func firstPosition(after: Bool, _ compare: (CompoundKey) -> Int) -> Position {
        var low = 0
        var high = chunks.count
        func before(_ entry: IndexEntryKey) -> Bool {
            let result = compare(entry.key)
            return after ? result <= 0 : result < 0
        }
        while low < high {
            let middle = (low + high) / 2
            if before(fences[middle]) { low = middle + 1 } else { high = middle }
        }
        guard low < chunks.count else { return endPosition }
        let chunk = chunks[low]
        var lowIndex = 0
        var highIndex = chunk.count
        while lowIndex < highIndex {
            let middle = (lowIndex + highIndex) / 2
            if before(chunk[middle]) { lowIndex = middle + 1 } else { highIndex = middle }
        }
        return Position(chunk: low, index: lowIndex)
    }

    /// Calls `body` with each entry from `start` (inclusive) to `end` (exclusive), in order, until it
    /// returns false.
    func forEach(from start: Position, to end: Position, _ body: (IndexEntryKey) -> Bool) {
        var chunk = start.chunk
        var index = start.index
        while chunk < chunks.count && Position(chunk: chunk, index: index) < end {
            let entries = chunks[chunk]
            while index < entries.count {
                if chunk == end.chunk && index >= end.index { return }
                if !body(entries[index]) { return }
                index += 1
            }
            chunk += 1
            index = 0
        }
    }

    /// Calls `body` with each entry from `end` (exclusive) back to `start` (inclusive), until it returns
    /// false.
    func forEachReversed(from start: Position, to end: Position, _ body: (IndexEntryKey) -> Bool) {
        var chunk = min(end.chunk, chunks.count - 1)
        var index = end.chunk < chunks.count ? end.index - 1 : (chunks.last?.count ?? 0) - 1
        while chunk >= 0 {
            if index < 0 {
                chunk -= 1
                if chunk >= 0 { index = chunks[chunk].count - 1 }
                continue
            }
            if Position(chunk: chunk, index: index) < start { return }
            if !body(chunks[chunk][index]) { return }
            index -= 1
        }
    }

    /// Bytes of memory the entries take (their inline size; strings' and compound keys' heap storage not
    /// counted).
    var inlineBytes: Int { (count + fences.count) * MemoryLayout<IndexEntryKey>.stride + chunks.count * 32 }
}
