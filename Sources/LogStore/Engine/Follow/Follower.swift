@_spi(Engine) import LogStoreFormat
@_spi(Engine) import LogStoreSystem
import Synchronization

/// How a store open read-only moves on to what a writer beside it (in another process, or another
/// `Store` of this one) commits: ``Store/refresh()`` and the change feed of such a store.
///
/// The follower remembers where it stopped reading the writer's log: the writer segment it read last
/// and the end of the last whole batch in it. A refresh lists the directory and, while the set of
/// segments only grew, reads the batches after that point (``TailReader``), then those of newer writer
/// segments in order, and applies them to the index in one lock hold, so readers see one committed state
/// before and one after. When segments were deleted (a compaction pass replaced them; its outputs, which
/// appear first, hold only copies and are left alone until then), or what it read cannot be trusted, it
/// loads the whole store again as a read-only open does (`Follower+Reload.swift`). See "Following a writer" (section 6.9) in
/// `Documentation/Format.md`.
///
/// One refresh runs at a time: the state below is its lock, taken before any lock of the store (the
/// pipeline's queue lock, the index lock, `nextID`) and never while holding one.
final class Follower: Sendable {
    /// Where reading the writer's log goes on.
    struct Position {
        /// The writer segment read last (nil: none yet).
        var file: SegmentFile?
        /// The end of the last whole batch (or of the seal frame) read in it.
        var offset: UInt64
        /// Whether its seal frame was read: the writer's next batches are in a newer segment.
        var sealed: Bool
        /// Writer segments numbered above this one that the state does not hold are the writer's next.
        var floor: UInt32
    }

    /// A place where reading stopped at bytes that are not a whole batch.
    struct Stall: Equatable {
        var file: String
        var offset: UInt64
        var reason: String
    }

    struct State {
        var position: Position
        /// The segments the store's state holds, and compaction outputs it leaves alone until the segments
        /// they replace are deleted: they hold only copies of frames the state has.
        var known: Set<UInt32>
        var outputs: Set<UInt32> = []
        /// The newest batch applied, and the newest one ``Store/refresh()`` returned (or skipped).
        var sequence: UInt64
        var returned: UInt64
        /// Where reading stops now, and since when.
        var stall: (place: Stall, since: ContinuousClock.Instant)?
        /// The stall the last full load was made for, and the error it ended in (then thrown again while
        /// the stall lasts, without loading again).
        var reloadedFor: (place: Stall, failure: LogStoreError?)?
        /// When a refresh of the polling thread last failed, and when the directory was last listed.
        var lastFailure: ContinuousClock.Instant?
        var lastListing = ContinuousClock.now
        /// How many times the whole store was loaded again, and why the last time.
        var reloads = 0
        var lastReload: String?
    }

    let directory: String
    let io: SystemIO
    /// Whether the store must have a segment manifest (it has an identity file): as the open loaded it.
    let requiresManifest: Bool
    /// The store's encryption (nil when it is not encrypted).
    let encryption: StoreEncryption?
    let state: RankedMutex<State>
    /// The polling thread of the change feed: whether it runs, and when a feed last asked for it
    /// (`Follower+Poll.swift`).
    let poller = RankedMutex<(running: Bool, lastDemand: ContinuousClock.Instant)>((false, .now), rank: .followerPoller)

    /// How long reading may stop at the same bytes that are not a whole batch before the store is loaded
    /// again, by the rules of a read-only open, to tell a batch still being written from damage.
    static let stallLimit = Duration.seconds(1)

    /// A follower of the store `loaded` was loaded from.
    init(
        directory: String, io: SystemIO, requiresManifest: Bool, loaded: StoreLoader.Loaded,
        encryption: StoreEncryption? = nil
    ) {
        self.directory = directory
        self.io = io
        self.requiresManifest = requiresManifest
        self.encryption = encryption
        let known = Set(loaded.state.segments.numbers)
        state = RankedMutex(
            State(
                position: Position(loaded, known: known), known: known, sequence: loaded.maxSequence,
                returned: loaded.maxSequence), rank: .follower)
    }

    /// Why and how the whole store is to be loaded again.
    struct Reload {
        var reason: String
        /// The place reading stopped at for ``stallLimit``, when that is why.
        var stall: Stall?
    }

    /// Moves `store` on to the writer's newest batches; returns those committed since the last call that
    /// the store read one by one (also those the change feed's polling thread read meanwhile).
    func refresh(_ store: Store) throws(LogStoreError) -> [CommittedBatch] {
        try state.withLock { follow throws(LogStoreError) -> [CommittedBatch] in
            let reload = try advance(store, &follow)
            // Before a load empties the change log.
            let read = store.pipeline.changes.batches(after: follow.returned)
            follow.returned = follow.sequence
            guard let reload else { return read }
            do throws(LogStoreError) {
                try load(reload, store, &follow)
            } catch  where !read.isEmpty {
                // What was read is applied and returned; whatever made the load necessary is still there,
                // so the next refresh loads the store again (and throws if that fails again).
            }
            follow.returned = follow.sequence
            return read
        }
    }

