// swift-tools-version:6.1
import CompilerPluginSupport
import PackageDescription

let package = Package(
    name: "LogStore",
    platforms: [.macOS(.v15), .iOS(.v18)],
    products: [
        .library(name: "LogStore", targets: ["LogStore"]),
        .library(name: "LogStoreObjects", targets: ["LogStoreObjects"]),
        // LogStoreObjects plus the `@Persistent` macro; only users of the macro build swift-syntax.
        .library(name: "LogStorePersistent", targets: ["LogStorePersistent"]),
        // AES-256-GCM for encrypted stores (swift-crypto); only users who encrypt build it.
        .library(name: "LogStoreEncryption", targets: ["LogStoreEncryption"]),
        .executable(name: "logstore-tool", targets: ["logstore-tool"]),
        // The drawing model of the guide and the demo, shared by the tool, tests and benchmarks: an
        // example, not API.
        .library(name: "LogStoreExamples", targets: ["LogStoreExamples"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.5.0"),
        .package(url: "https://github.com/swiftlang/swift-syntax", "600.0.0"..<"604.0.0"),
        .package(url: "https://github.com/apple/swift-crypto", "4.0.0"..<"5.0.0"),
    ],
    targets: [
        .systemLibrary(
            name: "CLZ4",
            pkgConfig: "liblz4",
            providers: [.apt(["liblz4-dev"]), .brew(["lz4"])]
        ),
        .systemLibrary(
            name: "CXXHash",
            pkgConfig: "libxxhash",
            providers: [.apt(["libxxhash-dev"]), .brew(["xxhash"])]
        ),
        // CRC-32C of version-2 frames: the CPU's instruction where there is one, a table otherwise.
        .target(name: "CCRC32C"),
        // Processor hints (prefetch) for reads that know their next addresses ahead.
        .target(name: "CMemoryHints"),
        // The atomic exchange of two paths (renameat2 / renamex_np), which Swift's system modules lack.
        .target(name: "CDirectoryExchange"),
        // The layers, bottom to top; each depends only on the ones below it.
        // Disk format: frame, segment header, hint, manifest and identity codecs, the segment scanner and
        // tail rules, limits, ObjectID and LogStoreError. No system calls.
        .target(
            name: "LogStoreFormat",
            dependencies: ["CLZ4", "CXXHash", "CCRC32C"]
        ),
        // System I/O: the syscall seam, system errors, locks, clocks, mapped segment files, the page-cache
        // prefill thread and fault injection.
        .target(
            name: "LogStoreSystem",
            dependencies: ["LogStoreFormat", "CMemoryHints", "CDirectoryExchange"]
        ),
        // The engine: index, store, commit pipeline, recovery, compaction, collection, verification.
        .target(
            name: "LogStore",
            dependencies: ["LogStoreFormat", "LogStoreSystem"]
        ),
        .target(
            name: "LogStoreObjects",
            dependencies: ["LogStore", "CXXHash"]
        ),
        // The cipher of encrypted stores: AES-256-GCM through swift-crypto, behind the engine's `StoreCipher`.
        .target(
            name: "LogStoreEncryption",
            dependencies: ["LogStore", .product(name: "Crypto", package: "swift-crypto")]
        ),
        // The `@Persistent` macro's implementation (a compiler plug-in): generates a class's fields coding.
        .macro(
            name: "LogStoreMacros",
            dependencies: [
                .product(name: "SwiftSyntax", package: "swift-syntax"),
                .product(name: "SwiftSyntaxMacros", package: "swift-syntax"),
                .product(name: "SwiftSyntaxBuilder", package: "swift-syntax"),
                .product(name: "SwiftDiagnostics", package: "swift-syntax"),
                .product(name: "SwiftCompilerPlugin", package: "swift-syntax"),
            ]
        ),
        // The macro declarations, re-exporting LogStoreObjects: `import LogStorePersistent` is all a user of
        // `@Persistent` needs.
        .target(
            name: "LogStorePersistent",
            dependencies: ["LogStoreObjects", "LogStoreMacros"]
        ),
        .target(
            name: "LogStoreExamples",
            dependencies: ["LogStoreObjects", "LogStorePersistent"]
        ),
        .executableTarget(
            name: "logstore-tool",
            dependencies: [
                "LogStore",
                "LogStoreEncryption",
                "LogStoreObjects",
                "LogStoreExamples",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ]
        ),
        // Processes that the crash tests start and kill; test-only, not a product.
        .executableTarget(
            name: "logstore-crash-harness",
            dependencies: [
                "LogStore",
                "LogStoreObjects",
                "LogStoreExamples",
                "TestSupport",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ],
            path: "Tests/CrashHarness"
        ),
        // What every test target and the crash harness share: temporary stores verified at teardown, test
        // seeds, the crash payload, running logstore-tool, forged hint files. The seeded generator is
        // LogStoreExamples' SplitMix64.
        .target(
            name: "TestSupport",
            dependencies: ["LogStore", "LogStoreFormat", "LogStoreExamples"],
            path: "Tests/TestSupport"
        ),
        .testTarget(
            name: "LogStoreObjectsTests",
            dependencies: [
                "LogStoreObjects", "LogStorePersistent", "LogStore", "LogStoreFormat", "LogStoreExamples", "CXXHash",
                "TestSupport", "logstore-tool", "LogStoreEncryption",
            ]
        ),
        .testTarget(
            name: "LogStoreTests",
            dependencies: [
                "LogStore", "LogStoreFormat", "LogStoreSystem", "LogStoreExamples", "TestSupport", "CCRC32C",
                "LogStoreEncryption",
                // The object layer, for the index workload of the reliability sweeps.
                "LogStoreObjects",
                "logstore-tool",
                "logstore-crash-harness",
            ]
        ),
        // Depends on LogStoreObjects alone: `import LogStoreObjects` is all a user of the object layer needs.
        .testTarget(
            name: "LogStoreObjectsImportTests",
            dependencies: ["LogStoreObjects"]
        ),
        // Expansion and diagnostic tests of the `@Persistent` macro (no runtime needed).
        .testTarget(
            name: "LogStoreMacrosTests",
            dependencies: [
                "LogStoreMacros",
                .product(name: "SwiftSyntaxMacrosGenericTestSupport", package: "swift-syntax"),
            ]
        ),
        // Real `@Persistent` classes, compiled and stored: root, hierarchy, observable, references.
        .testTarget(
            name: "LogStorePersistentTests",
            dependencies: ["LogStorePersistent", "LogStoreExamples", "TestSupport"]
        ),
        // The Swift snippets of README.md and Documentation/*.md, compiled (DocSnippetsPlugin).
        .executableTarget(
            name: "doc-snippets",
            path: "Plugins/DocSnippetGenerator"
        ),
        .plugin(
            name: "DocSnippetsPlugin",
            capability: .buildTool(),
            dependencies: ["doc-snippets"]
        ),
        .testTarget(
            name: "DocSnippetTests",
            dependencies: ["LogStore", "LogStoreObjects", "LogStorePersistent", "LogStoreEncryption"],
            plugins: ["DocSnippetsPlugin"]
        ),
    ],
    swiftLanguageModes: [.v6]
)
