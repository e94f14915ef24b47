/// A lock's place in the engine's lock order: a thread that holds a ranked lock takes only locks of a
/// higher ``level``, never one of the same level or a lower one. No two threads can then each wait for a
/// lock the other holds.
///
/// Debug builds check the order on every acquisition of a ranked ``ConditionLock`` or ``RankedMutex``
/// (``LockRankChecker``); release builds compile the check away and store no rank (a rank's ``level``
/// and name exist in debug builds only).
///
/// The order, with the reasons for it, is the table "Locks and their order" of
/// `Documentation/Architecture.md`:
///
///     compaction → queue → manifest → index → nextID → prefill → the leaf locks
///
/// The leaf locks share the last level: a thread holding one takes no other lock.
@usableFromInline
package enum LockRank: Int, Sendable {
    /// `Store.compactionLock`: one compaction pass, dictionary removal, hint check or hint write at a time.
    case compaction = 1
    /// `CommitPipeline.queue`: the commit queue (pending batches, the tail segment, durability).
    case queue
    /// `ManifestWriter`'s lock: one rewrite of the `SEGMENTS` manifest at a time.
    case manifest
    /// `Store.state` (the pipeline's `index`): the index state.
    case index
    /// `Store.nextID`: the next id `newID()` hands out.
    case nextID
    /// `SegmentPrefill`'s lock: which segment is extended and prefilled, and its filler.
    case prefill
    /// A leaf: `PageCacheFiller`'s state.
    case pageCacheFiller
    /// A leaf: `Store.compactor`, the handle of the background compactor.
    case compactorHandle
    /// A leaf: `BackgroundCompactor.lastError`.
    case compactorError
    /// A leaf: `Store`'s hold of its directory lock (the `flock` itself is no thread lock).
    case directoryLock
    /// A leaf: `HintPrefetcher`'s phases and its cancellation flag.
    case hintPrefetch
    /// A leaf: the segments a compaction pass hands to the thread that lets go of them.
    case segmentRelease
    /// A leaf: `FaultInjector`'s rules, actions, counts and observer (taken inside the system-call seam,
    /// so under whatever lock the caller holds; actions and the observer run outside them).
    case faultInjector
    /// A leaf: the change log of committed batches (`ChangeLog`), taken by the commit leader after it
    /// published a group and by observers reading it.
    case changeLog
    /// A leaf: one stripe of `PlainReadViews`, the view a thread's plain reads go through (taken under the
    /// index lock by the writer, and alone by readers).
    case plainReadView
    /// A store open read-only: the follower's state, held for a whole refresh (its own level beside the
    /// compaction lock, which such a store never takes).
    case follower
    /// A store open read-only: the follower's polling thread's flags; under it the change log is asked
    /// whether observers wait (the level of the prefill's lock, which such a store never takes).
    case followerPoller
}

#if DEBUG
    extension LockRank: CustomStringConvertible {
        /// The level the order compares: a thread holding a lock of some level takes only locks of a higher
        /// one. Every leaf lock has the last level.
        package var level: Int {
            switch self {
            case .compaction, .queue, .manifest, .index, .nextID, .prefill: rawValue
            case .follower: LockRank.compaction.rawValue
            case .followerPoller: LockRank.prefill.rawValue
            case .pageCacheFiller, .compactorHandle, .compactorError, .directoryLock, .hintPrefetch, .segmentRelease,
                .faultInjector, .changeLog, .plainReadView:
                LockRank.prefill.rawValue + 1
            }
        }

        /// The lock this rank is given to, as the assertion names it.
        @usableFromInline
        package var description: String {
            switch self {
            case .compaction: "the compaction lock (Store.compactionLock)"
            case .queue: "the commit queue lock (CommitPipeline.queue)"
            case .manifest: "the manifest writer's lock (ManifestWriter.lock)"
            case .index: "the index lock (Store.state)"
            case .nextID: "the id allocator lock (Store.nextID)"
            case .prefill: "the segment prefill lock (SegmentPrefill.filling)"
            case .pageCacheFiller: "a page-cache filler's lock (PageCacheFiller.state, a leaf)"
            case .compactorHandle: "the background compactor handle's lock (Store.compactor, a leaf)"
            case .compactorError: "the background compactor's error lock (BackgroundCompactor.lastError, a leaf)"
            case .directoryLock: "the directory lock handle's lock (Store.lock, a leaf)"
            case .hintPrefetch: "a hint prefetcher's lock (HintPrefetcher, a leaf)"
            case .segmentRelease: "the compacted segments' release lock (Store.release, a leaf)"
            case .faultInjector: "a fault injector's lock (FaultInjector, a leaf)"
            case .changeLog: "the change log's lock (ChangeLog.state, a leaf)"
            case .plainReadView: "a plain read view's lock (PlainReadViews, a leaf)"
            case .follower: "the follower's lock (Follower.state)"
            case .followerPoller: "the follower's polling lock (Follower.poller)"
            }
        }
    }
#endif
