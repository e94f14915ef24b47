import Foundation
import LogStoreExamples
@_spi(Engine) import LogStoreFormat
import TestSupport
import Testing

@testable @_spi(Testing) import LogStore

/// Bytes for a payload, deterministic for a given seed and size.
func payloadBytes(_ count: Int, seed: UInt64, compressible: Bool = false) -> [UInt8] {
    var generator = SplitMix64(seed: seed)
    if compressible {
        let words = Array("{\"name\":\"value\",\"count\":12,\"tags\":[\"a\",\"b\"]}".utf8)
        return (0..<count).map { words[($0 + Int(generator.next() % 3)) % words.count] }
    }
    return (0..<count).map { _ in UInt8(truncatingIfNeeded: generator.next()) }
}

/// Options for tests: small segments so tests cross segment boundaries.
func testOptions(
    segmentSize: Int = 1 << 16, fsync: FsyncPolicy = .always, faults: FaultInjector? = nil
) -> StoreOptions {
    var options = StoreOptions(segmentSize: segmentSize, fsyncPolicy: fsync)
    options.faultInjector = faults
    return options
}

/// The committed store written by the format-version-1 engine (`Tests/Fixtures/StoreV1`, see the README
/// there), and the export of its objects and roots that engine printed.
enum VersionOneFixture {
    static let directory = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("Fixtures/StoreV1").path
    static let export = directory + "-export.jsonl"

    /// Copies the fixture's files into `store`'s (empty) directory.
    static func copy(into store: TemporaryStore) throws {
        try FileManager.default.createDirectory(atPath: store.path, withIntermediateDirectories: true)
        for name in try FileManager.default.contentsOfDirectory(atPath: directory) {
            try FileManager.default.copyItem(atPath: directory + "/" + name, toPath: store.path + "/" + name)
        }
    }
}

/// Appends a seal frame to a segment file, as the writer does when the segment is full.
func sealSegmentFile(_ path: String) throws {
    let size = try Data(contentsOf: URL(fileURLWithPath: path)).count
    try appendFrame(to: path, kind: .seal, sequence: 1, id: UInt64(size))
}

/// Appends one frame, a batch of its own (commit flag set), to a segment file, in the layout of the
/// version in the file's header; returns the frame's offset.
@discardableResult
func appendFrame(
    to path: String, kind: FrameKind, flags: FrameFlags = [], sequence: UInt64, id: UInt64, typeTag: UInt32 = 0,
    payload: [UInt8] = []
) throws -> Int {
    let data = [UInt8](try Data(contentsOf: URL(fileURLWithPath: path)))
    let format = data.withUnsafeBytes { FrameFormat(segment: $0) }
    let buffer = WriteBuffer(capacity: 64)
    _ = payload.withUnsafeBytes { raw in
        switch format {
        case .v1:
            FrameEncoder(compressionMinimumSize: 0).append(
                kind: kind, flags: flags.union(.commit), sequence: sequence, id: id, typeTag: typeTag,
                references: [], payload: raw, to: buffer)
        case .v2(let base, _):
            CompactFrameEncoder(compressionMinimumSize: 0).append(
                kind: kind, flags: flags, sequence: sequence, baseSequence: base, id: id, typeTag: typeTag,
                references: .ids([]), payload: .raw(raw), batchStart: 0, to: buffer)
        }
    }
    let handle = try FileHandle(forWritingTo: URL(fileURLWithPath: path))
    handle.seekToEndOfFile()
    handle.write(Data(buffer.bytes))
    try handle.close()
    return data.count
}

/// Removes the clean-close record from the store's manifest: the files as a crash, rather than `close()`,
/// would have left them (a crash leaves the manifest as the open for writing wrote it).
func forgetCleanClose(_ directory: String) throws {
    let path = directory + "/" + SegmentManifest.fileName
    let bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: path)))
    var manifest = try bytes.withUnsafeBytes { try SegmentManifest.decode($0).get() }
    manifest.cleanClose = nil
    try Data(manifest.encoded()).write(to: URL(fileURLWithPath: path))
}

/// The error opening `directory` throws (read-only or for writing), or nil when it opens (and closes).
func openError(_ directory: String, readOnly: Bool = false, segmentSize: Int = 1 << 16) -> LogStoreError? {
    var options = testOptions(segmentSize: segmentSize)
    options.readOnly = readOnly
    do {
        try Store.open(at: directory, options: options).close()
        return nil
    } catch {
        return error
    }
}
