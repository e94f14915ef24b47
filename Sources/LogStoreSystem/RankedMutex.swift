import Synchronization

/// A `Mutex` with a place in the engine's lock order: in debug builds, taking it while the thread holds a
/// lock of the same or a later ``LockRank`` stops the process (``LockRankChecker``); in release builds
/// it is the `Mutex` alone, and ``withLock(_:)`` is inlined into a call of the `Mutex`'s.
///
/// For the engine's `Mutex`-based locks; ``ConditionLock`` takes a rank too.
package struct RankedMutex<Value: ~Copyable>: ~Copyable, Sendable {
    @usableFromInline let mutex: Mutex<Value>
    #if DEBUG
        /// Debug builds: the lock's place in the lock order.
        @usableFromInline let rank: LockRank
    #endif

    /// A lock of `rank` guarding `value`.
    package init(_ value: consuming sending Value, rank: LockRank) {
        mutex = Mutex(value)
        #if DEBUG
            self.rank = rank
        #endif
    }

    /// Runs `body` with the value, holding the lock (`Mutex.withLock`, after the debug check of the order).
    @inlinable
    package borrowing func withLock<Result: ~Copyable, Failure: Error>(
        _ body: (inout sending Value) throws(Failure) -> sending Result
    ) throws(Failure) -> sending Result {
        #if DEBUG
            LockRankChecker.willAcquire(rank)
            defer { LockRankChecker.didRelease(rank) }
        #endif
        return try mutex.withLock(body)
    }
}
