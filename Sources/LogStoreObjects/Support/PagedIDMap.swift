import LogStore

/// A map from object id to value in pages of 64 consecutive ids, found by `id >> 6`: no hashing, and
/// growth never moves more than one page's values.
///
/// The indexes keep each object's version and keys in these. A `Dictionary` of hundreds of thousands of
/// objects hashes every id with SipHash, and when it doubles it rehashes every entry into new memory (on
/// this project's test machine a fresh page costs ~10 µs on first touch): a third of the time of a run of
/// indexed saves went to one such doubling.
///
/// A page holds only the values present: a bitmap of its 64 ids and their values packed in id order (the
/// position of a value is the number of bits set below its id's). Ids are handed out store-wide, so a
/// class whose objects are interleaved with other classes' fills a page partly; it pays for what it
/// holds plus a page header (about 40 bytes) per 64 ids in use, not for 64 slots. Page numbers far
/// beyond the dense table (ids far apart) go to an ``IDTable``, so no id can make the table grow out of
/// proportion to the pages in use.
///
/// A copy shares the pages until one is changed; changing a shared page copies that page only.
struct PagedIDMap<Value> {
    private static var pageShift: UInt64 { 6 }
    private static var pageSize: Int { 64 }

    /// The values of up to 64 consecutive ids.
    fileprivate struct Page {
        /// Bit `n` set when id `page × 64 + n` has a value.
        var present: UInt64 = 0
        /// The values present, in id order.
        var values: [Value] = []

        var isEmpty: Bool { present == 0 }

        /// Where the value of slot `slot` is (or would go) in `values`.
        @inline(__always)
        func rank(_ slot: Int) -> Int { (present & ((1 << UInt64(slot)) - 1)).nonzeroBitCount }

        @inline(__always)
        func value(at slot: Int) -> Value? {
            present & (1 << UInt64(slot)) == 0 ? nil : values[rank(slot)]
        }

        /// Puts `value` in slot `slot` (nil removes it); returns what the slot held.
        mutating func exchange(_ value: Value?, at slot: Int) -> Value? {
            let bit: UInt64 = 1 << UInt64(slot)
            let position = rank(slot)
            if present & bit != 0 {
                let old = values[position]
                if let value {
                    values[position] = value
                } else {
                    values.remove(at: position)
                    present &= ~bit
                    if present == 0 { values = [] }
                }
                return old
            }
            if let value {
                values.insert(value, at: position)
                present |= bit
            }
            return nil
        }
    }

    /// Pages for page numbers below `dense.count`; an empty page holds no storage.
    private var dense: [Page] = []
    /// Pages whose number is too far beyond the dense table to grow it.
    private var sparse = IDTable<Page>()
    /// Pages holding values, dense and sparse.
    private(set) var pagesInUse = 0
    /// Values held.
    private(set) var count = 0

    /// An empty map.
    init() {}

    var isEmpty: Bool { count == 0 }

    private static func position(_ id: ObjectID) -> (page: UInt64, slot: Int) {
        (id.rawValue >> pageShift, Int(truncatingIfNeeded: id.rawValue) & (pageSize - 1))
    }

    /// The value of `id`; setting nil removes it.
    subscript(id: ObjectID) -> Value? {
        get {
            let (page, slot) = Self.position(id)
            if page < UInt64(dense.count) { return dense[Int(page)].value(at: slot) }
            guard !sparse.isEmpty else { return nil }
            return sparse[ObjectID(rawValue: page)]?.value(at: slot)
        }
        set {
            if let newValue {
                updateValue(newValue, forKey: id)
            } else {
                removeValue(forKey: id)
            }
        }
    }

    /// Sets the value of `id`; returns the value it replaces.
    @discardableResult
    mutating func updateValue(_ value: Value, forKey id: ObjectID) -> Value? {
        let old = exchange(value, forKey: id)
        if old == nil { count += 1 }
        return old
    }

    /// Removes the value of `id`; returns it.
    @discardableResult
    mutating func removeValue(forKey id: ObjectID) -> Value? {
        let old = exchange(nil, forKey: id)
        if old != nil { count -= 1 }
        return old
    }

    /// Puts `value` in `id`'s slot; returns what the slot held, and counts the pages that gain their first
    /// value or lose their last.
    private mutating func exchange(_ value: Value?, forKey id: ObjectID) -> Value? {
        let (page, slot) = Self.position(id)
        if page < UInt64(dense.count) || (value != nil && growDense(toInclude: page)) {
            let index = Int(page)
            let wasEmpty = dense[index].isEmpty
            let old = dense[index].exchange(value, at: slot)
            pagesInUse += (wasEmpty ? 0 : -1) + (dense[index].isEmpty ? 0 : 1)
            return old
        }
        let key = ObjectID(rawValue: page)
        if !sparse.contains(key) {
            guard value != nil else { return nil }
            sparse[key] = Page()
        }
        let wasEmpty = sparse[key]?.isEmpty ?? true
        let old = sparse.modifyValue(forKey: key) { $0.exchange(value, at: slot) } ?? nil
        let isEmpty = sparse[key]?.isEmpty ?? true
        if isEmpty { sparse[key] = nil }
        pagesInUse += (wasEmpty ? 0 : -1) + (isEmpty ? 0 : 1)
        return old
    }

    /// Makes the dense table cover `page` when it is not too far beyond the pages in use; returns whether it
    /// does.
    private mutating func growDense(toInclude page: UInt64) -> Bool {
        guard page < UInt64(max(16_384, (pagesInUse + 1) * 64)) else { return false }
        let pageCount = Int(page) + 1
        // Capacity doubles (reserving on every call would reallocate the table for each new page).
        if dense.capacity < pageCount { dense.reserveCapacity(Swift.max(pageCount, dense.count * 2)) }
        dense.append(contentsOf: repeatElement(Page(), count: pageCount - dense.count))
        // Pages kept in the sparse table that the dense table now covers move into it.
        for (key, moved) in sparse where key.rawValue < UInt64(dense.count) {
            dense[Int(key.rawValue)] = moved
            sparse[key] = nil
        }
        return true
    }

    /// Calls `body` with each id and its value, in the order of ids within each page (pages of the dense
    /// table in order, then the others).
    func forEachEntry(_ body: (ObjectID, Value) -> Void) {
        func walk(_ page: Page, number: UInt64) {
            var bits = page.present
            var position = 0
            while bits != 0 {
                let slot = UInt64(bits.trailingZeroBitCount)
                body(ObjectID(rawValue: number << Self.pageShift | slot), page.values[position])
                bits &= bits - 1
                position += 1
            }
        }
        for (number, page) in dense.enumerated() where !page.isEmpty { walk(page, number: UInt64(number)) }
        for (key, page) in sparse { walk(page, number: key.rawValue) }
    }

    /// The first id (in the order of ``forEachEntry(_:)``) for which `predicate` is true.
    func firstID(where predicate: (ObjectID) -> Bool) -> ObjectID? {
        var found: ObjectID?
        forEachEntry { id, _ in
            if found == nil, predicate(id) { found = id }
        }
        return found
    }

    /// The ids held.
    var ids: [ObjectID] {
        var ids: [ObjectID] = []
        ids.reserveCapacity(count)
        forEachEntry { id, _ in ids.append(id) }
        return ids
    }
}

extension PagedIDMap: Sendable where Value: Sendable {}
extension PagedIDMap.Page: Sendable where Value: Sendable {}
