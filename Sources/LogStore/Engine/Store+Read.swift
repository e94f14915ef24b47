@_spi(Engine) import LogStoreFormat
@_spi(Engine) import LogStoreSystem

/// Reading: records, roots, ids and counts. None of these waits for a writer's I/O.
extension Store {
    /// The newest record stored under `id`, or nil when the object is not live.
    ///
    /// The frame's checksum is verified on every read; the payload is decompressed when it was stored
    /// compressed.
    /// - throws: ``LogStoreError`` with code `closed`, or `corruptFrame` (naming file and offset) when
    ///   the bytes on disk no longer match their checksum.
    public func get(_ id: ObjectID) throws(LogStoreError) -> Record? {
        switch try locate(id) {
        case .missing: return nil
        case .inView(let cached, let entry, let file):
            return try RecordReader.record(id, entry, in: file, dictionaries: cached.view.dictionaries).record
        case .underLock(let entry, let file, let dictionaries):
            return try RecordReader.record(id, entry, in: file, dictionaries: dictionaries).record
        }
    }

    /// Calls `body` with the stored bytes of `id`'s payload, without copying them when they are stored
    /// uncompressed; returns nil (without calling `body`) when the object is not live.
    ///
    /// The buffer is valid only inside `body`.
    /// - throws: what ``get(_:)`` throws, and what `body` throws.
    public func withPayload<Result>(
        of id: ObjectID, _ body: (_ typeTag: UInt32, UnsafeRawBufferPointer) throws -> Result
    ) throws -> Result? {
        switch try locate(id) {
        case .missing: return nil
        case .inView(let cached, let entry, let file):
            return try RecordReader.withPayload(of: id, entry, in: file, dictionaries: cached.view.dictionaries, body)
        case .underLock(let entry, let file, let dictionaries):
            return try RecordReader.withPayload(of: id, entry, in: file, dictionaries: dictionaries, body)
        }
    }

    /// The type tag and references of `id`, without reading its payload; nil when it is not live.
    /// - throws: what ``get(_:)`` throws.
    public func header(of id: ObjectID) throws(LogStoreError) -> (typeTag: UInt32, references: [ObjectID])? {
        switch try locate(id) {
        case .missing: return nil
        case .inView(_, let entry, let file), .underLock(let entry, let file, _):
            return try RecordReader.header(of: id, entry, in: file)
        }
    }

    /// Whether `id` names a live object.
    /// - throws: ``LogStoreError`` with code `closed`.
    public func contains(_ id: ObjectID) throws(LogStoreError) -> Bool {
        if case .missing = try locate(id) { return false }
        return true
    }

    /// The object the root `name` points at, or nil when there is no such root.
    /// - throws: ``LogStoreError`` with code `closed`.
    public func root(named name: String) throws(LogStoreError) -> ObjectID? {
        try readState { $0.roots[name] }
    }

    /// Every named root and the object it points at.
    /// - throws: ``LogStoreError`` with code `closed`.
    public func roots() throws(LogStoreError) -> [String: ObjectID] {
        try readState { $0.roots }
    }

    /// The ids of the live objects, in increasing order; only those of `typeTag` when it is given.
    ///
    /// Reads only the in-memory index, never a payload.
    /// - throws: ``LogStoreError`` with code `closed`.
    public func ids(ofType typeTag: UInt32? = nil) throws(LogStoreError) -> [ObjectID] {
        try readState { state in
            RecordReader.ids(typeTag: typeTag, typeCounts: state.typeCounts, liveCount: state.liveCount) {
                state.forEachDurable($0)
            }
        }
    }

    /// The number of live objects; only those of `typeTag` when it is given.
    /// - throws: ``LogStoreError`` with code `closed`.
    public func count(ofType typeTag: UInt32? = nil) throws(LogStoreError) -> Int {
        try readState { state in typeTag.map { state.typeCounts[$0] ?? 0 } ?? state.liveCount }
    }

    /// The number of live objects of each type tag.
    /// - throws: ``LogStoreError`` with code `closed`.
    public func countsByType() throws(LogStoreError) -> [UInt32: Int] {
        try readState { $0.typeCounts }
    }

    /// How many views of plain reads the store holds (one per stripe of threads at most; none right
    /// after a change of the index).
    @_spi(Testing) public var plainReadViewsHeld: Int { readViews.heldCount }

    // MARK: - Internals

    func readState<Result>(_ body: (borrowing IndexState) -> Result) throws(LogStoreError) -> Result {
        let result: Result? = state.withLock { state in state.isOpen ? body(state) : nil }
        guard let result else { throw LogStoreError(.closed, "the store is closed", file: directory) }
        return result
    }

    /// Where a plain read found an object.
    enum PlainLocation {
        /// Not live.
        case missing
        /// In the calling thread's view (which holds the segment and the dictionaries).
        case inView(PlainReadViews.Cached, IndexEntry, SegmentFile)
        /// Under the index lock (the thread reads without a view for now, ``PlainReadViews``).
        case underLock(IndexEntry, SegmentFile, CompressionDictionaries)
    }

    /// Finds `id` for a plain read, which sees every batch published before it began: through the calling
    /// thread's view (``PlainReadViews``) or, while the thread's views do not last, under the index lock.
    /// - throws: ``LogStoreError`` with code `closed`.
    func locate(_ id: ObjectID) throws(LogStoreError) -> PlainLocation {
        let cached = try readViews.view { () throws(LogStoreError) -> PlainReadViews.Cached in
            try readState { PlainReadViews.Cached(view: $0.durableView(), generation: readViews.currentGeneration) }
        }
        if let cached {
            guard let entry = cached.view.entry(id.rawValue), let file = cached.view.segments[entry.segment] else {
                return .missing
            }
            return .inView(cached, entry, file)
        }
        return try readState { state -> PlainLocation in
            guard let entry = state.durableEntry(id.rawValue), let file = state.segments.file(entry.segment) else {
                return .missing
            }
            return .underLock(entry, file, state.dictionaries)
        }
    }
}
