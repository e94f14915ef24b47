import LogStore

/// The working state of one read or one change: a snapshot, the version of every record read, and an
/// overlay of the records changed or created, committed as one batch.
///
/// Record ids of tables and buckets never change while they live: a change rewrites, under the same
/// id, only the table or bucket holding the entry (plus a large table's directory when a bucket splits),
/// never the path above it. The commit expects every record read to still have the version the snapshot
/// had (``WriteBatch/expect(_:version:)``), so a concurrent writer's change to any of them makes this one
/// a `conflict` (retried by the caller) instead of a lost update.
///
/// Used by one thread at a time (it is not `Sendable`).
final class ODBWork {
    let store: Store
    let cache: ODBCache
    let snapshot: Snapshot
    /// The root table, or nil while the store has none (it reads as an empty table).
    private(set) var rootID: ObjectID?
    private var createsRoot = false
    /// Changed and new records.
    private(set) var overlay = IDTable<ODBNode>()
    /// The version of every record read from the snapshot.
    private var readVersions = IDTable<UInt64>()
    /// The large table each changed bucket belongs to (for splits).
    private var bucketOwners = IDTable<ObjectID>()
    /// Tables created by this work (written only when something written refers to them).
    private var created: Set<ObjectID> = []
    /// Whether to note the versions read (a change expects them at commit; a read needs none).
    let tracksReads: Bool

    init(store: Store, cache: ODBCache, knownRoot: ObjectID?, tracksReads: Bool = true) throws(ODBError) {
        self.store = store
        self.cache = cache
        self.tracksReads = tracksReads
        do {
            snapshot = try store.snapshot()
        } catch {
            throw ODBError(error)
        }
        rootID = knownRoot ?? snapshot.root(named: ODBFormat.rootName)
    }

    /// Whether the work changed anything.
    var hasChanges: Bool { !overlay.isEmpty }

    // MARK: - Records

    /// The node of `id`: changed in this work, or as of the snapshot (decoded once, then cached).
    /// - throws: ``ODBError`` `corruptRecord` when the record is missing or not ODB encoding.
    func node(_ id: ObjectID) throws(ODBError) -> ODBNode {
        if let node = overlay[id] { return node }
        guard let version = snapshot.version(of: id) else {
            throw ODBError(.corruptRecord, "table record \(id) is not in the store", objectID: id)
        }
        if tracksReads { readVersions[id] = version }
        if let node = cache.node(id, version: version) { return node }
        let found: (record: Record, version: UInt64)?
        do {
            found = try snapshot.versionedGet(id)
        } catch {
            throw ODBError(error)
        }
        guard let found else {
            throw ODBError(.corruptRecord, "table record \(id) is not in the store", objectID: id)
        }
        let node = try ODBFormat.decode(found.record)
        cache.insert(id, version: found.version, node: node, payloadSize: found.record.payload.count)
        return node
    }

    /// Runs `body` on the node of `id`, keeping the change in the overlay (without copying the node's
    /// storage a second time).
    private func modify<Result>(_ id: ObjectID, _ body: (inout ODBNode) throws(ODBError) -> Result)
        throws(ODBError) -> Result
    {
        var node: ODBNode
        if let changed = overlay.removeValue(forKey: id) {
            node = changed
        } else {
            node = try self.node(id)
        }
        defer { overlay[id] = node }
        return try body(&node)
    }

    /// A new, empty table record.
    func newTable() -> ObjectID {
        let id = store.newID()
        created.insert(id)
        overlay[id] = .inline(EntryTable())
        return id
    }

    /// The root table, created in this work when the store has none yet.
    func rootForWriting() -> ObjectID {
        if let rootID { return rootID }
        let id = newTable()
        rootID = id
        createsRoot = true
        return id
    }

    // MARK: - Entries

    /// The content of `key` in the table `table`.
    func content(of key: String, in table: ObjectID) throws(ODBError) -> ODBContent? {
        let folded = ODBKey.fold(key)
        switch try node(table) {
        case .inline(let entries):
            return entries.entry(folded: folded)?.content
        case .hashed(let directory):
            let bucket = directory.bucket(for: ODBKey.hash(folded: folded))
            guard case .bucket(_, let entries) = try node(bucket) else {
                throw ODBError(.corruptRecord, "record \(bucket) of table \(table) is not a bucket", objectID: bucket)
            }
            return entries.entry(folded: folded)?.content
        case .bucket:
            throw ODBError(.corruptRecord, "record \(table) is a bucket where a table is expected", objectID: table)
        }
    }

