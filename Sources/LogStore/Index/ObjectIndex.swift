@_spi(Engine) import LogStoreFormat
@_spi(Engine) import LogStoreSystem

/// Where the newest record of a live object is (segment, offset, length), its type tag, how many
/// references (from live objects and named roots) point at it, and its flags.
///
/// 24 bytes. `length == 0` marks an empty slot (no frame is shorter than 10 bytes).
struct IndexEntry: Equatable, Sendable {
    var segment: UInt32
    var offset: UInt32
    var length: UInt32
    var typeTag: UInt32
    /// References to this object from live objects' reference lists and from named roots.
    var incoming: UInt32 = 0
    /// ``pinnedFlag`` and ``pendingFlag``.
    var flags: UInt32 = 0

    /// The object was put pinned: a root of its own, never collected.
    static let pinnedFlag: UInt32 = 1 << 0
    /// In memory only: the record belongs to a batch that is not yet durable; readers use the
    /// durable version kept beside the index instead.
    static let pendingFlag: UInt32 = 1 << 31

    static let empty = IndexEntry(segment: 0, offset: 0, length: 0, typeTag: 0)
    var isEmpty: Bool { length == 0 }
    var isPinned: Bool { flags & Self.pinnedFlag != 0 }
    var isPending: Bool { flags & Self.pendingFlag != 0 }

    /// Whether both entries name the same record on disk (counts and flags aside).
    func isSameRecord(_ other: IndexEntry) -> Bool {
        segment == other.segment && offset == other.offset && length == other.length
    }
}

/// The in-memory index from object id to ``IndexEntry``.
///
/// Ids are handed out densely and in order, so the index is a two-level table rather than a hash
/// table: a page table indexed by `id >> 10`, and pages of 1,024 entries allocated on first use and
/// freed when their last object goes. A lookup is two array reads, no hashing, no probing. Memory is
/// 24 bytes per id slot of a used page, plus about 8 bytes per 1,024 ids ever allocated and a counter
/// per used page: about 24 bytes per object for stores whose objects mostly live, up to 24 KiB per
/// object in the worst case of one survivor per page (see `Documentation/Format.md`, "Index memory").
/// Pages far beyond the dense table (ids far apart) go to a dictionary, so no id can make the page
/// table grow out of proportion to the pages in use.
struct ObjectIndex: Sendable {
    static let pageShift = 10
    static let pageSize = 1 << pageShift

    /// Pages of entries for page numbers below `dense.count`; an empty array is a page not allocated.
    private var dense: [[IndexEntry]] = []
    /// Pages whose number is too far beyond the dense table to grow it (ids far apart, e.g. imported).
    private var sparse: [Int: [IndexEntry]] = [:]
    /// Live entries per dense page, to free a page when its last object goes.
    private var denseLive: [Int32] = []
    /// Live entries per sparse page.
    private var sparseLive: [Int: Int32] = [:]
    /// Pages allocated, dense and sparse.
    private var pagesInUse = 0
    /// Number of live objects.
    private(set) var count = 0

    /// The entry of `id`, or nil when it is not live.
    @inline(__always)
    func entry(_ id: UInt64) -> IndexEntry? {
        let pageNumber = Int(truncatingIfNeeded: id >> UInt64(Self.pageShift))
        let slot = Int(truncatingIfNeeded: id) & (Self.pageSize - 1)
        let entry: IndexEntry
        if pageNumber >= 0, pageNumber < dense.count {
            guard !dense[pageNumber].isEmpty else { return nil }
            entry = dense[pageNumber][slot]
        } else {
            guard !sparse.isEmpty, let page = sparse[pageNumber] else { return nil }
            entry = page[slot]
        }
        return entry.isEmpty ? nil : entry
    }

    /// Sets the entry of `id` and returns the one it replaced.
    @discardableResult
    mutating func set(_ id: UInt64, _ entry: IndexEntry) -> IndexEntry? {
        let pageNumber = Int(truncatingIfNeeded: id >> UInt64(Self.pageShift))
        let slot = Int(truncatingIfNeeded: id) & (Self.pageSize - 1)
        // Grow the dense table only while it stays proportional to the pages in use.
        if pageNumber >= dense.count, pageNumber >= 0, pageNumber < 4 * (pagesInUse + 256) {
            let missing = pageNumber + 1 - dense.count
            dense.append(contentsOf: repeatElement([], count: missing))
            denseLive.append(contentsOf: repeatElement(0, count: missing))
            for (number, page) in sparse where number < dense.count {
                dense[number] = page
                denseLive[number] = sparseLive[number] ?? 0
                sparse[number] = nil
                sparseLive[number] = nil
            }
        }
        let old: IndexEntry
        if pageNumber >= 0, pageNumber < dense.count {
            if dense[pageNumber].isEmpty {
                dense[pageNumber] = Self.emptyPage
                pagesInUse += 1
            }
            old = dense[pageNumber][slot]
            dense[pageNumber][slot] = entry
            if old.isEmpty { denseLive[pageNumber] += 1 }
        } else {
            if sparse[pageNumber] == nil { pagesInUse += 1 }
            old = sparse[pageNumber]?[slot] ?? .empty
            sparse[pageNumber, default: Self.emptyPage][slot] = entry
            if old.isEmpty { sparseLive[pageNumber, default: 0] += 1 }
        }
        guard old.isEmpty else { return old }
        count += 1
        return nil
    }

