import LogStore

/// Index entries in order: a list of sorted chunks of at most ``chunkLimit`` entries (a two-level B-tree),
/// so an insert or a removal moves at most one chunk's entries and the chunk list. One layer of
/// ``SortedEntries``.
struct EntryChunks: Sendable {
    /// A chunk splits in two when it grows past this.
    static let chunkLimit = 128
    private(set) var chunks: [[IndexEntryKey]] = []
    /// The last entry of each chunk, in one contiguous array: the search for a chunk reads it instead of
    /// each chunk's storage (one cache miss per chunk visited otherwise).
    private(set) var fences: [IndexEntryKey] = []
    private(set) var count = 0

    /// The chunk an entry belongs in: the first whose last entry is not below it (the last chunk if none).
    private func chunkIndex(for entry: IndexEntryKey) -> Int {
        fences.withUnsafeBufferPointer { fences in
            min(Self.partitionPoint(fences.count) { Self.precedes(fences, $0, entry) }, fences.count - 1)
        }
    }

    /// The first index in `0..<count` for which `before` is false (`count` if none), for a `before` that
    /// is true up to some index and false from there (a binary search).
    @inline(__always)
    private static func partitionPoint(_ count: Int, _ before: (Int) -> Bool) -> Int {
        var low = 0
        var high = count
        while low < high {
            let middle = (low + high) / 2
            if before(middle) { low = middle + 1 } else { high = middle }
        }
        return low
    }

    /// Whether `entries[index]` orders before `entry`: by prefix when the prefixes differ (reading no key
    /// and retaining nothing), else in full.
    @inline(__always)
    private static func precedes(_ entries: UnsafeBufferPointer<IndexEntryKey>, _ index: Int, _ entry: IndexEntryKey)
        -> Bool
    {
        let prefix = entries[index].prefix
        if prefix != entry.prefix { return prefix < entry.prefix }
        return entries[index] < entry
    }

    /// Sets the fence of chunk `index` from its last entry.
    private mutating func updateFence(_ index: Int) {
        if let last = chunks[index].last { fences[index] = last }
    }

    private static func position(of entry: IndexEntryKey, in chunk: [IndexEntryKey]) -> Int {
        chunk.withUnsafeBufferPointer { chunk in partitionPoint(chunk.count) { precedes(chunk, $0, entry) } }
    }

    /// Entries already in order (a build from nothing: one sort instead of an insert each), in full chunks.
    init(sorted entries: [IndexEntryKey]) {
        let size = Self.chunkLimit
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
        firstPosition(after: after, prefix: key.first.sortPrefix) { $0.compare(key) }
    }

    /// The position of the first entry whose key's first fields are not below `prefix` (`after` false), or
    /// above it: an entry `[a, b]` is within the prefix `[a]`.
    func position(ofPrefix prefix: [IndexValue], after: Bool) -> Position {
        firstPosition(after: after, prefix: prefix.first?.sortPrefix) { key in
            for (field, value) in prefix.enumerated() {
                guard let own = key.value(at: field) else { return -1 }
                let result = own.compare(value)
                if result != 0 { return result }
            }
            return 0
        }
    }