    /// Moves `store` on to the writer's newest batches without returning them: the next ``refresh(_:)``
    /// still returns them (as far as the change log keeps them), as it returns those the change feed read.
    func catchUp(_ store: Store) throws(LogStoreError) {
        try state.withLock { follow throws(LogStoreError) in
            if let reload = try advance(store, &follow) { try load(reload, store, &follow) }
        }
    }

    /// Reads and applies the writer's new batches (publishing them to the change log); returns why the
    /// whole store must be loaded again, when it must (nothing is applied when what was read cannot be
    /// trusted).
    ///
    /// - parameter listing: list the directory (to find segments deleted, and the writer's next segment),
    ///   even while the segment followed is not sealed: the writer appends only to it until it seals it.
    func advance(_ store: Store, _ follow: inout State, listing: Bool = true) throws(LogStoreError) -> Reload? {
        try store.checkOpen()
        var reload: String?
        var unknown = UnknownSegments()
        if listing || follow.position.file == nil || follow.position.sealed {
            let listed = try listSegments()
            follow.lastListing = .now
            if let gone = follow.known.subtracting(listed).min() {
                reload = "segment \(LogFormat.segmentFileName(gone)) was deleted (a compaction pass replaced it)"
            }
            unknown = try probeUnknown(
                listed.subtracting(follow.known).subtracting(follow.outputs), above: follow.position.floor)
            follow.outputs.formUnion(unknown.outputs)
        }
        var read = try readBatches(from: follow.position, newWriters: unknown.writers)
        if let distrust = try distrust(&read, after: follow.sequence, store: store) { return Reload(reason: distrust) }
        if !read.isEmpty {
            let applied = try apply(read, to: store)
            follow.position = read.position
            follow.known.formUnion(read.added)
            follow.sequence = read.batches.last?.sequence ?? follow.sequence
            store.pipeline.follow(read.position.sealed ? nil : read.position.file, size: read.position.offset)
            store.pipeline.changes.publish(applied)
        }
        if let reload { return Reload(reason: reload) }
        return try stalled(at: read.stall ?? unknown.stall, &follow)
    }

    /// Applies what was read to the store's state in one hold of the index lock, and moves the id
    /// allocator past the ids it names.
    private func apply(_ read: ReadBatches, to store: Store) throws(LogStoreError) -> [CommittedBatch] {
        let applied = store.state.withLock { state -> [CommittedBatch]? in
            guard state.isOpen else { return nil }
            store.readViews.publishChange()
            for file in read.files { state.segments.register(file) }
            for dictionary in read.dictionaries { state.dictionaries.add(dictionary) }
            var committed: [CommittedBatch] = []
            committed.reserveCapacity(read.batches.count)
            for batch in read.batches { committed.append(state.applyFollowed(batch)) }
            for seal in read.seals {
                state.applyFollowedSeal(segment: seal.segment, end: seal.end, length: seal.length)
            }
            state.finishReplay()
            return committed
        }
        guard let applied else { throw LogStoreError(.closed, "the store is closed", file: directory) }
        var reserved: UInt64 = 0
        var highest: UInt64 = 0
        for batch in read.batches {
            let ids = batch.ids
            reserved = max(reserved, ids.reserved)
            highest = max(highest, ids.highest)
        }
        if reserved > 0 || highest > 0 {
            let firstFree = max(reserved, min(highest, LogFormat.maxObjectID) + 1)
            store.nextID.withLock { $0 = max($0, firstFree) }
        }
        return applied
    }

    /// Why what was read cannot be applied as it is (nil when it can): the segment followed must not have
    /// become shorter than what was read of it, and the batches must follow the newest one applied
    /// (`sequence`) one by one. Loads the dictionaries its puts name that the store does not have yet (a
    /// writer records a new one before any frame names it).
    private func distrust(_ read: inout ReadBatches, after sequence: UInt64, store: Store) throws(LogStoreError)
        -> String?
    {
        if let shrunk = read.shrunk { return shrunk }
        // The writer numbers its batches one by one: a gap means batches were read past (segments a
        // compaction pass deleted before they were read), a repeat that this is not the log followed.
        var newest = sequence
        for batch in read.batches {
            guard batch.sequence == newest + 1 else {
                return "batch \(batch.sequence) in \(LogFormat.segmentFileName(batch.segment)) does not follow "
                    + "batch \(newest)"
            }
            newest = batch.sequence
        }
        let named = read.batches.reduce(into: Set<UInt32>()) { $0.formUnion($1.dictionaries) }
        guard !named.isEmpty else { return nil }
        let known = store.state.withLock { state in Set(state.dictionaries.all.map(\.id)) }
        let missing = named.subtracting(known)
        guard !missing.isEmpty else { return nil }
        read.dictionaries = try loadDictionaries(missing)
        let loaded = Set(read.dictionaries.map(\.id))
        guard let absent = missing.subtracting(loaded).min() else { return nil }
        return "a frame names dictionary \(absent), which the store does not have"
    }
}

extension Follower.Position {
    /// Where reading goes on after a load: after the last batch of the append segment it found.
    init(_ loaded: StoreLoader.Loaded, known: Set<UInt32>) {
        if let newest = loaded.newest {
            self.init(file: newest.file, offset: newest.size, sealed: loaded.newestIsSealed, floor: newest.file.number)
        } else {
            self.init(file: nil, offset: 0, sealed: true, floor: known.max() ?? 0)
        }
    }
}
