import LogStore

/// A map from object id to value in pages of 64 consecutive ids, found by `id >> 6`: no hashing, and
/// growth never moves a value already held.
///
/// The indexes keep each object's version and keys in these. A `Dictionary` of hundreds of thousands of
/// objects hashes every id with SipHash, and when it doubles it rehashes every entry into new memory (on
/// this project's test machine a fresh page costs ~10 µs on first touch): a third of the time of a run of
/// indexed saves went to one such doubling. Ids are handed out densely, so the objects of a class fill
/// most of their pages. Page numbers far beyond the dense table (ids far apart) go to an ``IDTable``, so
/// no id can make the table grow out of proportion to the pages in use.
///
/// A copy shares the pages until one is changed; changing a shared page copies that page only (64 values).
struct PagedIDMap<Value> {
    private static var pageShift: UInt64 { 6 }
    private static var pageSize: Int { 64 }

    /// Pages for page numbers below `dense.count`; an empty array is a page not allocated.
    private var dense: [[Value?]] = []
    /// Pages whose number is too far beyond the dense table to grow it.
    private var sparse = IDTable<[Value?]>()
    /// Pages allocated, dense and sparse.
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
            if page < UInt64(dense.count) {
                let index = Int(page)
                return dense[index].isEmpty ? nil : dense[index][slot]
            }
            guard !sparse.isEmpty, let values = sparse[ObjectID(rawValue: page)] else { return nil }
            return values[slot]
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

    /// Puts `value` in `id`'s slot (allocating its page for a value), returns what the slot held, and frees
    /// a page left empty.
    private mutating func exchange(_ value: Value?, forKey id: ObjectID) -> Value? {
        let (page, slot) = Self.position(id)
        if page < UInt64(dense.count) || (value != nil && growDense(toInclude: page)) {
            let index = Int(page)
            if dense[index].isEmpty {
                guard value != nil else { return nil }
                dense[index] = Self.emptyPage()
                pagesInUse += 1
            }
            let old = Self.exchange(value, at: slot, in: &dense[index])
            if value == nil, old != nil, Self.isEmpty(dense[index]) {
                dense[index] = []
                pagesInUse -= 1
            }
            return old
        }
        let key = ObjectID(rawValue: page)
        if !sparse.contains(key) {
            guard value != nil else { return nil }
            sparse[key] = Self.emptyPage()
            pagesInUse += 1
        }
        let old = sparse.modifyValue(forKey: key) { Self.exchange(value, at: slot, in: &$0) } ?? nil
        if value == nil, old != nil, let values = sparse[key], Self.isEmpty(values) {
            sparse[key] = nil
            pagesInUse -= 1
        }
        return old
    }

    private static func emptyPage() -> [Value?] { Array(repeating: nil, count: pageSize) }

    private static func exchange(_ value: Value?, at slot: Int, in values: inout [Value?]) -> Value? {
        let old = values[slot]
        values[slot] = value
        return old
    }

    private static func isEmpty(_ values: [Value?]) -> Bool { !values.contains { $0 != nil } }

    /// Makes the dense table cover `page` when it is not too far beyond the pages in use; returns whether it
    /// does.
    private mutating func growDense(toInclude page: UInt64) -> Bool {
        guard page < UInt64(max(16_384, (pagesInUse + 1) * 64)) else { return false }
        let pageCount = Int(page) + 1
        // Capacity doubles (reserving on every call would reallocate the table for each new page).
        if dense.capacity < pageCount { dense.reserveCapacity(Swift.max(pageCount, dense.count * 2)) }
        dense.append(contentsOf: repeatElement([], count: pageCount - dense.count))
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
        func walk(_ values: [Value?], page: UInt64) {
            for (slot, value) in values.enumerated() {
                if let value { body(ObjectID(rawValue: page << Self.pageShift | UInt64(slot)), value) }
            }
        }
        for (page, values) in dense.enumerated() where !values.isEmpty { walk(values, page: UInt64(page)) }
        for (key, values) in sparse { walk(values, page: key.rawValue) }
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
