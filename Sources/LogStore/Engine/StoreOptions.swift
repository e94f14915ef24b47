@_spi(Engine) import LogStoreFormat
@_spi(Engine) @_spi(Testing) import LogStoreSystem

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
    /// background thread at least once per interval (at least 1 ms): a power cut or kernel crash may lose
    /// the commits of the last interval.
    case interval(Duration)
    /// Commits are written to the file at once and synced only when a segment is sealed, on ``Store/sync()``
    /// and on ``Store/close()``: a process crash loses nothing, a power cut may lose any unsynced commit.
    case never
}

/// How a store is opened.
public struct StoreOptions: Sendable {
    /// Size at which the segment being written is sealed and a new one started. Default 64 MiB;
    /// between ``LogStoreLimits/minSegmentSize`` and ``LogStoreLimits/maxSegmentSize``. While the store's
    /// live records take less than 16 segments of this size, new segments are made smaller (a sixteenth of
    /// the live bytes, at least 4 MiB), so that compacting one segment needs little room next to the store.
    public var segmentSize: Int = 64 << 20
    /// When writes are made durable. Default ``FsyncPolicy/always``.
    public var fsyncPolicy: FsyncPolicy = .always
    /// Whether payloads are LZ4-compressed (when that makes them smaller). Default on.
    public var compression: Bool = true
    /// Payloads shorter than this are compressed only against the shared dictionary (LZ4 alone rarely
    /// shrinks small records). Default 512 bytes.
    public var compressionMinimumSize: Int = 512
    /// Whether the store builds a shared compression dictionary from its first 256 KiB of put payloads
    /// (up to 4 KiB each) and compresses every put payload of 16 bytes or more against it, when that makes
    /// it smaller (only with ``compression``). Small JSON-like records then take about 40% of their size
    /// instead of all of it, for about 0.4 µs more per put and 0.2 µs more per read of such a record.
    /// Compaction recompresses with the newest dictionary the payloads compressed against an older one and
    /// the small ones stored raw before there was one (not those compressed alone, from
    /// ``compressionMinimumSize``); a full rewrite (``Store/rewriteAllSegments()``) builds a new dictionary
    /// from the live records. Default on.
    public var sharedDictionary: Bool = true
    /// Create the store when the directory is missing (creating it too) or empty. Default on. When off,
    /// such an open throws ``LogStoreError/Code/storeMissing`` and writes nothing.
    public var createIfMissing: Bool = true
    /// Open without the write lock and without repairing anything; every write throws
    /// ``LogStoreError/Code/readOnly``. Such an open may run beside a writer in another process: it
    /// reads the store as it was at one moment, reading it again when the writer's compaction replaces
    /// segments under it (`Documentation/Format.md`, section 6.8), and keeps that state until
    /// ``Store/refresh()``, or a change feed of the store (``Store/changes(after:)``), moves it on to the
    /// writer's newer batches (section 6.9). Default off.
    public var readOnly: Bool = false
    /// How many object and root changes of the newest committed batches the store keeps in memory for its
    /// observers (``Store/changes(after:)``): an observer that falls further behind, or asks to start
    /// further back, gets ``StoreChange/missed(after:through:)`` instead of the batches it missed. At least
    /// the newest batch is kept whatever its size. About 16 bytes per change. Default 65,536.
    public var keptChanges: Int = 65_536
    /// Settings for the write pipeline's speed that most users never need (see ``StoreTuning``).
    public var tuning = StoreTuning()
    /// When and how segments are compacted.
    public var compaction = CompactionOptions()
    /// The cipher of an encrypted store: given when the store is created, it encrypts every batch,
    /// hint file and dictionary file of the store; an encrypted store opens only with a cipher of its
    /// scheme and key (else ``LogStoreError/Code/keyRequired`` or ``LogStoreError/Code/wrongKey``), and
    /// an unencrypted one only without (``LogStoreError/Code/notEncrypted``). `LogStoreEncryption`'s
    /// `AESGCMCipher` is one. Default nil: not encrypted.
    public var cipher: (any StoreCipher)?
    /// Fault injection for tests (see ``FaultInjector``).
    @_spi(Testing) public var faultInjector: FaultInjector?
    /// The store's encryption, once the open has checked the cipher against the identity file.
    var encryption: StoreEncryption?

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
        if case .interval(let interval) = fsyncPolicy, interval < .milliseconds(1) {
            throw LogStoreError(.invalidArgument, "fsync interval must be at least 1 ms, got \(interval)")
        }
        guard tuning.commitSpinLimit >= .zero, tuning.commitSpinLimit <= .seconds(1) else {
            throw LogStoreError(
                .invalidArgument, "commit spin limit must be within 0...1 s, got \(tuning.commitSpinLimit)")
        }
        guard compaction.minimumInterval >= .zero, compaction.markSweepInterval >= .zero else {
            throw LogStoreError(.invalidArgument, "compaction intervals must not be negative")
        }
        guard keptChanges >= 0 else {
            throw LogStoreError(.invalidArgument, "kept changes must not be negative, got \(keptChanges)")
        }
        guard compressionMinimumSize >= 0 else {
            throw LogStoreError(.invalidArgument, "compression minimum size must not be negative")
        }
        return self
    }

    /// The encoder's compression threshold: 0 when compression is off.
    var effectiveCompressionMinimum: Int { compression ? max(1, compressionMinimumSize) : 0 }
}
