@_spi(Engine) import LogStoreFormat

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// A mutex with a condition variable, guarding a value of type `State`.
///
/// `State` must be `Sendable`: what a closure returns from the state, or leaves in it, may then be used
/// on any thread without further proof.
///
/// `@unchecked Sendable` (its `state` is a `var`): `state` is only touched inside `withLock` and
/// `waitUntil`, both of which hold `mutex` for the whole access; a waiter's access to `state` ends before
/// `pthread_cond_wait` releases it. The mutex and conditions are allocated once, never moved, and freed
/// in `deinit`, when no thread can hold a reference.
///
/// Engine SPI, `public` with ``withLock(_:)`` and ``waitUntil(_:)`` `@inlinable`: the engine's and the
/// object layer's calls are then specialized for their state and inlined (`package` declarations are
/// not inlined into other modules, and a call through the unspecialized generic on every read cost
/// several percent of a `get`).
///
/// The engine's locks have a ``LockRank`` (``init(_:rank:)``): debug builds check on every acquisition,
/// waits and ``broadcast()`` included, that the thread holds no ranked lock of the same or a later rank
/// (``LockRankChecker``). Release builds store no rank and check nothing.
@_spi(Engine) public final class ConditionLock<State: Sendable>: @unchecked Sendable {
    @usableFromInline let mutex = UnsafeMutablePointer<pthread_mutex_t>.allocate(capacity: 1)
    @usableFromInline let condition = UnsafeMutablePointer<pthread_cond_t>.allocate(capacity: 1)
    /// A second condition for one waiter with a deadline (``waitUntil(deadline:_:)``), so that it can
    /// be woken alone, without waking the waiters of the first.
    private let timedCondition = UnsafeMutablePointer<pthread_cond_t>.allocate(capacity: 1)
    /// Exempt from the runtime's dynamic exclusivity checks, which the inlined accesses in other modules
    /// would otherwise pay on every lock (a few percent of a `get`): every access happens inside
    /// ``withLock(_:)`` or a `waitUntil`, holding `mutex`, which is not recursive, so a second access
    /// to the same lock's state from within `body` would block on the mutex before it began, and
    /// accesses from other threads are ordered by the mutex. No two accesses can overlap.
    @exclusivity(unchecked) @usableFromInline var state: State
    #if DEBUG
        /// Debug builds: the lock's place in the lock order; nil for a lock outside it (not checked).
        @usableFromInline let rank: LockRank?
    #endif

    /// A lock guarding `state`, outside the engine's lock order (not checked).
    public convenience init(_ state: State) {
        self.init(state, rank: nil)
    }

    /// A lock guarding `state`, of `rank` in the engine's lock order (nil: outside it).
    package init(_ state: State, rank: LockRank?) {
        self.state = state
        #if DEBUG
            self.rank = rank
        #endif
        pthread_mutex_init(mutex, nil)
        pthread_cond_init(condition, nil)
        #if os(Linux)
            var attributes = pthread_condattr_t()
            pthread_condattr_init(&attributes)
            pthread_condattr_setclock(&attributes, CLOCK_MONOTONIC)
            pthread_cond_init(timedCondition, &attributes)
            pthread_condattr_destroy(&attributes)
        #else
            pthread_cond_init(timedCondition, nil)
        #endif
    }

    deinit {
        pthread_cond_destroy(condition)
        pthread_cond_destroy(timedCondition)
        pthread_mutex_destroy(mutex)
        mutex.deallocate()
        condition.deallocate()
        timedCondition.deallocate()
    }

    /// Runs `body` with the state, holding the lock.
    @inlinable
    public func withLock<Result, Failure: Error>(_ body: (inout State) throws(Failure) -> Result) throws(Failure)
        -> Result
    {
        #if DEBUG
            if let rank { LockRankChecker.willAcquire(rank) }
            defer { if let rank { LockRankChecker.didRelease(rank) } }
        #endif
        pthread_mutex_lock(mutex)
        defer { pthread_mutex_unlock(mutex) }
        return try body(&state)
    }

    /// Holding the lock, calls `check` until it returns a value, waiting for a ``broadcast()`` in between.
    ///
    /// The wait releases the mutex and takes it again; for the lock order the lock counts as held from
    /// the call to the return (the waiting thread takes nothing meanwhile).
    @inlinable
    public func waitUntil<Result>(_ check: (inout State) -> Result?) -> Result {
        #if DEBUG
            if let rank { LockRankChecker.willAcquire(rank) }
            defer { if let rank { LockRankChecker.didRelease(rank) } }
        #endif
        pthread_mutex_lock(mutex)
        defer { pthread_mutex_unlock(mutex) }
        while true {
            if let result = check(&state) { return result }
            pthread_cond_wait(condition, mutex)
        }
    }

    /// Holding the lock, calls `check` until it returns a value or the monotonic clock passes
    /// `deadline` (nanoseconds, as `SystemClock.monotonicNanoseconds()`), waiting for ``signalTimed()`` in
    /// between. Returns nil when the deadline passed first.
    package func waitUntil<Result>(deadline: UInt64, _ check: (inout State) -> Result?) -> Result? {
        #if DEBUG
            if let rank { LockRankChecker.willAcquire(rank) }
            defer { if let rank { LockRankChecker.didRelease(rank) } }
        #endif
        pthread_mutex_lock(mutex)
        defer { pthread_mutex_unlock(mutex) }
        while true {
            if let result = check(&state) { return result }
            let now = SystemClock.monotonicNanoseconds()
            guard now < deadline else { return nil }
            #if os(Linux)
                var until = timespec(
                    tv_sec: Int(deadline / 1_000_000_000), tv_nsec: Int(deadline % 1_000_000_000))
                pthread_cond_timedwait(timedCondition, mutex, &until)
            #else
                let remaining = deadline - now
                var relative = timespec(
                    tv_sec: Int(remaining / 1_000_000_000), tv_nsec: Int(remaining % 1_000_000_000))
                pthread_cond_timedwait_relative_np(timedCondition, mutex, &relative)
            #endif
        }
    }

    /// Wakes the thread in ``waitUntil(deadline:_:)``, if any.
    package func signalTimed() {
        pthread_cond_signal(timedCondition)
    }

    /// Wakes every thread in ``waitUntil(_:)``.
    package func broadcast() {
        #if DEBUG
            if let rank { LockRankChecker.willAcquire(rank) }
            defer { if let rank { LockRankChecker.didRelease(rank) } }
        #endif
        pthread_mutex_lock(mutex)
        pthread_cond_broadcast(condition)
        pthread_mutex_unlock(mutex)
    }
}
