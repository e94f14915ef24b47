/// What a replica's hold keeps from compaction (``Store/replicate(to:)``): a folder
/// `history/replica-HASH.hold` in the store names the oldest segment the replica has not yet received whole,
/// and compaction leaves that segment and every newer one alone. Between regular passes that is the newest
/// segment or two; a replica no longer brought up to date keeps every newer segment, so its hold is
/// listed by ``Store/historyUsage()`` and removed with ``Store/forgetReplica(_:)`` (after which passes into
/// that replica are refused).
public struct ReplicaHold: Sendable, Equatable {
    /// The hold folder's name in `history` (`replica-HASH.hold`, HASH the XXH3-64 of the replica's path).
    public var name: String
    /// The oldest segment held (the one the replica has a part of).
    public var oldestSegment: UInt32
    /// How many of the store's segments compaction leaves alone for it.
    public var segments: Int
    /// The bytes of those segments.
    public var bytes: UInt64
    /// When a pass last changed the hold (milliseconds since 1970): a replica brought up to date regularly
    /// has a recent one.
    public var changedMilliseconds: UInt64
}
