// swift-tools-version:6.1
import PackageDescription

// Benchmarks for LogStore, with package-benchmark (https://github.com/ordo-one/package-benchmark).
//
//   cd Benchmarks && swift package --allow-writing-to-package-directory benchmark
//   cd Benchmarks && swift run -c release LogStoreFigures
//
// See README.md in this directory.
let package = Package(
    name: "LogStoreBenchmarks",
    platforms: [.macOS(.v15)],
    dependencies: [
        .package(url: "https://github.com/ordo-one/package-benchmark", from: "1.38.1", traits: ["MallocInterposer"]),
        .package(name: "LogStore", path: ".."),
        .package(url: "https://github.com/groue/GRDB.swift", from: "7.10.0"),
        // The parent package's range: its LogStoreEncryption needs 4.x (a Sendable `SymmetricKey`) in Swift 6 mode.
        .package(url: "https://github.com/apple/swift-crypto", "4.0.0"..<"5.0.0"),
    ],
    targets: [
        // Shared by both executables: the deterministic payload generator and temporary stores.
        .target(
            name: "BenchmarkSupport",
            dependencies: [
                .product(name: "LogStore", package: "LogStore"),
                .product(name: "LogStoreExamples", package: "LogStore"),
            ],
            path: "Sources/BenchmarkSupport"
        ),
        .executableTarget(
            name: "LogStoreBenchmarks",
            dependencies: [
                "BenchmarkSupport",
                .product(name: "Benchmark", package: "package-benchmark"),
                .product(name: "LogStore", package: "LogStore"),
            ],
            path: "LogStoreBenchmarks",
            plugins: [.plugin(name: "BenchmarkPlugin", package: "package-benchmark")]
        ),
        // Figures that are one-shot measurements rather than iterated benchmarks: reopen time,
        // bytes on disk per payload byte, index memory per object.
        .target(name: "CMallocInfo", path: "Sources/CMallocInfo"),
        .executableTarget(
            name: "LogStoreFigures",
            dependencies: [
                "BenchmarkSupport",
                "CMallocInfo",
                .product(name: "LogStore", package: "LogStore"),
            ],
            path: "Sources/LogStoreFigures"
        ),
        // Compaction and garbage-collection figures (overwrite + compact, puts/gets during compaction,
        // mark-sweep, open from hint files).
        .executableTarget(
            name: "LogStoreGCFigures",
            dependencies: [
                "BenchmarkSupport",
                .product(name: "LogStore", package: "LogStore"),
            ],
            path: "Sources/LogStoreGCFigures"
        ),
        // Bytes on disk against live bytes while a store is overwritten, and compaction's write amplification.
        .executableTarget(
            name: "ChurnFigures",
            dependencies: [
                "BenchmarkSupport",
                .product(name: "LogStore", package: "LogStore"),
            ],
            path: "Sources/ChurnFigures"
        ),
        // Durable single-record puts from one and from many writers (group commit).
        .executableTarget(
            name: "WriterFigures",
            dependencies: [
                "BenchmarkSupport",
                .product(name: "LogStore", package: "LogStore"),
            ],
            path: "Sources/WriterFigures"
        ),
        // Batched puts and random gets alone, for before/after comparisons of the engine.
        .executableTarget(
            name: "EngineFigures",
            dependencies: [
                "BenchmarkSupport",
                .product(name: "LogStore", package: "LogStore"),
            ],
            path: "Sources/EngineFigures"
        ),
        // What observers of the change feed cost writers, and commit → observer latency.
        .executableTarget(
            name: "ObserverFigures",
            dependencies: [
                "BenchmarkSupport",
                .product(name: "LogStore", package: "LogStore"),
            ],
            path: "Sources/ObserverFigures"
        ),
        // Commit → follower latency, the follower in another process.
        .executableTarget(
            name: "FollowerFigures",
            dependencies: [
                "BenchmarkSupport",
                .product(name: "LogStore", package: "LogStore"),
            ],
            path: "Sources/FollowerFigures"
        ),
        // Checkpoints on one file system, backups and restores to another against a plain copy.
        .executableTarget(
            name: "BackupFigures",
            dependencies: [
                "BenchmarkSupport",
                .product(name: "LogStore", package: "LogStore"),
                .product(name: "LogStoreExamples", package: "LogStore"),
            ],
            path: "Sources/BackupFigures"
        ),
        // Retained moments: opening one against a normal open, and their space under churn.
        .executableTarget(
            name: "HistoryFigures",
            dependencies: [
                "BenchmarkSupport",
                .product(name: "LogStore", package: "LogStore"),
                .product(name: "LogStoreExamples", package: "LogStore"),
            ],
            path: "Sources/HistoryFigures"
        ),
        // Replicas: pass time, lag and commit latency beside a busy writer; the first pass against a copy.
        .executableTarget(
            name: "ReplicaFigures",
            dependencies: [
                "BenchmarkSupport",
                .product(name: "LogStore", package: "LogStore"),
                .product(name: "LogStoreExamples", package: "LogStore"),
            ],
            path: "Sources/ReplicaFigures"
        ),
        // Authenticated ciphers for encryption at rest: AES-256-GCM against ChaCha20-Poly1305 on this machine.
        .executableTarget(
            name: "CipherFigures",
            dependencies: [.product(name: "Crypto", package: "swift-crypto")],
            path: "Sources/CipherFigures"
        ),
        // Encrypted stores against plain ones: batched puts, bytes on disk, random gets (warm and cold), open
        // of a large store and resident memory.
        .executableTarget(
            name: "EncryptionFigures",
            dependencies: [
                "BenchmarkSupport",
                "CMallocInfo",
                .product(name: "LogStore", package: "LogStore"),
                .product(name: "LogStoreEncryption", package: "LogStore"),
            ],
            path: "Sources/EncryptionFigures"
        ),
        // Gets through a snapshot against plain gets, idle and beside a writer.
        .executableTarget(
            name: "SnapshotFigures",
            dependencies: [
                "BenchmarkSupport",
                .product(name: "LogStore", package: "LogStore"),
            ],
            path: "Sources/SnapshotFigures"
        ),
        // Workloads shared by the figures and the comparison: the scaled drawing (LogStoreObjects and GRDB
        // Codable records) and the path tables on SQLite.
        .target(
            name: "PeerWorkloads",
            dependencies: [
                "BenchmarkSupport",
                .product(name: "LogStore", package: "LogStore"),
                .product(name: "LogStoreObjects", package: "LogStore"),
                .product(name: "LogStoreExamples", package: "LogStore"),
                .product(name: "GRDB", package: "GRDB.swift"),
            ],
            path: "Sources/PeerWorkloads"
        ),
        // LMDB (Debian's liblmdb-dev), for the comparison only.
        .systemLibrary(
            name: "CLMDB",
            path: "Sources/CLMDB",
            pkgConfig: "lmdb",
            providers: [.apt(["liblmdb-dev"]), .brew(["lmdb"])]
        ),
        // RocksDB and LevelDB (Debian's librocksdb-dev and libleveldb-dev), for the comparison only.
        .systemLibrary(
            name: "CRocksDB",
            path: "Sources/CRocksDB",
            providers: [.apt(["librocksdb-dev"]), .brew(["rocksdb"])]
        ),
        .systemLibrary(
            name: "CLevelDB",
            path: "Sources/CLevelDB",
            providers: [.apt(["libleveldb-dev"]), .brew(["leveldb"])]
        ),
        // Side by side: LogStore, SQLite through GRDB, LMDB, RocksDB and LevelDB on the same data and workloads; writes
        // Markdown, JSON and an SVG chart to results/.
        .executableTarget(
            name: "Comparison",
            dependencies: [
                "BenchmarkSupport",
                "PeerWorkloads",
                "CLMDB",
                "CRocksDB",
                "CLevelDB",
                .product(name: "LogStore", package: "LogStore"),
                .product(name: "LogStoreObjects", package: "LogStore"),
                .product(name: "LogStoreExamples", package: "LogStore"),
                .product(name: "LogStorePersistent", package: "LogStore"),
                .product(name: "GRDB", package: "GRDB.swift"),
            ],
            path: "Sources/Comparison"
        ),
        // The object layer: the drawing model scaled up, through LogStoreObjects (and GRDB for comparison).
        .executableTarget(
            name: "ObjectFigures",
            dependencies: [
                "BenchmarkSupport",
                "PeerWorkloads",
                .product(name: "LogStore", package: "LogStore"),
                .product(name: "LogStoreObjects", package: "LogStore"),
                .product(name: "LogStoreExamples", package: "LogStore"),
                .product(name: "GRDB", package: "GRDB.swift"),
            ],
            path: "Sources/ObjectFigures"
        ),
        // `@Persistent` models against hand-written FieldCodable and plain Codable: save, load, change
        // tracking, tracked assignments and memory per object.
        .executableTarget(
            name: "ModelFigures",
            dependencies: [
                "BenchmarkSupport",
                "PeerWorkloads",
                .product(name: "LogStore", package: "LogStore"),
                .product(name: "LogStoreObjects", package: "LogStore"),
                .product(name: "LogStorePersistent", package: "LogStore"),
                .product(name: "LogStoreExamples", package: "LogStore"),
            ],
            path: "Sources/ModelFigures"
        ),
        // Secondary indexes and queries of the object layer (FetchDescriptor, #Predicate): index build and
        // memory, a 1% range query against loading everything, unique lookups, saves with and without indexes.
        // Only the LogStore and LogStoreObjects products (no swift-syntax, no GRDB).
        .executableTarget(
            name: "QueryFigures",
            dependencies: [
                "CMallocInfo",
                .product(name: "LogStore", package: "LogStore"),
                .product(name: "LogStoreObjects", package: "LogStore"),
            ],
            path: "Sources/QueryFigures"
        ),
        // The ODB (path tables, issue 12) against its floors, and the same workload on SQLite through GRDB.
        .executableTarget(
            name: "ODBFigures",
            dependencies: [
                "BenchmarkSupport",
                "PeerWorkloads",
                .product(name: "LogStore", package: "LogStore"),
                .product(name: "LogStoreObjects", package: "LogStore"),
                .product(name: "GRDB", package: "GRDB.swift"),
            ],
            path: "Sources/ODBFigures"
        ),
    ],
    swiftLanguageModes: [.v6]
)
