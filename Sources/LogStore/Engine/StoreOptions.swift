/// When a store makes its writes durable with `fdatasync`.
///
/// Whatever the policy, sealing a segment, creating or removing a file (with its directory), and
/// ``Store/close()`` and ``Store/sync()`` always sync. A crash can never make the store inconsistent
/// or expose half a batch: the policies differ only in how much acknowledged work a crash may lose.
public enum FsyncPolicy: Sendable, Equatable {
    /// Every commit is durable when `put`, `delete` or `write` returns: a power cut loses nothing that
    /// was acknowledged. Concurrent committers share one `fdatasync` (group commit).
    case always
    /// Commits are written to the file (surviving a crash of the process) at once, and synced by a
    /// background thread at least every `milliseconds`: a power cut or kernel crash may lose the
    /// commits of the last interval.
    case interval(milliseconds: Int)
    /// Commits are written to the file at once and synced only when a segment is sealed, on ``Store/sync()``
    /// and on ``Store/close()``: a process crash loses nothing, a power cut may lose any unsynced commit.
    case never
}

/// How a store is opened.
public struct StoreOptions: Sendable {
    /// Size at which the segment being written is sealed and a new one started. Default 64 MiB;
    /// between ``LogStoreLimits/minSegmentSize`` and ``LogStoreLimits/maxSegmentSize``.
    public var segmentSize: Int = 64 << 20
    /// When writes are made durable. Default ``FsyncPolicy/always``.
    public var fsyncPolicy: FsyncPolicy = .always
    /// Whether payloads are LZ4-compressed (when that makes them smaller). Default on.
    public var compression: Bool = true
    /// Payloads shorter than this are stored raw: LZ4 rarely shrinks small records. Default 512 bytes.
    public var compressionMinimumSize: Int = 512
    /// Create the directory and an empty store when missing. Default on.
    public var createIfMissing: Bool = true
    /// Open without the write lock and without repairing anything; every write throws
    /// ``LogStoreError/Code/readOnly``. Such an open may run beside a writer in another process: it
    /// reads the store as it was at one moment, reading it again when the writer's compaction replaces
    /// segments under it (`Documentation/Format.md`, section 6.8). Default off.
    public var readOnly: Bool = false
    /// How long a committer waiting for a group commit may spin (check, yielding its core to other
    /// threads between checks) before it sleeps until the leader wakes it. Default 500 µs; `.zero`
    /// never spins.
    ///
    /// Spinning saves the wake-ups, which cost tens of microseconds where idle cores halt (virtual
    /// machines), at the price of busy cores while commits wait: with eight durable writers on two
    /// cores it raises their throughput by a third or more. Committers spin whenever they wait for
    /// another thread's write (under any fsync policy), only while the last sync took less than this
    /// limit, and at most four per core (sixteen in all) at a time. A writer alone waits only behind a
    /// compaction seal or a collector's batch.
    public var commitSpinLimit: Duration = .microseconds(500)
    /// Under ``FsyncPolicy/always``, with small commits: write zeros up to 1 MiB ahead of the writes
    /// (on Linux, where the file system reports holes), so that a commit's sync finds its disk blocks
    /// allocated and has no allocation to journal. Default on.
    ///
    /// On ext4 a group commit of eight small records synced in ~115 µs instead of ~150 µs. The zeros
    /// cost disk bandwidth (each byte of such a log is written twice) and may not help on other file
    /// systems; turn this off there.
    public var writesZerosAhead: Bool = true
    /// When and how segments are compacted.
    public var compaction = CompactionOptions()
    /// Fault injection for tests (see ``FaultInjector``).
    @_spi(Testing) public var faultInjector: FaultInjector?

    /// The default options.
    public init() {}

    /// Options with the given values.
    public init(
        segmentSize: Int = 64 << 20,
        fsyncPolicy: FsyncPolicy = .always,
        compression: Bool = true,
        compressionMinimumSize: Int = 512,
        createIfMissing: Bool = true,
        readOnly: Bool = false
    ) {
        self.segmentSize = segmentSize
        self.fsyncPolicy = fsyncPolicy
        self.compression = compression
        self.compressionMinimumSize = compressionMinimumSize
        self.createIfMissing = createIfMissing
        self.readOnly = readOnly
    }

    func validated() throws(LogStoreError) -> StoreOptions {
        guard (LogStoreLimits.minSegmentSize...LogStoreLimits.maxSegmentSize).contains(segmentSize) else {
            throw LogStoreError(.invalidArgument, "segment size \(segmentSize) outside 64 KiB...2 GiB")
        }
        if case .interval(let milliseconds) = fsyncPolicy, milliseconds <= 0 {
            throw LogStoreError(.invalidArgument, "fsync interval must be positive, got \(milliseconds) ms")
        }
        guard commitSpinLimit >= .zero, commitSpinLimit <= .seconds(1) else {
            throw LogStoreError(.invalidArgument, "commit spin limit must be within 0...1 s, got \(commitSpinLimit)")
        }
        guard compressionMinimumSize >= 0 else {
            throw LogStoreError(.invalidArgument, "compression minimum size must not be negative")
        }
        return self
    }

    /// The encoder's compression threshold: 0 when compression is off.
    var effectiveCompressionMinimum: Int { compression ? max(1, compressionMinimumSize) : 0 }
}
