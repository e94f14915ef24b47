/// Where the newest record of a live object is: segment, offset, length, and its type tag.
///
/// 16 bytes. `length == 0` marks an empty slot (no frame is shorter than 44 bytes).
struct IndexEntry: Equatable, Sendable {
    var segment: UInt32
    var offset: UInt32
    var length: UInt32
    var typeTag: UInt32

    static let empty = IndexEntry(segment: 0, offset: 0, length: 0, typeTag: 0)
    var isEmpty: Bool { length == 0 }
}

/// The in-memory index from object id to ``IndexEntry``.
///
/// Ids are handed out densely and in order, so the index is a two-level table rather than a hash
/// table: a page table indexed by `id >> 10`, and pages of 1,024 entries allocated on first use and
/// freed when their last object goes. A lookup is two array reads, no hashing, no probing. Memory is
/// 16 bytes per id slot of a used page, plus 8 bytes per 1,024 ids ever allocated: about 16 bytes per
/// object for stores whose objects mostly live, up to 16 KiB per object in the worst case of one
/// survivor per page (see `Documentation/Format.md`, "Index memory").
struct ObjectIndex: Sendable {
    static let pageShift = 10
    static let pageSize = 1 << pageShift

    /// Pages of entries, indexed by page number; an empty array is a page not allocated.
    private(set) var pages: [[IndexEntry]] = []
    /// Live entries per page, to free a page when its last object goes.
    private var livePerPage: [UInt16] = []
    /// Number of live objects.
    private(set) var count = 0

    /// The entry of `id`, or nil when it is not live.
    @inline(__always)
    func entry(_ id: UInt64) -> IndexEntry? {
        let pageNumber = Int(truncatingIfNeeded: id >> UInt64(Self.pageShift))
        guard pageNumber >= 0, pageNumber < pages.count, !pages[pageNumber].isEmpty else { return nil }
        let entry = pages[pageNumber][Int(truncatingIfNeeded: id) & (Self.pageSize - 1)]
        return entry.isEmpty ? nil : entry
    }

    /// Sets the entry of `id` and returns the one it replaced.
    @discardableResult
    mutating func set(_ id: UInt64, _ entry: IndexEntry) -> IndexEntry? {
        let pageNumber = Int(truncatingIfNeeded: id >> UInt64(Self.pageShift))
        if pageNumber >= pages.count {
            let missing = pageNumber + 1 - pages.count
            pages.append(contentsOf: repeatElement([], count: missing))
            livePerPage.append(contentsOf: repeatElement(0, count: missing))
        }
        if pages[pageNumber].isEmpty {
            pages[pageNumber] = [IndexEntry](repeating: .empty, count: Self.pageSize)
        }
        let slot = Int(truncatingIfNeeded: id) & (Self.pageSize - 1)
        let old = pages[pageNumber][slot]
        pages[pageNumber][slot] = entry
        if old.isEmpty {
            livePerPage[pageNumber] += 1
            count += 1
            return nil
        }
        return old
    }

    /// Removes `id` and returns the entry it had.
    @discardableResult
    mutating func remove(_ id: UInt64) -> IndexEntry? {
        let pageNumber = Int(truncatingIfNeeded: id >> UInt64(Self.pageShift))
        guard pageNumber >= 0, pageNumber < pages.count, !pages[pageNumber].isEmpty else { return nil }
        let slot = Int(truncatingIfNeeded: id) & (Self.pageSize - 1)
        let old = pages[pageNumber][slot]
        guard !old.isEmpty else { return nil }
        pages[pageNumber][slot] = .empty
        livePerPage[pageNumber] -= 1
        count -= 1
        if livePerPage[pageNumber] == 0 { pages[pageNumber] = [] }
        return old
    }

    /// Calls `body` for every live object in increasing id order.
    func forEachLive(_ body: (UInt64, IndexEntry) -> Void) {
        for (pageNumber, page) in pages.enumerated() where !page.isEmpty {
            let first = UInt64(pageNumber) << UInt64(Self.pageShift)
            for (slot, entry) in page.enumerated() where !entry.isEmpty {
                body(first + UInt64(slot), entry)
            }
        }
    }

    /// Bytes of memory the index holds (pages and page table), for statistics.
    var memoryBytes: Int {
        let pageBytes = pages.reduce(0) { $0 + ($1.isEmpty ? 0 : Self.pageSize * MemoryLayout<IndexEntry>.stride + 32) }
        return pageBytes + pages.capacity * MemoryLayout<[IndexEntry]>.stride + livePerPage.capacity * 2
    }
}
