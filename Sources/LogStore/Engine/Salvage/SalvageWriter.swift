@_spi(Engine) import LogStoreFormat
@_spi(Engine) import LogStoreSystem

/// Writes what a ``SalvagePlan`` copies into a new store: the placeholders first, then the objects in
/// atomic batches of whole groups of objects that refer to each other (strongly connected components,
/// those referred to first, as every reference must name a live object when it is written), the roots
/// last. A group too large for one batch is written twice: first without references, then with them.
struct SalvageWriter {
    /// Objects per batch, unless one group of objects referring to each other is larger.
    static let batchObjects = 1_000
    /// Payload bytes per batch, unless one group is larger.
    static let batchBytes = 8 << 20

    let plan: SalvagePlan

    /// Creates the store in `directory` (which must not exist) and writes the plan into it.
    /// - throws: ``LogStoreError``: what `Store.open` and its writes throw, naming the file.
    func write(to directory: String, options: StoreOptions) throws(LogStoreError) {
        var options = options
        options.readOnly = false
        options.createIfMissing = true
        options.fsyncPolicy = .never
        options.compaction.background = false
        let store = try Store.open(at: directory, options: options)
        do throws(LogStoreError) {
            try fill(store)
            try store.close()
        } catch {
            try? store.close()
            throw error
        }
    }

    private func fill(_ store: Store) throws(LogStoreError) {
        // Every id the source used or reserved, even above the limit `reserveIDs(through:)` keeps for ids
        // brought in from outside: the source handed them out itself.
        if plan.highestID > 0 { store.reserveIDsUnchecked(through: ObjectID(plan.highestID)) }
        var batch = WriteBatch()
        var bytes = 0
        func flush() throws(LogStoreError) {
            guard !batch.isEmpty else { return }
            try store.write(batch)
            batch = WriteBatch()
            bytes = 0
        }
        for (id, reason) in plan.placeholders.sorted(by: { $0.key < $1.key }) {
            if batch.count >= Self.batchObjects { try flush() }
            batch.put(
                Record(
                    id: ObjectID(id), typeTag: SalvageReport.placeholderTypeTag, payload: Array(reason.utf8),
                    isPinned: false))
        }
        try flush()
        let objects = plan.objects
        var positions: [UInt64: Int] = [:]
        positions.reserveCapacity(objects.count)
        for (position, object) in objects.enumerated() { positions[object.id] = position }
        var graph = ReferenceGraph(nodeCount: objects.count)
        for object in objects { graph.addNode(edges: object.references.lazy.compactMap { positions[$0] }) }
        let state = plan.state
        func record(_ member: Int) throws(LogStoreError) -> Record {
            let object = objects[member]
            guard let file = state.segments.file(object.entry.segment) else {
                throw LogStoreError(.missingSegment, "object \(object.id): its segment is missing")
            }
            var (record, _) = try RecordReader.record(
                ObjectID(object.id), object.entry, in: file, dictionaries: state.dictionaries)
            if object.pin { record.isPinned = true }
            return record
        }
        func add(_ record: Record) throws(LogStoreError) {
            if batch.count >= Self.batchObjects || bytes >= Self.batchBytes { try flush() }
            batch.put(record)
            bytes += record.payload.count
        }
        for component in graph.stronglyConnectedComponents() {
            let stored = component.reduce(0) { $0 + Int(objects[$1].entry.length) }
            guard component.count > Self.batchObjects || stored > Self.batchBytes else {
                if batch.count + component.count > Self.batchObjects || bytes + stored > Self.batchBytes { try flush() }
                for member in component {
                    let record = try record(member)
                    batch.put(record)
                    bytes += record.payload.count
                }
                continue
            }
            // Too large for one batch: every member first without its references, then with them.
            for member in component {
                var bare = try record(member)
                bare.references = []
                try add(bare)
            }
            try flush()
            for member in component { try add(try record(member)) }
            try flush()
        }
        for (name, target) in state.roots.sorted(by: { $0.key < $1.key }) { batch.setRoot(name, to: target) }
        try flush()
    }
}
