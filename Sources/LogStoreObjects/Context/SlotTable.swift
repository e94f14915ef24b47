import LogStore

/// The identity cache's slots by object id: a table of small pages, found by `id >> 6`, no hashing.
///
/// Ids are handed out densely and a graph is mostly stored together, so a loaded graph fills whole
/// pages: 8 bytes per object plus a page header per 64, against ~40 bytes and a hash per lookup for a
/// `Dictionary` (which was a tenth of a cold load). A context that loads a few objects scattered over a
/// big store pays one 0.5 KiB page each. Page numbers far beyond the dense table (ids far apart) go to
/// an ``IDTable``, so no id can make the table grow out of proportion to the pages in use.
struct SlotTable {
    private static let pageShift = 6
    private static let pageSize = 1 << pageShift

    /// Pages for page numbers below `dense.count`; an empty array is a page not allocated.
    private var dense: [[ObjectSlot?]] = []
    /// Pages whose number is too far beyond the dense table to grow it.
    private var sparse = IDTable<[ObjectSlot?]>()
    /// Pages allocated, dense and sparse.
    private var pagesInUse = 0
    /// Slots held.
    private(set) var count = 0

    private static func position(_ id: ObjectID) -> (page: Int, slot: Int) {
        (
            Int(truncatingIfNeeded: id.rawValue >> UInt64(pageShift)),
            Int(truncatingIfNeeded: id.rawValue) & (pageSize - 1)
        )
    }

    /// The slot of `id`; setting nil removes it.
    subscript(id: ObjectID) -> ObjectSlot? {
        get {
            let (page, slot) = Self.position(id)
            if page >= 0, page < dense.count {
                return dense[page].isEmpty ? nil : dense[page][slot]
            }
            guard !sparse.isEmpty else { return nil }
            return sparse[ObjectID(UInt64(page))]?[slot]
        }
        set {
            let (page, slot) = Self.position(id)
            if page >= 0, page < dense.count || (newValue != nil && growDense(toInclude: page)) {
                if dense[page].isEmpty {
                    guard newValue != nil else { return }
                    dense[page] = Array(repeating: nil, count: Self.pageSize)
                    pagesInUse += 1
                }
                count += (newValue != nil ? 1 : 0) - (dense[page][slot] != nil ? 1 : 0)
                dense[page][slot] = newValue
                return
            }
            let key = ObjectID(UInt64(truncatingIfNeeded: page))
            if sparse[key] == nil {
                guard newValue != nil else { return }
                sparse[key] = Array(repeating: nil, count: Self.pageSize)
                pagesInUse += 1
            }
            let old = sparse.modifyValue(forKey: key) { page in
                defer { page[slot] = newValue }
                return page[slot]
            }
            count += (newValue != nil ? 1 : 0) - (old.flatMap { $0 } != nil ? 1 : 0)
        }
    }

    /// Grows the dense table to hold page `page` when that keeps it proportional to the pages in use
    /// (at most 64 page entries, 512 bytes, per page in use, and always 4,096); false otherwise.
    private mutating func growDense(toInclude page: Int) -> Bool {
        guard page >= 0, page < max(4096, (pagesInUse + 1) * 64) else { return false }
        dense.reserveCapacity(Swift.max(page + 1, dense.count * 2))
        dense.append(contentsOf: repeatElement([], count: page + 1 - dense.count))
        // Pages kept in the sparse table that the dense table now covers move into it.
        for (key, moved) in sparse where key.rawValue < UInt64(dense.count) {
            dense[Int(key.rawValue)] = moved
            sparse[key] = nil
        }
        return true
    }

    /// Every slot, with its id (a snapshot: the table may be changed while it is walked).
    var entries: [(ObjectID, ObjectSlot)] {
        var result: [(ObjectID, ObjectSlot)] = []
        result.reserveCapacity(count)
        func collect(_ page: [ObjectSlot?]) {
            for case let slot? in page { result.append((slot.id, slot)) }
        }
        for page in dense where !page.isEmpty { collect(page) }
        for (_, page) in sparse { collect(page) }
        return result
    }

    /// Keeps only the slots for which `keep` is true; frees pages left empty.
    mutating func filter(_ keep: (ObjectSlot) -> Bool) {
        for (id, slot) in entries where !keep(slot) { self[id] = nil }
        for index in dense.indices where !dense[index].isEmpty && !dense[index].contains(where: { $0 != nil }) {
            dense[index] = []
            pagesInUse -= 1
        }
        for (key, page) in sparse where !page.contains(where: { $0 != nil }) {
            sparse[key] = nil
            pagesInUse -= 1
        }
    }
}
