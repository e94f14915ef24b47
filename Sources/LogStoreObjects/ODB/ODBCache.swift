import LogStore
@_spi(Engine) import LogStoreSystem
import Synchronization

/// Decoded table and bucket records by id, each with the version it was decoded from.
///
/// A reader takes a node only when its snapshot has that very version of the record (``Snapshot/version(of:)``
/// is one index lookup), so the cache never serves a stale table and needs no invalidation: a rewrite
/// gives the record a new version, and the old node simply stops matching. Writers put the nodes they
/// commit, with the batch's sequence number as version, so the next read finds them decoded.
///
/// When the estimated size passes the budget, about a quarter of the nodes are dropped (in the
/// table's order, which is arbitrary): cheaper than tracking recency on every read, which would
/// put a write on the read path.
final class ODBCache: Sendable {
    /// A decoded node and the version of the record it came from (a class: taking one from the
    /// table costs one retain, not one per array of the node).
    final class Cached: Sendable {
        let version: UInt64
        let node: ODBNode
        let cost: Int
        /// A snapshot sequence at which the record was found to still have `version` (`.max`: none yet).
        /// Every snapshot of one sequence sees the same committed state, so a reader whose snapshot has
        /// this sequence skips the version lookup (an index lookup and a read of the frame header, two
        /// cache misses); any commit moves the sequence on and the next reader checks again. A hint
        /// only: relaxed ordering suffices, the node itself is immutable.
        let checkedAt = Atomic<UInt64>(.max)

        init(version: UInt64, node: ODBNode, cost: Int) {
            self.version = version
            self.node = node
            self.cost = cost
        }
    }

    private struct State: Sendable {
        var nodes = IDTable<Cached>()
        var cost = 0
    }

    /// A pthread mutex rather than `Mutex`: as cheap uncontended, and visible to the thread sanitizer
    /// (on Linux `Mutex` is a futex the sanitizer does not see, so it reports the nodes as raced).
    private let state = ConditionLock(State())
    /// The estimated bytes of decoded nodes to keep.
    let budget: Int

    init(budget: Int) {
        self.budget = budget
    }

    /// The node of `id` decoded from exactly `version`, if cached.
    @inline(__always)
    func node(_ id: ObjectID, version: UInt64) -> ODBNode? {
        state.withLock { state in
            guard let cached = state.nodes[id], cached.version == version else { return nil }
            return cached.node
        }
    }

    /// Looks up the content at `keys` below `root` under one acquisition of the lock, using only cached
    /// nodes whose version `snapshot` has: `.some(content)` (nil content: nothing there), or nil when a
    /// node on the way is not cached at that version (the caller then reads through ``ODBWork``).
    ///
    /// This is the warm read path: one lock instead of one per table, no work object.
    func content(at keys: [String], below root: ObjectID, in snapshot: Snapshot) -> ODBContent?? {
        state.withLock { state -> ODBContent?? in
            let sequence = snapshot.sequence
            func cached(_ id: ObjectID) -> ODBNode? {
                guard let cached = state.nodes[id] else { return nil }
                if cached.checkedAt.load(ordering: .relaxed) != sequence {
                    guard snapshot.version(of: id) == cached.version else { return nil }
                    cached.checkedAt.store(sequence, ordering: .relaxed)
                }
                return cached.node
            }
            var current = root
            for (index, key) in keys.enumerated() {
                guard let node = cached(current) else { return nil }
                let folded = ODBKey.fold(key)
                let content: ODBContent?
                switch node {
                case .inline(let entries):
                    content = entries.entry(folded: folded)?.content
                case .hashed(let directory):
                    guard case .bucket(_, let entries)? = cached(directory.bucket(for: ODBKey.hash(folded: folded)))
                    else { return nil }
                    content = entries.entry(folded: folded)?.content
                case .bucket:
                    return nil
                }
                if index == keys.count - 1 { return .some(content) }
                guard case .table(let child)? = content else { return .some(nil) }
                current = child
            }
            return .some(.table(root))
        }
    }

    /// Remembers `node` as the decoding of `id` at `version` (a newer version already cached wins).
    func insert(_ id: ObjectID, version: UInt64, node: ODBNode, payloadSize: Int) {
        guard budget > 0 else { return }
        let cost = 64 + payloadSize * 4
        state.withLock { state in
            if let old = state.nodes[id] {
                if old.version > version { return }
                state.cost -= old.cost
            }
            state.nodes[id] = Cached(version: version, node: node, cost: cost)
            state.cost += cost
            if state.cost > budget {
                var dropped = 0
                let target = state.nodes.count / 4 + 1
                var victims: [ObjectID] = []
                victims.reserveCapacity(target)
                for (key, cached) in state.nodes where dropped < target && key != id {
                    victims.append(key)
                    state.cost -= cached.cost
                    dropped += 1
                }
                for key in victims { state.nodes.removeValue(forKey: key) }
            }
        }
    }

    /// Forgets every node.
    func removeAll() {
        state.withLock { $0 = State() }
    }

    /// The number of cached nodes.
    var count: Int { state.withLock { $0.nodes.count } }
}
