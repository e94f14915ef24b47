import LogStore

/// The identity cache's slots by object id: a table of small pages, found by `id >> 4`, no hashing.
///
/// Ids are handed out densely and a graph is mostly stored together, so a loaded graph fills whole
/// pages: 8 bytes per object plus a page header per 16, against ~40 bytes and a hash per lookup for a
/// `Dictionary` (which was a tenth of a cold load). A context that loads objects scattered over a big
/// store (a query's results) pays one 160-byte page each. Page numbers far beyond the dense table (ids
/// far apart) go to an ``IDTable``, so no id can make the table grow out of proportion to the pages in use.
struct SlotTable {
    private static let pageShift = 4
    private static let pageSize = 1 << pageShift

    /// Pages for page numbers below `dense.count`; nil is a page not allocated.
    private var dense: [SlotPage?] = []
    /// Pages whose number is too far beyond the dense table to grow it.
    private var sparse = IDTable<SlotPage>()
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
            if page >= 0, page < dense.count { return dense[page]?[slot] }
            guard !sparse.isEmpty else { return nil }
            return sparse[ObjectID(UInt64(page))]?[slot]
        }
        set {
            let (page, slot) = Self.position(id)
            if page >= 0, page < dense.count || (newValue != nil && growDense(toInclude: page)) {
                if dense[page] == nil {
                    guard newValue != nil else { return }
                    dense[page] = SlotPage.make(size: Self.pageSize)
                    pagesInUse += 1
                } else if !isKnownUniquelyReferenced(&dense[page]) {
                    dense[page] = dense[page]?.copy()
                }
                guard let target = dense[page] else { return }
                count += (newValue != nil ? 1 : 0) - (target[slot] != nil ? 1 : 0)
                target[slot] = newValue
                return
            }
            let key = ObjectID(UInt64(truncatingIfNeeded: page))
            if sparse[key] == nil {
                guard newValue != nil else { return }
                sparse[key] = SlotPage.make(size: Self.pageSize)
                pagesInUse += 1
            }
            let old = sparse.modifyValue(forKey: key) { page -> ObjectSlot? in
                if !isKnownUniquelyReferenced(&page) { page = page.copy() }
                defer { page[slot] = newValue }
                return page[slot]
            }
            count += (newValue != nil ? 1 : 0) - (old.flatMap { $0 } != nil ? 1 : 0)
        }
    }

    /// Grows the dense table to hold page `page` when that keeps it proportional to the pages in use
    /// (at most 64 page entries, 512 bytes, per page in use, and always 16,384); false otherwise.
    private mutating func growDense(toInclude page: Int) -> Bool {
        guard page >= 0, page < max(16_384, (pagesInUse + 1) * 64) else { return false }
        // Capacity doubles (reserving on every call would reallocate the table for each new page).
        if dense.capacity <= page { dense.reserveCapacity(Swift.max(page + 1, dense.count * 2)) }
        dense.append(contentsOf: repeatElement(nil, count: page + 1 - dense.count))
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
        func collect(_ page: SlotPage) {
            for index in 0..<Self.pageSize {
                if let slot = page[index] { result.append((slot.id, slot)) }
            }
        }
        for case let page? in dense { collect(page) }
        for (_, page) in sparse { collect(page) }
        return result
    }

    /// Keeps only the slots for which `keep` is true; frees pages left empty.
    mutating func filter(_ keep: (ObjectSlot) -> Bool) {
        for (id, slot) in entries where !keep(slot) { self[id] = nil }
        func isEmpty(_ page: SlotPage) -> Bool { (0..<Self.pageSize).allSatisfy { page[$0] == nil } }
        for index in dense.indices {
            if let page = dense[index], isEmpty(page) {
                dense[index] = nil
                pagesInUse -= 1
            }
        }
        for (key, page) in sparse where isEmpty(page) {
            sparse[key] = nil
            pagesInUse -= 1
        }
    }
}

/// One page of a ``SlotTable``: its slots stored after the object's header (one allocation, built and
/// freed by code specialized for the slot type, where an array of optionals is destroyed through the
/// runtime's generic value witnesses one element at a time).
final class SlotPage: ManagedBuffer<Int, ObjectSlot?> {
    /// A page of `size` empty slots.
    static func make(size: Int) -> SlotPage {
        let page = unsafeDowncast(SlotPage.create(minimumCapacity: size) { _ in size }, to: SlotPage.self)
        page.withUnsafeMutablePointerToElements { $0.initialize(repeating: nil, count: size) }
        return page
    }

    /// A page holding the same slots (for a table that shares this one with a copy).
    func copy() -> SlotPage {
        let size = header
        let page = unsafeDowncast(SlotPage.create(minimumCapacity: size) { _ in size }, to: SlotPage.self)
        withUnsafeMutablePointerToElements { source in
            page.withUnsafeMutablePointerToElements { $0.initialize(from: source, count: size) }
        }
        return page
    }

    subscript(index: Int) -> ObjectSlot? {
        get { withUnsafeMutablePointerToElements { $0[index] } }
        set { withUnsafeMutablePointerToElements { $0[index] = newValue } }
    }

    deinit {
        _ = withUnsafeMutablePointers { size, slots in slots.deinitialize(count: size.pointee) }
    }
}
