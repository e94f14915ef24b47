@_spi(Engine) import LogStoreFormat
@_spi(Engine) import LogStoreSystem

extension Store {
    /// The live objects whose records refer to `id`, in increasing id order, as readers see the store now
    /// (committed batches; a named root is not an object and is not listed).
    ///
    /// Answered from an index of references the store builds the first time it needs one (this call, or a
    /// delete refused with `stillReferenced`): one pass over the reference lists of the live records
    /// (frame headers only, about 25 ns an object, holding the index lock), after which every put keeps it
    /// current and an answer costs the referrers of `id`, not a scan. A store open read-only beside a
    /// writer builds it again after each batch it follows. For example:
    ///
    /// ```swift
    /// let holders = try store.referrers(of: tagID)     // the objects that still refer to the tag
    /// ```
    /// - throws: ``LogStoreError`` with code `closed`.
    public func referrers(of id: ObjectID) throws(LogStoreError) -> [ObjectID] {
        let found: [UInt64]? = pipeline.queue.withLock { queue in
            let chunks = queue.pending + queue.flushingChunks
            return state.withLock { state -> [UInt64]? in
                guard state.isOpen else { return nil }
                // Hints come from the writer's view; what readers see is confirmed on the durable records.
                let candidates = ReferenceTracker.liveReferrers(of: id.rawValue, in: &state, chunks: chunks)
                var durable = Set(candidates)
                for (referrer, entry) in state.durableUndo where !entry.isEmpty {
                    if state.references(of: entry).contains(id) { durable.insert(referrer) }
                }
                return durable.sorted().filter { referrer in
                    guard let entry = state.durableEntry(referrer) else { return false }
                    return state.refers(entry, to: id.rawValue, pendingIn: chunks)
                }
            }
        }
        guard let found else { throw LogStoreError(.closed, "the store is closed", file: directory) }
        return found.map { ObjectID($0) }
    }
}
