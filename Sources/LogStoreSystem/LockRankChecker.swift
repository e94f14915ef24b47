#if DEBUG
    #if canImport(Glibc)
        import Glibc
    #elseif canImport(Darwin)
        import Darwin
    #endif

    /// Debug builds only: the ranks of the locks each thread holds, and the check of the lock order.
    ///
    /// A ranked lock calls ``willAcquire(_:)`` before it takes its mutex and ``didRelease(_:)`` after it
    /// let it go. Taking a lock whose ``LockRank/level`` is not above that of every ranked lock the thread
    /// holds stops the process with `assertionFailure`, naming both locks, before the thread blocks: the
    /// order is checked on every acquisition, not only on the ones that happen to deadlock.
    ///
    /// A wait on a ``ConditionLock`` releases its mutex and takes it again, but the waiting thread runs no
    /// code in between: its rank stays on the stack for the whole wait, so the wait's `check` closure sees
    /// it held, and it is gone when the wait returns.
    ///
    /// Each thread's stack lives behind a `pthread` key; the key's destructor frees it when the thread
    /// exits. The whole type is compiled only with `DEBUG`; release builds have no trace of it.
    @usableFromInline
    package enum LockRankChecker {
        /// One thread's held ranks, in the order it took them.
        private final class HeldRanks {
            var ranks: [LockRank] = []
        }

        /// The key of each thread's ``HeldRanks`` (retained on behalf of the key, released by its
        /// destructor at thread exit); nil when no key could be made, and nothing is checked then.
        private static let key: pthread_key_t? = {
            var key = pthread_key_t()
            let status = pthread_key_create(&key) { pointer in
                #if canImport(Glibc)
                    guard let pointer else { return }
                #endif
                Unmanaged<HeldRanks>.fromOpaque(pointer).release()
            }
            return status == 0 ? key : nil
        }()

        /// The calling thread's stack, made on its first use.
        private static func current() -> HeldRanks? {
            guard let key else { return nil }
            if let pointer = pthread_getspecific(key) {
                return Unmanaged<HeldRanks>.fromOpaque(pointer).takeUnretainedValue()
            }
            let held = Unmanaged.passRetained(HeldRanks())
            guard pthread_setspecific(key, held.toOpaque()) == 0 else {
                held.release()
                return nil
            }
            return held.takeUnretainedValue()
        }

        /// Checks that the calling thread may take a lock of `rank` now, and records it as held.
        @usableFromInline
        package static func willAcquire(_ rank: LockRank) {
            guard let held = current() else { return }
            if let highest = held.ranks.max(by: { $0.level < $1.level }), highest.level >= rank.level {
                assertionFailure(violation(taking: rank, holding: highest, all: held.ranks))
            }
            held.ranks.append(rank)
        }

        /// Records that the calling thread let go of its lock of `rank` (the last it took of that rank).
        @usableFromInline
        package static func didRelease(_ rank: LockRank) {
            guard let held = current() else { return }
            guard let position = held.ranks.lastIndex(of: rank) else {
                assertionFailure("lock order: released \(rank), which this thread does not hold")
                return
            }
            held.ranks.remove(at: position)
        }

        /// The ranks of the locks the calling thread holds, in the order it took them.
        package static var heldRanks: [LockRank] { current()?.ranks ?? [] }

        /// The message of a violation: what was taken, what is held, and the order.
        static func violation(taking rank: LockRank, holding highest: LockRank, all: [LockRank]) -> String {
            let order = "compaction → queue → manifest → index → nextID → prefill → leaf locks"
            let relation = highest.level == rank.level ? "of the same rank" : "later in the order"
            return "lock order violated: taking \(rank), rank \(rank.level), while this thread holds \(highest), "
                + "rank \(highest.level), \(relation); held, in the order taken: "
                + all.map { "\($0)" }.joined(separator: ", ") + ". The order is \(order) "
                + "(Documentation/Architecture.md, \"Locks and their order\")."
        }
    }
#endif
