/// A moment of a store kept under a name by ``Store/retain(as:)``: the store exactly as of one commit,
/// readable with ``Store/open(at:retained:)`` until it is released.
public struct RetainedMoment: Sendable, Equatable, CustomStringConvertible {
    /// Its name.
    public var name: String
    /// The newest commit it holds: it holds exactly the commits up to this one.
    public var sequence: UInt64
    /// When it was retained, in milliseconds since 1970 (UTC).
    public var createdMilliseconds: UInt64
    /// Its segments.
    public var segments: Int
    /// Bytes of its files (segments, hints, dictionaries), shared with the store or not.
    public var bytes: UInt64
    /// Bytes of its files that the store itself no longer has (segments compaction replaced since): what
    /// keeping it costs on disk. A file several moments share counts in each of them; ``HistoryUsage/bytes``
    /// counts it once.
    public var bytesNotInStore: UInt64
    /// Garbage bytes (records the store has overwritten or deleted since) in the store's segments that this
    /// moment holds: compaction leaves a held segment alone, as rewriting it would free nothing, so this
    /// garbage stays until every moment holding the segment is released. Shared with other moments holding
    /// the same segments.
    public var garbageBytesHeld: UInt64 = 0

    /// `name (commit N, date)`.
    public var description: String {
        "\(name) (commit \(sequence), \(segments) segments, \(bytesNotInStore) bytes not in the store, "
            + "\(garbageBytesHeld) bytes of garbage held in it)"
    }
}

/// What a store's retained moments cost on disk (``Store/historyUsage()``).
public struct HistoryUsage: Sendable, Equatable {
    /// The retained moments, oldest first.
    public var moments: [RetainedMoment]
    /// Bytes of the moments' files that the store itself no longer has, each file counted once.
    public var bytes: UInt64
    /// Garbage bytes in the store's segments that moments hold (each segment once): what compaction would
    /// free without them.
    public var garbageBytesHeld: UInt64 = 0
    /// The holds of replicas (``Store/replicate(to:)``), by name.
    public var replicaHolds: [ReplicaHold] = []

    /// What the moments cost on disk: ``bytes`` plus ``garbageBytesHeld``.
    public var totalBytes: UInt64 { bytes + garbageBytesHeld }
}

/// Which retained moments to keep (``Store/applyRetention(_:nowMilliseconds:)``); the others are released.
///
/// A moment is kept when any rule keeps it: it is among the newest ``keepLast``; or it is the newest of its
/// hour and that hour began less than ``hourlyFor`` ago; or the newest of its day (UTC) and that day began
/// less than ``dailyFor`` ago. Only moments whose name starts with ``namePrefix`` are considered (the others
/// are never released by the policy).
///
/// For example, the last 5, one per hour for a day, and one per day for a month:
/// ```swift
/// let policy = RetentionPolicy(keepLast: 5, hourlyFor: .seconds(86_400), dailyFor: .seconds(30 * 86_400))
/// ```
public struct RetentionPolicy: Sendable, Equatable {
    /// How many of the newest moments to keep whatever their age.
    public var keepLast: Int
    /// For how long to keep the newest moment of each hour.
    public var hourlyFor: Duration
    /// For how long to keep the newest moment of each day (UTC).
    public var dailyFor: Duration
    /// The policy considers only moments whose name starts with this (all of them when empty).
    public var namePrefix: String

    /// A policy; by default it keeps nothing (every considered moment is released).
    public init(
        keepLast: Int = 0, hourlyFor: Duration = .zero, dailyFor: Duration = .zero, namePrefix: String = ""
    ) {
        self.keepLast = keepLast
        self.hourlyFor = hourlyFor
        self.dailyFor = dailyFor
        self.namePrefix = namePrefix
    }

    /// The moments of `moments` the policy releases at `nowMilliseconds` (since 1970), oldest first.
    ///
    /// "Newest" is by commit (``RetainedMoment/sequence``), then creation time; the windows use the creation
    /// time, a time after `nowMilliseconds` (a clock set back) counting as now.
    public func momentsToRelease(_ moments: [RetainedMoment], nowMilliseconds: UInt64) -> [RetainedMoment] {
        let considered = moments.filter { $0.name.hasPrefix(namePrefix) }.sorted {
            ($0.sequence, $0.createdMilliseconds, $0.name) < ($1.sequence, $1.createdMilliseconds, $1.name)
        }
        var kept = Set(considered.suffix(max(0, keepLast)).map(\.name))
        for (window, bucket) in [(hourlyFor, UInt64(3_600_000)), (dailyFor, UInt64(86_400_000))] {
            let (seconds, attoseconds) = window.components
            guard seconds > 0 || attoseconds > 0 else { continue }
            // Saturating: a window of `.seconds(.max)` keeps every bucket.
            let (milliseconds, overflow) = UInt64(max(0, seconds)).multipliedReportingOverflow(by: 1_000)
            let span = overflow ? .max : milliseconds &+ UInt64(max(0, attoseconds) / 1_000_000_000_000_000)
            var newestOfBucket: [UInt64: RetainedMoment] = [:]
            for moment in considered {
                let start = min(moment.createdMilliseconds, nowMilliseconds) / bucket * bucket
                guard nowMilliseconds - start < span else { continue }
                newestOfBucket[start] = moment
            }
            for moment in newestOfBucket.values { kept.insert(moment.name) }
        }
        return considered.filter { !kept.contains($0.name) }
    }
}

/// What changed between two states of a store (``Store/changes(from:to:)``): objects by id, and roots.
public struct StoreDifference: Sendable, Equatable {
    /// Objects live in the newer state and not in the older.
    public var added: [ObjectID] = []
    /// Objects live in both whose record differs (written again between them, with another version).
    public var changed: [ObjectID] = []
    /// Objects live in the older state and not in the newer.
    public var removed: [ObjectID] = []
    /// Roots set or pointed elsewhere, with their new target.
    public var rootsSet: [String: ObjectID] = [:]
    /// Roots removed.
    public var rootsRemoved: [String] = []

    /// Whether nothing changed.
    public var isEmpty: Bool {
        added.isEmpty && changed.isEmpty && removed.isEmpty && rootsSet.isEmpty && rootsRemoved.isEmpty
    }
}
