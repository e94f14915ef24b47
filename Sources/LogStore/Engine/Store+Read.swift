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
        guard let (entry, file, dictionaries) = try locate(id) else { return nil }
        return try RecordReader.record(id, entry, in: file, dictionaries: dictionaries).record
    }

    /// Calls `body` with the stored bytes of `id`'s payload, without copying them when they are stored
    /// uncompressed; returns nil (without calling `body`) when the object is not live.
    ///
    /// The buffer is valid only inside `body`.
    /// - throws: what ``get(_:)`` throws, and what `body` throws.
    public func withPayload<Result>(
        of id: ObjectID, _ body: (_ typeTag: UInt32, UnsafeRawBufferPointer) throws -> Result
    ) throws -> Result? {
        guard let (entry, file, dictionaries) = try locate(id) else { return nil }
        return try RecordReader.withPayload(of: id, entry, in: file, dictionaries: dictionaries, body)
    }

    /// The type tag and references of `id`, without reading its payload; nil when it is not live.
    /// - throws: what ``get(_:)`` throws.
    public func header(of id: ObjectID) throws(LogStoreError) -> (typeTag: UInt32, references: [ObjectID])? {
        guard let (entry, file, _) = try locate(id) else { return nil }
        return try RecordReader.header(of: id, entry, in: file)
    }

    /// Whether `id` names a live object.
    /// - throws: ``LogStoreError`` with code `closed`.
    public func contains(_ id: ObjectID) throws(LogStoreError) -> Bool {
        try readState { $0.durableEntry(id.rawValue) != nil }
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

    // MARK: - Internals

    func readState<Result>(_ body: (borrowing IndexState) -> Result) throws(LogStoreError) -> Result {
        let result: Result? = state.withLock { state in state.isOpen ? body(state) : nil }
        guard let result else { throw LogStoreError(.closed, "the store is closed", file: directory) }
        return result
    }

    /// The index entry of `id` and the segment holding it, or nil when it is not live.
    func locate(_ id: ObjectID) throws(LogStoreError) -> (IndexEntry, SegmentFile, CompressionDictionaries)? {
        enum Found {
            case closed
            case missing
            case found(IndexEntry, SegmentFile, CompressionDictionaries)
        }
        let found = state.withLock { state -> Found in
            guard state.isOpen else { return .closed }
            guard let entry = state.durableEntry(id.rawValue), let file = state.segments.file(entry.segment) else {
                return .missing
            }
            return .found(entry, file, state.dictionaries)
        }
        switch found {
        case .closed: throw LogStoreError(.closed, "the store is closed", file: directory)
        case .missing: return nil
        case .found(let entry, let file, let dictionaries): return (entry, file, dictionaries)
        }
    }
}
