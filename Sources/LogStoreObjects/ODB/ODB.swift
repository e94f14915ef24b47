import LogStore
import Synchronization

/// An object database in the style of UserLand Frontier's: a persistent tree of tables under an
/// implied `root` table, each holding named children that are tables or values, addressed by path.
///
/// Keys compare case-insensitively with one fixed, locale-independent folding (see ``ODBKey``
/// in the guide: `"FEeDs"` finds `"feeds"`, `"Straße"` finds `"STRASSE"`) and keep their spelling.
/// Any thread or task may read and write; each call is atomic, `transaction(_:)` groups several, and
/// `read(_:)` reads several paths from one snapshot. Concurrent writers to one table never lose each
/// other's changes: a conflicting single change is retried inside, invisibly.
///
/// For example:
/// ```swift
/// let odb = try ODB.open(at: "/tmp/odb-example")
/// try odb.setValue(.string("Bull Mancuso"), at: ["user", "personalInfo", "name"])
/// let name = try odb.value(at: ["USER", "personalinfo", "Name"], as: String.self)  // "Bull Mancuso"
/// try odb.close()
/// ```
///
/// Every table is one engine record (a large one is a directory of bucket records), unpinned and
/// referenced by its parent, so a deleted subtree is freed by the store's reference counting and its
/// space reclaimed by compaction. The format is in `Documentation/ODB.md`.
@dynamicMemberLookup
public final class ODB: Sendable {
    /// The store holding the tables.
    public let store: Store
    let cache: ODBCache
    private let ownsStore: Bool
    /// The root table's id when known at open (it never changes once created).
    let knownRoot: ObjectID?
    /// The member-access failure handler and the last failure.
    let accessFailures = Mutex(ODBAccessFailures())
    /// How many times a change whose records changed under it is tried in all.
    public let maxAttempts: Int
    /// Lets changes that keep conflicting through first.
    let contention = ContentionGate()

    /// The decoded-table cache budget used when none is given: 64 MiB.
    public static let defaultCacheBudget = 64 << 20

    /// Serializes the creation of root tables in this process (a store has one writing process).
    private static let rootCreation = Mutex(())

    /// Opens (creating when missing) the store at `directory` and its object database.
    /// - parameters:
    ///   - options: the store's options.
    ///   - cacheBudget: about how many bytes of decoded tables to keep in memory.
    /// - throws: ``ODBError`` `store` when the store cannot be opened.
    public static func open(
        at directory: String, options: StoreOptions = StoreOptions(), cacheBudget: Int = defaultCacheBudget
    ) throws(ODBError) -> ODB {
        let store: Store
        do {
            store = try Store.open(at: directory, options: options)
        } catch {
            throw ODBError(error)
        }
        do {
            return try ODB(store: store, cacheBudget: cacheBudget, ownsStore: true)
        } catch {
            try? store.close()
            throw error
        }
    }

    /// The object database of an open store (a store opened read-only can be read; a store without one
    /// reads as an empty root table). ``close()`` leaves the store open.
    /// - throws: ``ODBError`` `store` when the root table cannot be created.
    public convenience init(store: Store, cacheBudget: Int = defaultCacheBudget) throws(ODBError) {
        try self.init(store: store, cacheBudget: cacheBudget, ownsStore: false)
    }

    private init(store: Store, cacheBudget: Int, ownsStore: Bool, maxAttempts: Int = 100) throws(ODBError) {
        self.store = store
        self.cache = ODBCache(budget: cacheBudget)
        self.ownsStore = ownsStore
        self.maxAttempts = maxAttempts
        var root: ObjectID?
        do {
            root = try store.root(named: ODBFormat.rootName)
            if root == nil && !store.options.readOnly {
                root = try Self.rootCreation.withLock { _ throws(LogStoreError) -> ObjectID in
                    if let existing = try store.root(named: ODBFormat.rootName) { return existing }
                    let id = store.newID()
                    let (payload, references) = ODBFormat.encode(.inline(EntryTable()))
                    var batch = WriteBatch()
                    batch.put(id, typeTag: ODBFormat.tableTag, references: references, payload: payload, pinned: false)
                    batch.setRoot(ODBFormat.rootName, to: id)
                    try store.write(batch)
                    return id
                }
            }
        } catch {
            throw ODBError(error)
        }
        knownRoot = root
    }

    /// Closes the store when ``open(at:options:cacheBudget:)`` opened it.
    /// - throws: ``ODBError`` `store` when closing fails.
    public func close() throws(ODBError) {
        cache.removeAll()
        guard ownsStore else { return }
        do {
            try store.close()
        } catch {
            throw ODBError(error)
        }
    }

    // MARK: - Running work

    /// Runs a read on a fresh snapshot.
    func reading<Result>(_ body: (ODBWork) throws(ODBError) -> Result) throws(ODBError) -> Result {
        try body(ODBWork(store: store, cache: cache, knownRoot: knownRoot, tracksReads: false))
    }

    /// Runs a change on a fresh snapshot and commits it, rerunning it when records it read changed
    /// meanwhile (up to ``maxAttempts`` times in all).
    func changing<Result>(_ body: (ODBWork) throws(ODBError) -> Result) throws(ODBError) -> Result {
        try retryingOnConflict("change", body, wrap: { $0 })
    }

    /// Runs `body` on a fresh snapshot and commits its work, rerunning it when records it read changed
    /// meanwhile (up to ``maxAttempts`` times in all, each rerun after ``ConflictBackoff``); `wrap` turns
    /// this layer's errors into `body`'s.
    func retryingOnConflict<Result, Failure: Error>(
        _ what: String, _ body: (ODBWork) throws(Failure) -> Result, wrap: (ODBError) -> Failure
    ) throws(Failure) -> Result {
        var attempt = 0
        var run = ContendedRun(contention)
        defer { run.end() }
        while true {
            run.admit()
            let work: ODBWork
            do {
                work = try ODBWork(store: store, cache: cache, knownRoot: knownRoot)
            } catch {
                throw wrap(error)
            }
            let result = try body(work)
            do {
                try work.commit()
                return result
            } catch {
                attempt += 1
                guard Self.isConflict(error) else { throw wrap(error) }
                guard attempt < maxAttempts else {
                    throw wrap(
                        ODBError(
                            .conflict, "concurrent writers changed the tables this \(what) read, \(attempt) times",
                            underlying: error.underlying))
                }
                run.conflicted(attempt)
                ConflictBackoff.wait(after: attempt, store: store)
            }
        }
    }

    static func isConflict(_ error: ODBError) -> Bool {
        error.code == .store && (error.underlying as? LogStoreError)?.code == .conflict
    }
}
