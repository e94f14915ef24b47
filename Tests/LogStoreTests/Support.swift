import Foundation
import LogStoreExamples
@_spi(Engine) import LogStoreFormat
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

/// Appends a seal frame to a segment file, as the writer does when the segment is full.
func sealSegmentFile(_ path: String) throws {
    let data = try Data(contentsOf: URL(fileURLWithPath: path))
    let buffer = WriteBuffer(capacity: 64)
    FrameEncoder(compressionMinimumSize: 0).append(
        kind: .seal, flags: .commit, sequence: 1, id: UInt64(data.count), typeTag: 0, references: [],
        payload: UnsafeRawBufferPointer(start: nil, count: 0), to: buffer)
    let handle = try FileHandle(forWritingTo: URL(fileURLWithPath: path))
    handle.seekToEndOfFile()
    handle.write(Data(buffer.bytes))
    try handle.close()
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
