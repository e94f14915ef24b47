@_spi(Engine) import LogStoreFormat
@_spi(Engine) @_spi(Testing) import LogStoreSystem

/// Settings for the speed of the write pipeline that most users never need: the defaults suit durable
/// writers on common Linux file systems. Change them only after measuring your workload.
public struct StoreTuning: Sendable, Equatable {
    /// How long a committer waiting for a group commit may spin (check, yielding its core to other
    /// threads between checks) before it sleeps until the leader wakes it. Default 500 µs; `.zero`
    /// never spins.
    ///
    /// Spinning saves the wake-ups of sleeping committers, which are slow where idle cores halt, at the
    /// price of busy cores while commits wait; it pays with several durable writers on few cores.
    /// Committers spin whenever they wait for another thread's write (under any fsync policy), only
    /// while the last sync took less than this limit, and at most four per core (sixteen in all) at a
    /// time. A writer alone waits only behind a compaction seal or a collector's batch.
    public var commitSpinLimit: Duration = .microseconds(500)
    /// Under ``FsyncPolicy/always``, with small commits: write zeros up to 1 MiB ahead of the writes (on
    /// Linux, where the file system reports holes), so that a commit's sync finds its disk blocks
    /// allocated and has no block allocation to journal. Default on.
    ///
    /// It shortens each sync on file systems that journal block allocations (ext4), and costs disk
    /// bandwidth: each byte of such a log is written twice. Turn it off where syncs do not get faster
    /// with it, or where write bandwidth is scarce.
    public var writesZerosAhead: Bool = true
    /// A batch with at least this many puts to compress against the shared dictionary has them
    /// compressed on two threads before it is encoded (the frames are the same bytes either way).
    /// Default 128; `Int.max` compresses every batch on the writing thread.
    public var parallelCompressionMinimumPuts: Int = 128

    /// The default settings.
    public init() {}

    /// Settings with the given values.
    public init(commitSpinLimit: Duration = .microseconds(500), writesZerosAhead: Bool = true) {
        self.commitSpinLimit = commitSpinLimit
        self.writesZerosAhead = writesZerosAhead
    }
}
