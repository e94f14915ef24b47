@_spi(Engine) import LogStoreFormat
@_spi(Engine) import LogStoreSystem
import Synchronization

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// What lets committers wait for a group commit by spinning instead of sleeping.
///
/// Waking a sleeping thread is slow where idle cores halt (tens of microseconds where the hypervisor
/// deschedules an idle virtual core):
/// a leader that wakes seven committers one by one, and the committers' start on cores that slept, can
/// take as long as the sync itself, and the disk idles meanwhile. A committer that spins instead (it
/// checks ``releases``, yielding its core to any other thread between checks) sees its batch durable at
/// once and queues its next batch while the leader still gathers. A committer spins only while the
/// last sync took less than the limit (``StoreTuning/commitSpinLimit``), for at most that long, and only
/// while fewer than ``maximumSpinners`` spin; otherwise, or once the limit passed, it sleeps on its
/// semaphore and the leader wakes it, as without spinning.
final class CommitSignals: Sendable {
    /// Bumped, holding the queue lock, whenever the writer slot is released (a flush or a seal ended,
    /// or failed): spinning committers check the queue again then.
    let releases = Atomic<UInt64>(0)
    /// Bumped by the committer that completes the group a leader is gathering.
    let groupsCompleted = Atomic<UInt64>(0)
    /// How long a committer spins at most; 0 when spinning is off.
    let limitNanoseconds: UInt64
    /// At most this many committers spin at a time: four per core, sixteen at most (the count of cores
    /// online ignores affinity and container quotas).
    let maximumSpinners: Int

    init(limit: Duration) {
        let (seconds, attoseconds) = limit.components
        let nanoseconds = max(0, seconds) * 1_000_000_000 + max(0, attoseconds / 1_000_000_000)
        limitNanoseconds = UInt64(clamping: nanoseconds)
        maximumSpinners = min(16, 4 * max(1, Int(sysconf(Int32(_SC_NPROCESSORS_ONLN)))))
    }

    /// Yields the core until `counter` moves past `seen` or the monotonic clock passes `deadline`.
    /// Returns the counter's value then.
    static func yield(until deadline: UInt64, whileUnchanged counter: borrowing Atomic<UInt64>, seen: UInt64)
        -> UInt64
    {
        while true {
            let value = counter.load(ordering: .acquiring)
            guard value == seen, SystemClock.monotonicNanoseconds() < deadline else { return value }
            sched_yield()
        }
    }
}
