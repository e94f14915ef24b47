import LogStore

/// The key of one entry of an index: the values of its fields, in the order the index names them.
struct CompoundKey: Sendable, Hashable, Comparable, CustomStringConvertible {
    /// The first field's value.
    var first: IndexValue
    /// The values of the other fields of a compound index (empty for one field: no allocation).
    var rest: [IndexValue]

    init(_ values: [IndexValue]) {
        first = values.first ?? .absent
        rest = Array(values.dropFirst())
    }

    init(_ value: IndexValue) {
        first = value
        rest = []
    }

    var values: [IndexValue] { [first] + rest }

    /// The value of field `field` (0 for the first), nil past the last.
    func value(at field: Int) -> IndexValue? {
        field == 0 ? first : (field - 1 < rest.count ? rest[field - 1] : nil)
    }

    /// Whether no field of the key has a value that uniqueness applies to (absent or nil).
    var isExemptFromUniqueness: Bool {
        if first == .absent || first == .null { return true }
        return rest.contains { $0 == .absent || $0 == .null }
    }

    /// Whether any field is absent (the record lacks it: the object's value is unknown to the index).
    var hasAbsent: Bool {
        if case .absent = first { return true }
        return rest.contains { if case .absent = $0 { true } else { false } }
    }

    /// Whether any field is NaN.
    var hasNaN: Bool { first.isNaN || rest.contains(where: \.isNaN) }

    func compare(_ other: CompoundKey) -> Int {
        let result = first.compare(other.first)
        if result != 0 || (rest.isEmpty && other.rest.isEmpty) { return result }
        for (a, b) in zip(rest, other.rest) {
            let result = a.compare(b)
            if result != 0 { return result }
        }
        return rest.count < other.rest.count ? -1 : (rest.count == other.rest.count ? 0 : 1)
    }

    static func < (lhs: CompoundKey, rhs: CompoundKey) -> Bool { lhs.compare(rhs) < 0 }
    static func == (lhs: CompoundKey, rhs: CompoundKey) -> Bool { lhs.compare(rhs) == 0 }

    var description: String {
        rest.isEmpty ? first.description : "(" + values.map(\.description).joined(separator: ", ") + ")"
    }
}

/// One entry of an index: a key and the object holding it. Ordered by key, then id.
struct IndexEntryKey: Sendable, Comparable {
    let key: CompoundKey
    let id: ObjectID
    /// The first field's ``IndexValue/sortPrefix``: entries whose prefixes differ are ordered without
    /// reading their keys.
    let prefix: UInt64

    init(key: CompoundKey, id: ObjectID) {
        self.key = key
        self.id = id
        prefix = key.first.sortPrefix
    }

    static func < (lhs: IndexEntryKey, rhs: IndexEntryKey) -> Bool {
        if lhs.prefix != rhs.prefix { return lhs.prefix < rhs.prefix }
        let result = lhs.key.compare(rhs.key)
        return result < 0 || (result == 0 && lhs.id < rhs.id)
    }

    static func == (lhs: IndexEntryKey, rhs: IndexEntryKey) -> Bool {
        lhs.prefix == rhs.prefix && lhs.id == rhs.id && lhs.key == rhs.key
    }
}
