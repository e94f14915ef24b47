import LogStore

/// Which stored objects this context's own saves freed.
///
/// A save that drops the last reference to an object lets the engine free it (reference counting, with
/// its cascade). The context may still hold the instance, and linking it again later must store it again:
/// that is this context's own doing. An object that is gone for any other reason (another context deleted
/// it, or dropped the last reference to it) must not come back silently: a save that links it fails with
/// `conflict`. So each save notes which objects the engine freed with it, as its commit reports them.
extension ObjectContext {
    /// Notes the objects the engine freed with this context's save (``CommittedBatch/freed``).
    func noteReleased(_ freed: ObjectChanges) {
        for change in freed {
            confined.state.releasedIDs.insert(change.id)
            // No longer stored: nothing to save unless it is linked again (the save that links it encodes
            // it then), so the context need not keep it.
            cache.slot(change.id)?.strongHold = nil
        }
    }
}