    /// Adds one to the incoming count of `id`, when it is live (wrapping, or staying at the maximum
    /// when `saturating`).
    @inline(__always)
    mutating func addIncoming(_ id: UInt64, saturating: Bool = false) {
        let pageNumber = Int(truncatingIfNeeded: id >> UInt64(Self.pageShift))
        let slot = Int(truncatingIfNeeded: id) & (Self.pageSize - 1)
        let step: UInt32 = 1
        if pageNumber >= 0, pageNumber < dense.count {
            guard !dense[pageNumber].isEmpty, !dense[pageNumber][slot].isEmpty else { return }
            if saturating, dense[pageNumber][slot].incoming == .max { return }
            dense[pageNumber][slot].incoming &+= step
        } else if sparse[pageNumber]?[slot].isEmpty == false {
            if saturating, sparse[pageNumber]?[slot].incoming == .max { return }
            sparse[pageNumber]?[slot].incoming &+= step
        }
    }

    /// Removes `id` and returns the entry it had.
    @discardableResult
    mutating func remove(_ id: UInt64) -> IndexEntry? {
        guard let old = entry(id) else { return nil }
        let pageNumber = Int(truncatingIfNeeded: id >> UInt64(Self.pageShift))
        let slot = Int(truncatingIfNeeded: id) & (Self.pageSize - 1)
        count -= 1
        if pageNumber >= 0, pageNumber < dense.count {
            denseLive[pageNumber] -= 1
            if denseLive[pageNumber] > 0 { dense[pageNumber][slot] = .empty } else { dense[pageNumber] = [] }
        } else {
            let remaining = (sparseLive[pageNumber] ?? 1) - 1
            sparseLive[pageNumber] = remaining > 0 ? remaining : nil
            if remaining > 0 { sparse[pageNumber]?[slot] = .empty } else { sparse[pageNumber] = nil }
        }
        if dense.indices.contains(pageNumber) ? dense[pageNumber].isEmpty : sparse[pageNumber] == nil {
            pagesInUse -= 1
        }
        return old
    }

    /// Calls `body` for every live object in increasing id order.
    func forEachLive(_ body: (UInt64, IndexEntry) -> Void) {
        func visit(_ pageNumber: Int, _ page: [IndexEntry]) {
            let first = UInt64(pageNumber) << UInt64(Self.pageShift)
            for (slot, entry) in page.enumerated() where !entry.isEmpty {
                body(first + UInt64(slot), entry)
            }
        }
        for (pageNumber, page) in dense.enumerated() where !page.isEmpty { visit(pageNumber, page) }
        for pageNumber in sparse.keys.sorted() { visit(pageNumber, sparse[pageNumber] ?? []) }
    }

    /// The first live object in increasing id order for which `predicate` holds, looking at no more than
    /// `limit` of them; nil when none of those does.
    func firstLive(limit: Int = .max, where predicate: (UInt64, IndexEntry) -> Bool) -> UInt64? {
        var looked = 0
        func search(_ pageNumber: Int, _ page: [IndexEntry]) -> UInt64? {
            let first = UInt64(pageNumber) << UInt64(Self.pageShift)
            for (slot, entry) in page.enumerated() where !entry.isEmpty {
                if looked >= limit { return nil }
                looked += 1
                if predicate(first + UInt64(slot), entry) { return first + UInt64(slot) }
            }
            return nil
        }
        for (pageNumber, page) in dense.enumerated() where !page.isEmpty {
            if let found = search(pageNumber, page) { return found }
            if looked >= limit { return nil }
        }
        for pageNumber in sparse.keys.sorted() {
            if let found = search(pageNumber, sparse[pageNumber] ?? []) { return found }
            if looked >= limit { return nil }
        }
        return nil
    }

    private static let emptyPage = [IndexEntry](repeating: .empty, count: pageSize)

    /// Bytes of memory the index holds (pages, page table, per-page counters), for statistics.
    var memoryBytes: Int {
        let pageBytes = Self.pageSize * MemoryLayout<IndexEntry>.stride + 32
        return pagesInUse * pageBytes + dense.capacity * (MemoryLayout<[IndexEntry]>.stride + 4)
            + sparse.capacity * 64
    }
}