    /// The first position whose entry is not before the sought key (`compare` of an entry's key with it is
    /// not below 0, or above 0 when `after`); `prefix` is the sought first field's ``IndexValue/sortPrefix``
    /// (entries with another prefix are placed by it alone).
    private func firstPosition(after: Bool, prefix: UInt64?, _ compare: (CompoundKey) -> Int) -> Position {
        func before(_ entries: UnsafeBufferPointer<IndexEntryKey>, _ index: Int) -> Bool {
            if let prefix, entries[index].prefix != prefix { return entries[index].prefix < prefix }
            let result = compare(entries[index].key)
            return after ? result <= 0 : result < 0
        }
        let low = fences.withUnsafeBufferPointer { fences in Self.partitionPoint(fences.count) { before(fences, $0) } }
        guard low < chunks.count else { return endPosition }
        let index = chunks[low].withUnsafeBufferPointer { chunk in
            Self.partitionPoint(chunk.count) { before(chunk, $0) }
        }
        return Position(chunk: low, index: index)
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

    /// Adds every entry of `other` (both in order, no entry in both). Each chunk takes the entries that
    /// fall in it by moving its own within its storage (no entry is copied); one that grows past
    /// ``chunkLimit`` is split in chunks half full.
    mutating func merge(_ other: EntryChunks) {
        guard other.count > 0 else { return }
        guard !chunks.isEmpty else {
            self = other
            return
        }
        var incoming: [IndexEntryKey] = []
        incoming.reserveCapacity(other.count)
        for chunk in other.chunks { incoming.append(contentsOf: chunk) }
        var taken = 0
        var newChunks: [[IndexEntryKey]] = []
        var newFences: [IndexEntryKey] = []
        newChunks.reserveCapacity(chunks.count + incoming.count / (Self.chunkLimit / 2) + 1)
        newFences.reserveCapacity(newChunks.capacity)
        for index in chunks.indices {
            var end = taken
            if index == chunks.count - 1 {
                end = incoming.count
            } else {
                while end < incoming.count && !(fences[index] < incoming[end]) { end += 1 }
            }
            var chunk: [IndexEntryKey] = []
            swap(&chunk, &chunks[index])
            if end > taken {
                Self.mergeInPlace(&chunk, incoming[taken..<end])
                taken = end
            }
            if chunk.count <= Self.chunkLimit {
                newChunks.append(chunk)
                newFences.append(chunk.last ?? fences[index])
                continue
            }
            let pieces = (chunk.count + Self.chunkLimit / 2 - 1) / (Self.chunkLimit / 2)
            for piece in 0..<pieces {
                let part = Array(chunk[piece * chunk.count / pieces..<(piece + 1) * chunk.count / pieces])
                if let last = part.last {
                    newChunks.append(part)
                    newFences.append(last)
                }
            }
        }
        chunks = newChunks
        fences = newFences
        count += other.count
    }

    /// Merges `incoming` (in order) into `chunk` (in order) from the back, moving entries rather than
    /// copying them (no reference counting).
    private static func mergeInPlace(_ chunk: inout [IndexEntryKey], _ incoming: ArraySlice<IndexEntryKey>) {
        let oldCount = chunk.count
        let added = incoming.count
        chunk.append(contentsOf: incoming)
        chunk.withUnsafeMutableBufferPointer { buffer in
            guard let base = buffer.baseAddress else { return }
            // The added entries wait aside; the slots they leave are filled from the back, the larger of
            // the last unplaced chunk entry and the last waiting one first. Slots from `write` down to
            // `existing + 1` are the uninitialized ones (as many as entries still waiting).
            let waiting = UnsafeMutablePointer<IndexEntryKey>.allocate(capacity: added)
            defer { waiting.deallocate() }
            waiting.moveInitialize(from: base + oldCount, count: added)
            var existing = oldCount - 1
            var next = added - 1
            var write = oldCount + added - 1
            while next >= 0 {
                if existing >= 0 && waiting[next] < base[existing] {
                    (base + write).moveInitialize(from: base + existing, count: 1)
                    existing -= 1
                } else {
                    (base + write).moveInitialize(from: waiting + next, count: 1)
                    next -= 1
                }
                write -= 1
            }
        }
    }

    /// `position` moved past the ends of chunks (to the next chunk's start, or ``endPosition``).
    func normalized(_ position: Position) -> Position {
        var position = position
        while position.chunk < chunks.count && position.index >= chunks[position.chunk].count {
            position = Position(chunk: position.chunk + 1, index: 0)
        }
        return position
    }

    /// The entry at a normalized position before ``endPosition``.
    func entry(at position: Position) -> IndexEntryKey { chunks[position.chunk][position.index] }

    /// The normalized position after `position`.
    func position(after position: Position) -> Position {
        normalized(Position(chunk: position.chunk, index: position.index + 1))
    }

    /// The position before `position` (nil at the start).
    func position(before position: Position) -> Position? {
        var chunk = min(position.chunk, chunks.count)
        var index = chunk < chunks.count ? min(position.index, chunks[chunk].count) : 0
        while index == 0 {
            guard chunk > 0 else { return nil }
            chunk -= 1
            index = chunks[chunk].count
        }
        return Position(chunk: chunk, index: index - 1)
    }

    /// Bytes of memory the entries take (their inline size; strings' and compound keys' heap storage not
    /// counted).
    var inlineBytes: Int { (count + fences.count) * MemoryLayout<IndexEntryKey>.stride + chunks.count * 32 }
}
