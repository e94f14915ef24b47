@_spi(Engine) import LogStoreFormat
@_spi(Engine) import LogStoreSystem

/// The follower's slow path: loading the whole store again, as a read-only open does, when a compaction
/// pass replaced segments, when what was read cannot be trusted, or when reading stopped at the same
/// bytes for ``stallLimit`` (the loader's rules for readers beside a writer then tell a batch still being
/// written, a torn tail of a writer that died, and damage apart, and damage is reported only when it
/// lasts).
extension Follower {
    /// Loads the store again and puts the loaded state in place of the store's in one hold of the index
    /// lock. Observers of the change feed learn that they missed the batches after the last one delivered
    /// (``StoreChange/missed(after:through:)``), or, when the store went back to an older batch, that
    /// batches they were given are gone (``StoreChange/rewound(to:)``).
    /// - parameter reason: why (kept for diagnostics).
    /// - throws: what a read-only open throws (`corruptFrame` for damage found twice, `missingSegment`,
    ///   `ioError`, ...); the store keeps its state then. `closed` when the store was closed meanwhile.
    func reloadState(_ store: Store, _ follow: inout State, because reason: String) throws(LogStoreError) {
        let loaded = try StoreLoader(
            directory: directory, mode: .readOnly, io: io, requiresManifest: requiresManifest, encryption: encryption
        ).load()
        let known = Set(loaded.state.segments.numbers)
        var fresh = loaded.state
        fresh.publish(through: loaded.maxSequence)
        // The state replaced is let go after the lock: unmapping its segments takes a while. The change log
        // learns of the load in the same hold of the index lock, so that a feed made meanwhile starts
        // either before both or after both (``Store/changes(after:)`` reads under it).
        let swapped = store.state.withLock { state -> (IndexState, ChangeLog.Wake)? in
            guard state.isOpen else { return nil }
            store.readViews.advance()
            swap(&state, &fresh)
            return (fresh, store.pipeline.changes.reloaded(at: loaded.maxSequence))
        }
        guard let (_, wake) = swapped else { throw LogStoreError(.closed, "the store is closed", file: directory) }
        store.readViews.release()
        wake.resume()
        let firstFreeID = max(loaded.reservedIDs, loaded.highestID + 1, 1)
        store.nextID.withLock { $0 = max($0, firstFreeID) }
        follow.position = Position(loaded, known: known)
        follow.known = known
        follow.outputs = []
        follow.sequence = loaded.maxSequence
        follow.reloads += 1
        follow.lastReload = reason
        let position = follow.position
        store.pipeline.follow(position.sealed ? nil : position.file, size: position.offset)
    }

    /// Notes where reading stopped (nil: at the end of what is written), and returns a load of the whole
    /// store when it stopped at the same bytes for ``stallLimit``, once for that place: a writer that died
    /// leaves a torn tail there until the next writer cuts it, and loading again then finds the same
    /// state. A load that failed is tried again after another ``stallLimit``; meanwhile its error is thrown
    /// again.
    func stalled(at stall: Stall?, _ follow: inout State) throws(LogStoreError) -> Reload? {
        guard let stall else {
            follow.stall = nil
            return nil
        }
        let now = ContinuousClock.now
        guard let current = follow.stall, current.place == stall else {
            follow.stall = (stall, now)
            return nil
        }
        let lasted = now - current.since >= Self.stallLimit
        if let done = follow.reloadedFor, done.place == stall {
            guard let failure = done.failure else { return nil }
            guard lasted else { throw failure }
        }
        guard lasted else { return nil }
        return Reload(
            reason:
                "reading stopped at offset \(stall.offset) of \(stall.file) for \(Self.stallLimit): \(stall.reason)",
            stall: stall)
    }

    /// Carries out `reload` (``reloadState(_:_:because:)``), remembering for a stall that it was done, or
    /// the error it ended in.
    func load(_ reload: Reload, _ store: Store, _ follow: inout State) throws(LogStoreError) {
        do {
            try reloadState(store, &follow, because: reload.reason)
            if let stall = reload.stall { follow.reloadedFor = (stall, nil) }
        } catch {
            if let stall = reload.stall {
                follow.reloadedFor = (stall, error)
                follow.stall = (stall, .now)
            }
            throw error
        }
    }
}
