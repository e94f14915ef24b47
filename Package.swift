// swift-tools-version:6.1
import PackageDescription

let package = Package(
    name: "LogStore",
    platforms: [.macOS(.v15), .iOS(.v18)],
    products: [
        .library(name: "LogStore", targets: ["LogStore"]),
        .library(name: "LogStoreObjects", targets: ["LogStoreObjects"]),
        .executable(name: "logstore-tool", targets: ["logstore-tool"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.5.0")
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
        .target(
            name: "LogStore",
            dependencies: ["CLZ4", "CXXHash"]
        ),
        .target(
            name: "LogStoreObjects",
            dependencies: ["LogStore", "CXXHash"]
        ),
        .executableTarget(
            name: "logstore-tool",
            dependencies: [
                "LogStore",
                "LogStoreObjects",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ]
        ),
        .target(
            name: "TestSupport",
            path: "Tests/TestSupport"
        ),
        .testTarget(
            name: "LogStoreObjectsTests",
            dependencies: ["LogStoreObjects", "LogStore", "TestSupport", "logstore-tool"]
        ),
        .testTarget(
            name: "LogStoreTests",
            dependencies: ["LogStore", "TestSupport", "logstore-tool"]
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
            dependencies: ["LogStore", "LogStoreObjects"],
            plugins: ["DocSnippetsPlugin"]
        ),
    ],
    swiftLanguageModes: [.v6]
)
