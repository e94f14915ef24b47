import LogStore

/// The identity cache's slots by object id: a table of small pages, found by `id >> 4`, no hashing.
///
/// Ids are handed out densely and a graph is mostly stored together, so a loaded graph fills whole
/// pages: 8 bytes per object plus a page header per 16, against ~40 bytes and a hash per lookup for a
/// `Dictionary` (which was a tenth of a cold load). A page number that holds one slot only (a query's
/// results scattered over a big store) holds that slot itself, not a page: a page is made when a second
/// id of the same page number arrives. Page numbers far beyond the dense table (ids far apart) go to an
/// ``IDTable``, so no id can make the table grow out of proportion to the pages in use.
struct SlotTable {
    private static let pageShift = 4
    private static let pageSize = 1 << pageShift

    /// By page number below `dense.count`: nil, a ``SlotPage``, or the one ``ObjectSlot`` of that page
    /// number (its id tells which of the page's positions it holds).
    private var dense: [AnyObject?] = []
    /// Pages whose number is too far beyond the dense table to grow it.
    private var sparse = IDTable<SlotPage>()
    /// Page numbers in use (pages and lone slots), dense and sparse.
    private var pagesInUse = 0
    /// Slots held.
    private(set) var count = 0

    private static func position(_ id: ObjectID) -> (page: Int, slot: Int) {
        (
            Int(truncatingIfNeeded: id.rawValue >> UInt64(pageShift)),
            Int(truncatingIfNeeded: id.rawValue) & (pageSize - 1)
        )
    }

    /// The slot at `slot` of a dense entry.
    private static func slot(_ entry: AnyObject, at slot: Int, id: ObjectID) -> ObjectSlot? {
        if type(of: entry) == ObjectSlot.self {
            let lone = unsafeDowncast(entry, to: ObjectSlot.self)
            return lone.id == id ? lone : nil
        }
        return unsafeDowncast(entry, to: SlotPage.self)[slot]
    }

    /// The slot of `id`; setting nil removes it.
    subscript(id: ObjectID) -> ObjectSlot? {
        get {
            let (page, slot) = Self.position(id)
            if page >= 0, page < dense.count {
                guard let entry = dense[page] else { return nil }
                return Self.slot(entry, at: slot, id: id)
            }
            guard !sparse.isEmpty else { return nil }
            return sparse[ObjectID(UInt64(page))]?[slot]
        }
        set {
            let (page, slot) = Self.position(id)
            if page >= 0, page < dense.count || (newValue != nil && growDense(toInclude: page)) {
                setDense(newValue, id: id, page: page, slot: slot)
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

    /// What a dense entry holds, without keeping a reference to it (a page must be uniquely referenced
    /// by the table to be written in place).
    private enum EntryKind { case empty, lone, page }

    private func kind(at page: Int) -> EntryKind {
        guard let entry = dense[page] else { return .empty }
        return type(of: entry) == ObjectSlot.self ? .lone : .page
    }

    private mutating func setDense(_ newValue: ObjectSlot?, id: ObjectID, page: Int, slot: Int) {
        switch kind(at: page) {
        case .empty:
            // An empty page number takes the slot itself.
            guard let newValue else { return }
            dense[page] = newValue
            pagesInUse += 1
            count += 1
        case .lone:
            guard let entry = dense[page] else { return }
            let lone = unsafeDowncast(entry, to: ObjectSlot.self)
            if lone.id == id {
                dense[page] = newValue
                if newValue == nil {
                    pagesInUse -= 1
                    count -= 1
                }
                return
            }
            // A second id of this page number: the two go into a page.
            guard let newValue else { return }
            let made = SlotPage.make(size: Self.pageSize)
            made[Self.position(lone.id).slot] = lone
            made[slot] = newValue
            dense[page] = made
            count += 1
        case .page:
            // Copied first when another table shares it.
            if !isKnownUniquelyReferenced(&dense[page]), let shared = dense[page] {
                dense[page] = unsafeDowncast(shared, to: SlotPage.self).copy()
            }
            guard let current = dense[page] else { return }
            let target = unsafeDowncast(current, to: SlotPage.self)
            count += (newValue != nil ? 1 : 0) - (target[slot] != nil ? 1 : 0)
            target[slot] = newValue
        }
    }

    /// Grows the dense table to hold page `page` when that keeps it proportional to the pages in use
    /// (at most 64 page entries, 512 bytes, per page in use, and always 16,384); false otherwise.
    private mutating func growDense(toInclude page: Int) -> Bool {
        let limit = max(16_384, (pagesInUse + 1) * 64)
        guard page >= 0, page < limit else { return false }
        // The table at least doubles (within the limit): growing it only to `page` would grow it again for
        // almost every new page of ids loaded in no order (a query's results), and each growth walks the
        // sparse pages.
        let newCount = Swift.max(page + 1, Swift.min(limit, dense.count * 2))
        dense.append(contentsOf: repeatElement(nil, count: newCount - dense.count))
        // Pages kept in the sparse table that the dense table now covers move into it.
        if !sparse.isEmpty {
            for (key, moved) in sparse where key.rawValue < UInt64(dense.count) {
                dense[Int(key.rawValue)] = moved
                sparse[key] = nil
            }
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
        for case let entry? in dense {
            if type(of: entry) == ObjectSlot.self {
                let lone = unsafeDowncast(entry, to: ObjectSlot.self)
                result.append((lone.id, lone))
            } else {
                collect(unsafeDowncast(entry, to: SlotPage.self))
            }
        }
        for (_, page) in sparse { collect(page) }
        return result
    }

    /// Keeps only the slots for which `keep` is true; frees pages left empty.
    mutating func filter(_ keep: (ObjectSlot) -> Bool) {
        for (id, slot) in entries where !keep(slot) { self[id] = nil }
        func isEmpty(_ page: SlotPage) -> Bool { (0..<Self.pageSize).allSatisfy { page[$0] == nil } }
        for index in dense.indices {
            if let entry = dense[index], type(of: entry) == SlotPage.self,
                isEmpty(unsafeDowncast(entry, to: SlotPage.self))
            {
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