    /// Sets `key` of table `table` to `content` (an existing key keeps its spelling); returns the old content.
    @discardableResult
    func set(_ key: String, to content: ODBContent, in table: ObjectID) throws(ODBError) -> ODBContent? {
        let folded = ODBKey.fold(key)
        let entry = ODBEntry(key: key, content: content)
        return try edit(folded, in: table) { entries in entries.set(entry, folded: folded) }
    }

    /// Removes `key` from table `table`; returns the removed entry.
    @discardableResult
    func remove(_ key: String, from table: ObjectID) throws(ODBError) -> ODBEntry? {
        let folded = ODBKey.fold(key)
        guard try content(of: key, in: table) != nil else { return nil }
        return try edit(folded, in: table) { entries in entries.remove(folded: folded) }
    }

    /// Removes every child of table `table` (a large table becomes a small, empty one; its buckets go).
    func removeAll(in table: ObjectID) throws(ODBError) {
        _ = try node(table)
        overlay[table] = .inline(EntryTable())
    }

    /// Edits the entries holding `folded` in table `table`: the table's own, or its bucket's.
    private func edit<Result>(_ folded: String, in table: ObjectID, _ body: (inout EntryTable) -> Result)
        throws(ODBError) -> Result
    {
        var target = table
        if case .hashed(let directory) = try node(table) {
            target = directory.bucket(for: ODBKey.hash(folded: folded))
            bucketOwners[target] = table
        }
        return try modify(target) { node throws(ODBError) in
            switch node {
            case .inline(var entries):
                node = .inline(EntryTable())
                defer { node = .inline(entries) }
                return body(&entries)
            case .bucket(let depth, var entries):
                node = .inline(EntryTable())
                defer { node = .bucket(depth: depth, entries) }
                return body(&entries)
            case .hashed:
                throw ODBError(
                    .corruptRecord, "record \(target) is a table where a bucket is expected", objectID: target)
            }
        }
    }

    /// Every entry of table `table`, sorted by folded key (then by key).
    func entries(of table: ObjectID) throws(ODBError) -> [ODBEntry] {
        var all: [ODBEntry] = []
        switch try node(table) {
        case .inline(let entries): all = Array(entries.entries)
        case .hashed(let directory):
            var seen = Set<ObjectID>()
            for bucket in directory.buckets where seen.insert(bucket).inserted {
                guard case .bucket(_, let entries) = try node(bucket) else {
                    throw ODBError(
                        .corruptRecord, "record \(bucket) of table \(table) is not a bucket", objectID: bucket)
                }
                all += entries.entries
            }
        case .bucket:
            throw ODBError(.corruptRecord, "record \(table) is a bucket where a table is expected", objectID: table)
        }
        var keyed: [(folded: String, entry: ODBEntry)] = all.map { (ODBKey.fold($0.key), $0) }
        keyed.sort { left, right in
            left.folded == right.folded ? left.entry.key < right.entry.key : left.folded < right.folded
        }
        return keyed.map(\.entry)
    }

    /// The number of children of table `table` (a large table reads all its buckets).
    func count(of table: ObjectID) throws(ODBError) -> Int {
        switch try node(table) {
        case .inline(let entries): return entries.count
        case .hashed(let directory):
            var seen = Set<ObjectID>()
            var total = 0
            for bucket in directory.buckets where seen.insert(bucket).inserted {
                guard case .bucket(_, let entries) = try node(bucket) else {
                    throw ODBError(
                        .corruptRecord, "record \(bucket) of table \(table) is not a bucket", objectID: bucket)
                }
                total += entries.count
            }
            return total
        case .bucket:
            throw ODBError(.corruptRecord, "record \(table) is a bucket where a table is expected", objectID: table)
        }
    }

    // MARK: - Commit

