import Synchronization

#if DEBUG
    /// A `Mutex` with a place in the engine's lock order: taking it while the thread holds a lock of the
    /// same or a later ``LockRank`` stops the process (``LockRankChecker``). For the engine's `Mutex`-based
    /// locks; ``ConditionLock`` takes a rank too.
    ///
    /// This wrapper exists in debug builds only: in release builds `RankedMutex` is another name of `Mutex`
    /// (the rank given to ``init(_:rank:)`` is dropped), so the code that takes the lock is the `Mutex`'s
    /// own, with nothing in between.
    ///
    /// Engine SPI, `public` with ``withLock(_:)`` `@inlinable`, as ``ConditionLock``: a `package` function is
    /// not inlined into other modules, and every acquisition would be a call of the unspecialized generic.
    @_spi(Engine) public struct RankedMutex<Value: ~Copyable>: ~Copyable, Sendable {
        @usableFromInline let mutex: Mutex<Value>
        /// The lock's place in the lock order.
        @usableFromInline let rank: LockRank

        /// A lock of `rank` guarding `value`.
        package init(_ value: consuming sending Value, rank: LockRank) {
            mutex = Mutex(value)
            self.rank = rank
        }

        /// Runs `body` with the value, holding the lock: `Mutex.withLock`, after the check of the order.
        @inlinable
        public borrowing func withLock<Result: ~Copyable, Failure: Error>(
            _ body: (inout sending Value) throws(Failure) -> sending Result
        ) throws(Failure) -> sending Result {
            LockRankChecker.willAcquire(rank)
            defer { LockRankChecker.didRelease(rank) }
            return try mutex.withLock(body)
        }

        /// Runs `body` with the value when the lock is free now (nil when another thread holds it):
        /// `Mutex.withLockIfAvailable`; the order is checked once the lock is taken, so that what `body`
        /// takes is checked against it.
        @inlinable
        public borrowing func withLockIfAvailable<Result: ~Copyable, Failure: Error>(
            _ body: (inout sending Value) throws(Failure) -> sending Result
        ) throws(Failure) -> sending Result? {
            let rank = self.rank
            return try mutex.withLockIfAvailable { (value: inout sending Value) throws(Failure) -> sending Result in
                LockRankChecker.willAcquire(rank)
                defer { LockRankChecker.didRelease(rank) }
                return try body(&value)
            }
        }
    }
#else
    /// Release builds: a `Mutex`; the rank exists, and is checked, in debug builds only.
    @_spi(Engine) public typealias RankedMutex<Value: ~Copyable> = Mutex<Value>

    extension Mutex where Value: ~Copyable {
        /// A lock guarding `value` (`rank` is dropped: release builds check nothing).
        package init(_ value: consuming sending Value, rank: LockRank) {
            self.init(value)
        }
    }
#endif
