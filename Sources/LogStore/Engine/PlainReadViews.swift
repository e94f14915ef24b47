@_spi(Engine) import LogStoreSystem
import Synchronization

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// The views plain reads (``Store/get(_:)`` and the other reads by id without a ``Snapshot``) go through: a
/// ``DurableView`` kept per thread, so that threads reading at once do not take the index lock on every
/// read and trade its cache line, as they would with one lock for all.
///
/// Each thread reads through one of ``stripeCount`` stripes (threads are given stripes in turn on their first
/// read), which holds the view it made last and the ``generation`` it was made at. A read uses the view when
/// the generation is still the current one, and otherwise makes a new view under the index lock (as
/// ``Store/snapshot()`` does). So a plain read sees every batch published before it began, as with the lock:
///
/// - Every hold of the index lock that changes what readers see (a group published, a followed batch, a
///   reload, the close) calls ``publishChange()`` (or ``advance()``, then ``release()`` after the lock)
///   inside the hold: the generation moves on, so no view made before is used again.
/// - A view holds parts of the index, which the writer would then copy when it changes them (as it does
///   while a snapshot lives). Holds that change the index call ``release()`` first: the stripes let their
///   views go, so the writer changes the index in place unless a reader is using a view at that instant.
/// - A thread whose view served fewer than ``shortLivedServes`` reads before it was let go (a store written
///   between every few reads) makes its next ``directReads`` reads under the index lock, without a view:
///   there, views would cost more (one made per few reads, and the writer's copies) than they save.
///
/// Views are made only under the index lock, and a stripe is taken without the index lock or under it as
/// the last lock (a leaf): the order is index lock, then a stripe.
final class PlainReadViews: Sendable {
    /// A view and the generation it was made at.
    final class Cached: Sendable {
        let view: DurableView
        let generation: UInt64

        init(view: DurableView, generation: UInt64) {
            self.view = view
            self.generation = generation
        }
    }

    /// How many stripes a store has: threads beyond it share stripes (and their locks).
    static let stripeCount = 16

    private let stripes: [ConditionLock<Stripe>]
    /// Moves on whenever what readers see changes (under the index lock).
    private let generation = Atomic<UInt64>(0)
    /// One bit per stripe that may hold a view (so that ``release()`` visits only those).
    private let occupied = Atomic<UInt32>(0)

    init() {
        stripes = (0..<Self.stripeCount).map { _ in ConditionLock(Stripe(), rank: .plainReadView) }
    }

    /// The current generation; read under the index lock by whoever makes a view.
    var currentGeneration: UInt64 { generation.load(ordering: .acquiring) }

    /// What a stripe holds: its view, and how the views of its thread fare.
    struct Stripe: Sendable {
        var cached: Cached?
        /// Reads the current view served.
        var served = 0
        /// Reads left to make under the index lock, without a view: views that served only a few reads
        /// before the writer changed the store cost more than they save (making one, and the writer's
        /// copies of the index parts a view in use shares), so a thread whose views last that little
        /// reads without one for a while.
        var directLeft = 0
    }

    /// A view that served fewer reads than this before it was let go makes the thread read without views.
    static let shortLivedServes = 16
    /// How many reads a thread then makes without a view before it tries one again.
    static let directReads = 1_024

    /// The view the calling thread's plain read goes through: its stripe's when current, else the one
    /// `make` returns (called under the index lock: a view and the generation then), which the stripe
    /// keeps; nil when the read is to be made under the index lock instead (the thread's views have not
    /// been lasting, see ``Stripe/directLeft``).
    func view<Failure: Error>(_ make: () throws(Failure) -> Cached) throws(Failure) -> Cached? {
        let stripe = Self.stripeOfCallingThread()
        let current = generation.load(ordering: .acquiring)
        let found = stripes[stripe].withLock { state -> (cached: Cached?, makes: Bool) in
            if let cached = state.cached, cached.generation == current {
                state.served += 1
                return (cached, false)
            }
            if state.directLeft > 0 {
                state.directLeft -= 1
                return (nil, false)
            }
            if state.served < Self.shortLivedServes && state.cached == nil && state.served > 0 {
                // The last view was let go after few reads.
                state.served = 0
                state.directLeft = Self.directReads
                return (nil, false)
            }
            return (nil, true)
        }
        if let cached = found.cached { return cached }
        guard found.makes else { return nil }
        let made = try make()
        // The bit first, then the generation: a hold that moved the generation on after `make` either sees
        // the bit (and lets the view go after it is kept) or is seen here (and the view is not kept), so no
        // view outlives the segments such a hold removed. Both sides use sequentially consistent order.
        occupied.bitwiseOr(1 << UInt32(stripe), ordering: .sequentiallyConsistent)
        // The view this replaces is let go here, outside every lock.
        let replaced = stripes[stripe].withLock { state -> Cached? in
            guard made.generation == generation.load(ordering: .sequentiallyConsistent) else { return nil }
            let old = state.cached
            state.cached = made
            state.served = 1
            return old
        }
        withExtendedLifetime(replaced) {}
        return made
    }

    /// What readers see changes in this hold of the index lock: no view made before is used again, and
    /// the stripes let their views go (call inside the hold, before changing the index).
    func publishChange() {
        advance()
        release()
    }

    /// Moves the generation on (inside a hold of the index lock that changes what readers see), without
    /// letting the views go: for holds that must not free segments under the lock; call ``release()`` after.
    func advance() {
        generation.add(1, ordering: .sequentiallyConsistent)
    }

    /// The stripes let their views go (the segments and index parts they hold). Called inside a hold that
    /// changes the index, so that the writer changes it in place, or after a hold that removed segments.
    func release() {
        var bits = occupied.exchange(0, ordering: .sequentiallyConsistent)
        while bits != 0 {
            let stripe = bits.trailingZeroBitCount
            bits &= bits - 1
            let dropped = stripes[stripe].withLock { state -> Cached? in
                let old = state.cached
                state.cached = nil
                return old
            }
            withExtendedLifetime(dropped) {}
        }
    }

    /// How many stripes hold a view now (for tests).
    var heldCount: Int { stripes.reduce(0) { $0 + ($1.withLock { $0.cached } == nil ? 0 : 1) } }

    // MARK: Stripes per thread

    /// The key of each thread's stripe number plus one (0, no value: none given yet).
    private static let stripeKey: pthread_key_t? = {
        var key = pthread_key_t()
        return pthread_key_create(&key, nil) == 0 ? key : nil
    }()

    /// The next stripe to give a thread.
    private static let nextStripe = Atomic<Int>(0)

    /// The calling thread's stripe: given in turn on its first read, the same for all its reads after.
    private static func stripeOfCallingThread() -> Int {
        guard let key = stripeKey else { return 0 }
        if let value = pthread_getspecific(key) { return Int(bitPattern: value) - 1 }
        let stripe = nextStripe.wrappingAdd(1, ordering: .relaxed).oldValue & (stripeCount - 1)
        _ = pthread_setspecific(key, UnsafeRawPointer(bitPattern: stripe + 1))
        return stripe
    }
}
