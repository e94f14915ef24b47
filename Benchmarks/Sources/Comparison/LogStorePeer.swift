import LogStore

/// LogStore through its engine API with default options.
final class LogStorePeer: KeyValuePeer {
    let store: Store

    /// Opens the store; key k is object id k + 1 (the ids are reserved with `reserveIDs(through:)`).
    init(directory: String, count: Int) throws {
        store = try Store.open(at: directory)
        try store.reserveIDs(through: ObjectID(UInt64(max(count, 1))))
    }

    @inline(__always) private func id(_ key: Int) -> ObjectID { ObjectID(UInt64(key) + 1) }

    func writeBatch(keys: ArraySlice<Int>, records: [ComparisonRecord], fresh: Bool) throws {
        var batch = WriteBatch()
        for (key, record) in zip(keys, records) {
            batch.put(id(key), typeTag: record.typeTag, payload: record.payload)
        }
        try store.write(batch)
    }

    /// One key: a plain get. Several: a snapshot, LogStore's read transaction (all gets see one moment).
    func read(keys: ArraySlice<Int>) throws -> Int {
        var bytes = 0
        if keys.count == 1, let key = keys.first { return try store.get(id(key))?.payload.count ?? 0 }
        let snapshot = try store.snapshot()
        for key in keys { bytes &+= try snapshot.get(id(key))?.payload.count ?? 0 }
        return bytes
    }

    func commitOne(key: Int, record: ComparisonRecord) throws {
        try store.put(id(key), typeTag: record.typeTag, payload: record.payload)
    }

    func reclaimSpace() throws { _ = try store.compact() }

    func close() throws { try store.close() }
}
