import LogStore

/// The entries of one index in order, in two layers: a large `main` layer that takes no inserts, and a small
/// `recent` layer that takes every insert and is merged into `main` when it grows past a sixteenth of it.
///
/// An insert at a random place in a large index reads several chunks' worth of memory the processor does
/// not hold (a few hundred nanoseconds each); into `recent`, small enough to stay in its caches, it costs a
/// fraction of that. A merge copies `main` once, keeping the chunks no recent entry falls in, so each
/// inserted entry pays for about sixteen copied ones. Reads merge the two layers' orders; a removal finds the
/// entry in whichever layer holds it.
struct SortedEntries: Sendable {
    /// `recent` is merged into `main` when it holds more than this many entries and more than a sixteenth of
    /// `main`.
    static let recentMinimum = 4096

    private(set) var main: EntryChunks
    private(set) var recent = EntryChunks()

    var count: Int { main.count + recent.count }

    /// Entries already in order (a build from nothing).
    init(sorted entries: [IndexEntryKey]) { main = EntryChunks(sorted: entries) }

    init() { main = EntryChunks() }

    mutating func insert(_ entry: IndexEntryKey) {
        recent.insert(entry)
        if recent.count > Self.recentMinimum && recent.count > main.count / 16 { mergeRecent() }
    }

    /// Moves every recent entry into `main`.
    mutating func mergeRecent() {
        guard recent.count > 0 else { return }
        main.merge(recent)
        recent = EntryChunks()
    }

    /// Removes `entry`; false when it is not there.
    @discardableResult
    mutating func remove(_ entry: IndexEntryKey) -> Bool {
        recent.remove(entry) || main.remove(entry)
    }

    /// A position in each layer.
    struct Position {
        var main: EntryChunks.Position
        var recent: EntryChunks.Position

        /// The later of two positions in each layer (the start of a range bounded below twice).
        static func later(_ a: Position, _ b: Position) -> Position {
            Position(main: max(a.main, b.main), recent: max(a.recent, b.recent))
        }
    }

    var startPosition: Position { Position(main: main.startPosition, recent: recent.startPosition) }
    var endPosition: Position { Position(main: main.endPosition, recent: recent.endPosition) }

    /// The position of the first entry whose key is not below `key` (`after` false), or above it.
    func position(ofKey key: CompoundKey, after: Bool) -> Position {
        Position(main: main.position(ofKey: key, after: after), recent: recent.position(ofKey: key, after: after))
    }

    /// The position of the first entry whose key's first fields are not below `prefix` (`after` false), or
    /// above it: an entry `[a, b]` is within the prefix `[a]`.
    func position(ofPrefix prefix: [IndexValue], after: Bool) -> Position {
        Position(
            main: main.position(ofPrefix: prefix, after: after),
            recent: recent.position(ofPrefix: prefix, after: after))
    }

    /// Calls `body` with each entry from `start` (inclusive) to `end` (exclusive), in order, until it
    /// returns false.
    func forEach(from start: Position, to end: Position, _ body: (IndexEntryKey) -> Bool) {
        if recent.count == 0 { return main.forEach(from: start.main, to: end.main, body) }
        var first = main.normalized(start.main)
        var second = recent.normalized(start.recent)
        while true {
            let fromMain = first < end.main ? main.entry(at: first) : nil
            let fromRecent = second < end.recent ? recent.entry(at: second) : nil
            switch (fromMain, fromRecent) {
            case (nil, nil): return
            case (let entry?, nil):
                guard body(entry) else { return }
                first = main.position(after: first)
            case (nil, let entry?):
                guard body(entry) else { return }
                second = recent.position(after: second)
            case (let a?, let b?):
                if a < b {
                    guard body(a) else { return }
                    first = main.position(after: first)
                } else {
                    guard body(b) else { return }
                    second = recent.position(after: second)
                }
            }
        }
    }

    /// Calls `body` with each entry from `end` (exclusive) back to `start` (inclusive), until it returns
    /// false.
    func forEachReversed(from start: Position, to end: Position, _ body: (IndexEntryKey) -> Bool) {
        if recent.count == 0 { return main.forEachReversed(from: start.main, to: end.main, body) }
        let lowMain = main.normalized(start.main)
        let lowRecent = recent.normalized(start.recent)
        var first = main.position(before: end.main).flatMap { $0 >= lowMain ? $0 : nil }
        var second = recent.position(before: end.recent).flatMap { $0 >= lowRecent ? $0 : nil }
        func stepMain(_ position: EntryChunks.Position) {
            first = main.position(before: position).flatMap { $0 >= lowMain ? $0 : nil }
        }
        func stepRecent(_ position: EntryChunks.Position) {
            second = recent.position(before: position).flatMap { $0 >= lowRecent ? $0 : nil }
        }
        while true {
            switch (first, second) {
            case (nil, nil): return
            case (let position?, nil):
                guard body(main.entry(at: position)) else { return }
                stepMain(position)
            case (nil, let position?):
                guard body(recent.entry(at: position)) else { return }
                stepRecent(position)
            case (let a?, let b?):
                let fromMain = main.entry(at: a)
                let fromRecent = recent.entry(at: b)
                if fromRecent < fromMain {
                    guard body(fromMain) else { return }
                    stepMain(a)
                } else {
                    guard body(fromRecent) else { return }
                    stepRecent(b)
                }
            }
        }
    }

    /// Bytes of memory the entries take (their inline size; strings' and compound keys' heap storage not
    /// counted).
    var inlineBytes: Int { main.inlineBytes + recent.inlineBytes }
}
