import Foundation
@_spi(Engine) import LogStoreSystem
import Synchronization

/// The change feed of a store open read-only: while a feed waits for batches, a thread of the store's own
/// refreshes it every ``pollInterval`` (reading the segment followed; listing the directory only every
/// ``listingInterval`` until that segment is sealed) and publishes what it reads to the change log, which
/// wakes the waiting feeds. One thread serves every feed of the store; it runs while a feed waits (or asked within
/// ``pollerLinger``) and ends by itself afterwards, or when the store is closed or released.
extension Follower {
    /// How often the change feed of a store open read-only looks for new batches.
    static let pollInterval = Duration.milliseconds(2)
    /// How long the change feed waits after a refresh failed before it tries again.
    static let failurePause = Duration.milliseconds(250)
    /// How long the polling thread goes on after the last feed asked for it while no feed waits.
    static let pollerLinger = Duration.milliseconds(100)
    /// How often the polling thread lists the directory while the segment it follows is not sealed (then
    /// only that segment grows): to find segments a compaction pass deleted.
    static let listingInterval = Duration.milliseconds(50)

    /// Has the polling thread run for a feed of `store` that is about to wait for a batch: starts it
    /// when it does not run. (A nil store, released meanwhile, has nothing to poll.)
    func keepPolling(_ store: Store?) {
        guard let store else { return }
        let start = poller.withLock { poller -> Bool in
            poller.lastDemand = .now
            guard !poller.running else { return false }
            poller.running = true
            return true
        }
        guard start else { return }
        let thread = Thread { [weak store, self] in
            while pollOnce(store) { Thread.sleep(forTimeInterval: Self.pollInterval / .seconds(1)) }
        }
        thread.name = "logstore.follow"
        thread.start()
    }

    /// One turn of the polling thread: a refresh of `store` (when nothing came, the thread then pauses).
    /// Returns false when the thread ends: the store is gone or closed, or no feed waits or asked lately.
    private func pollOnce(_ store: Store?) -> Bool {
        guard let store, (try? store.checkOpen()) != nil else {
            poller.withLock { $0.running = false }
            return false
        }
        while poll(store) {}
        let log = store.pipeline.changes
        return poller.withLock { poller -> Bool in
            if log.hasWaiters || ContinuousClock.now - poller.lastDemand < Self.pollerLinger { return true }
            poller.running = false
            return false
        }
    }

    /// One poll: a refresh, unless another runs (``Store/refresh()`` in another thread) or one failed
    /// within ``failurePause``. Returns whether the store's change log got anything new.
    private func poll(_ store: Store) -> Bool {
        let polled = state.withLockIfAvailable { follow -> Bool in
            let now = ContinuousClock.now
            if let failed = follow.lastFailure, now - failed < Self.failurePause { return false }
            let before = store.pipeline.changes.newest
            do {
                let listing = now - follow.lastListing >= Self.listingInterval
                if let reload = try advance(store, &follow, listing: listing) { try load(reload, store, &follow) }
                follow.lastFailure = nil
            } catch {
                follow.lastFailure = now
            }
            return store.pipeline.changes.newest != before
        }
        return polled ?? false
    }
}