    /// Writes every change in one batch, expecting every record read to be unchanged.
    /// - throws: ``ODBError`` `store` with the engine's error (`conflict` when a record read changed).
    func commit() throws(ODBError) {
        guard !overlay.isEmpty else { return }
        try normalize()
        dropDetachedNewTables()
        var batch = WriteBatch()
        batch.reserveCapacity(overlay.count + 1)
        for (id, version) in readVersions { batch.expect(id, version: version) }
        var written: [(ObjectID, ODBNode, Int)] = []
        written.reserveCapacity(overlay.count)
        for (id, node) in overlay {
            let (payload, references) = ODBFormat.encode(node)
            let tag: UInt32
            if case .bucket = node { tag = ODBFormat.bucketTag } else { tag = ODBFormat.tableTag }
            batch.put(id, typeTag: tag, references: references, payload: payload, pinned: false)
            written.append((id, node, payload.count))
        }
        if createsRoot, let rootID { batch.setRoot(ODBFormat.rootName, to: rootID) }
        let sequence: UInt64
        do {
            sequence = try store.write(batch).sequence
        } catch {
            throw ODBError(error)
        }
        for (id, node, size) in written { cache.insert(id, version: sequence, node: node, payloadSize: size) }
        overlay = IDTable()
    }

    /// Leaves out tables created by this work that nothing written refers to any more (created, then
    /// deleted or replaced in the same transaction): written, they would be garbage until mark-sweep.
    /// Buckets need no such care: they are created only by ``normalize()``, for a table being written.
    private func dropDetachedNewTables() {
        guard !created.isEmpty else { return }
        while true {
            var referenced = Set<ObjectID>()
            if createsRoot, let rootID { referenced.insert(rootID) }
            for (_, node) in overlay { node.forEachReference { referenced.insert($0) } }
            let detached = created.filter { overlay[$0] != nil && !referenced.contains($0) }
            guard !detached.isEmpty else { return }
            for id in detached { overlay[id] = nil }
        }
    }

    /// Turns inline tables that grew too large into hashed ones, and splits buckets that grew too large.
    private func normalize() throws(ODBError) {
        var pending = overlay.ids
        while let id = pending.popLast() {
            switch overlay[id] {
            case .inline(let entries) where Self.isOversized(entries, entryLimit: ODBFormat.maxInlineEntries):
                let bucket = store.newID()
                overlay[bucket] = .bucket(depth: 0, entries)
                overlay[id] = .hashed(ODBDirectory(depth: 0, buckets: [bucket]))
                bucketOwners[bucket] = id
                pending.append(bucket)
            case .bucket(let depth, let entries)
            where depth < ODBFormat.maxDepth && Self.isOversized(entries, entryLimit: ODBFormat.maxBucketEntries):
                guard let owner = bucketOwners[id] else { continue }
                guard case .hashed(var directory) = try node(owner) else {
                    throw ODBError(
                        .corruptRecord, "record \(owner) owns bucket \(id) but is not hashed", objectID: owner)
                }
                if depth == directory.depth {
                    directory.buckets += directory.buckets
                    directory.depth += 1
                }
                var low = EntryTable()
                var high = EntryTable()
                for entry in entries.entries {
                    let folded = ODBKey.fold(entry.key)
                    if (ODBKey.hash(folded: folded) >> UInt64(depth)) & 1 == 0 {
                        low.set(entry, folded: folded)
                    } else {
                        high.set(entry, folded: folded)
                    }
                }
                let sibling = store.newID()
                for index in directory.buckets.indices where directory.buckets[index] == id && (index >> depth) & 1 == 1
                {
                    directory.buckets[index] = sibling
                }
                overlay[id] = .bucket(depth: depth + 1, low)
                overlay[sibling] = .bucket(depth: depth + 1, high)
                overlay[owner] = .hashed(directory)
                bucketOwners[sibling] = owner
                pending += [id, sibling]
            default:
                continue
            }
        }
    }

    /// Whether `entries` is over `entryLimit` entries or (with more than one entry) about 8 KiB.
    private static func isOversized(_ entries: EntryTable, entryLimit: Int) -> Bool {
        if entries.count > entryLimit { return true }
        guard entries.count > 1 else { return false }
        var bytes = 0
        for entry in entries.entries {
            bytes += entry.key.utf8.count + 3
            if case .value(let value, let applicationType) = entry.content {
                bytes += applicationType?.utf8.count ?? 0
                switch value {
                case .string(let string): bytes += string.utf8.count
                case .data(let data): bytes += data.count
                default: bytes += 8
                }
            }
        }
        return bytes > ODBFormat.maxInlineBytes
    }
}
