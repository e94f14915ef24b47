/// The objects that refer to each object, as hints: built on first need by one pass over the reference
/// lists of the live records (frame headers and pending chunks, no payload), then grown by every put that
/// stores references. Nothing is removed when a reference goes away (a put without it, a delete, the
/// collector): each hint is checked against the referrer's record before it is used, and the stale ones
/// are dropped then. So an answer is exact and costs the referrers of one object, not a scan.
///
/// Kept in the writer's ``IndexState`` (under the index lock). A store that never asks for referrers never
/// builds it and pays one branch per put. Once built it costs about 8 bytes per hint plus 50 per
/// referred-to object, and a list holds at most about twice its distinct referrers; hints of references
/// that went away stay until their target is asked about. The build holds the index lock: about 25 ns
/// per live object (75 ms for 3 million), once per store that is open for writing; a store open
/// read-only beside a writer builds it again after each batch it follows.
struct ReferrerIndex {
    /// Whether the index holds every reference of the live records (and every put's since).
    private(set) var isBuilt = false
    private var referrers: [UInt64: [UInt64]] = [:]
    /// Lists longer than this are not searched before an append (duplicates are dropped when pruned).
    private static let searchedLength = 16

    /// Notes that `id` refers to each of `references` (a put the writer applies).
    mutating func add(_ references: [ObjectID], from id: UInt64) {
        guard isBuilt else { return }
        for target in references { add(target.rawValue, from: id) }
    }

    private mutating func add(_ target: UInt64, from id: UInt64) {
        referrers[target, default: []].appendHint(id, searchedLength: Self.searchedLength)
    }

    /// Builds the index from `references`, which calls its argument with each live object and the ids its
    /// record refers to.
    mutating func build(_ references: ((UInt64, [ObjectID]) -> Void) -> Void) {
        referrers = [:]
        references { id, targets in
            for target in targets { referrers[target.rawValue, default: []].append(id) }
        }
        isBuilt = true
    }

    /// The objects that refer to `target` now: the hints that `refers` confirms, in increasing id order;
    /// the others are dropped.
    mutating func referrers(of target: UInt64, confirmedBy refers: (UInt64) -> Bool) -> [UInt64] {
        guard let hints = referrers[target] else { return [] }
        var confirmed: [UInt64] = []
        for id in Set(hints).sorted() where refers(id) { confirmed.append(id) }
        if confirmed.count != hints.count { referrers[target] = confirmed.isEmpty ? nil : confirmed }
        return confirmed
    }

    /// How many hints the index holds (for tests).
    var hintCount: Int { referrers.values.reduce(0) { $0 + $1.count } }
}

extension Array where Element == UInt64 {
    /// Appends `id` unless it is the last element, or (for a short list) anywhere in it.
    /// A longer list that reaches a power of two drops its duplicates, so a list stays within twice its
    /// distinct referrers (amortized constant work per append).
    fileprivate mutating func appendHint(_ id: UInt64, searchedLength: Int) {
        if last == id { return }
        if count <= searchedLength && contains(id) { return }
        append(id)
        if count > searchedLength && count & (count - 1) == 0 { self = Set(self).sorted() }
    }
}
