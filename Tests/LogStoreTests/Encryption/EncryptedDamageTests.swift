import Foundation
import LogStoreEncryption
@_spi(Engine) import LogStoreFormat
import TestSupport
import Testing

@testable @_spi(Testing) import LogStore

/// The committed frames of a segment file's bytes, in order (each batch of one frame here).
private func frames(of bytes: [UInt8]) -> [DecodedFrame] {
    bytes.withUnsafeBytes { raw in
        var found: [DecodedFrame] = []
        _ = SegmentScanner(bytes: raw).scan { found.append($0) }
        return found
    }
}

/// Computes again the CRC and batch checksum of the one-frame batch `frame` in `bytes`, so that it is
/// whole and valid as bytes, whatever its content.
private func refreshChecksums(of frame: DecodedFrame, in bytes: inout [UInt8]) {
    bytes.withUnsafeMutableBytes { raw in
        guard let base = raw.baseAddress, let checksumAt = frame.batchChecksumOffset else { return }
        base.writeLE(
            Checksum.xxh3(UnsafeRawPointer(base + frame.offset), count: checksumAt - frame.offset), at: checksumAt)
        let checked = frame.length - CompactFrame.crcSize
        base.writeLE(Checksum.crc32c(UnsafeRawPointer(base + frame.offset), count: checked), at: frame.offset + checked)
    }
}

/// An encrypted store of `count` single-put batches of `length`-byte payloads, closed; returns the path
/// of its one segment.
private func makeStore(_ directory: TemporaryStore, count: Int = 10, length: Int = 40) throws -> String {
    let store = try directory.open(options: encryptedOptions())
    for index in 0..<count {
        try store.put(typeTag: 1, payload: [UInt8](repeating: UInt8(index), count: length))
    }
    try store.close()
    let segments = directory.segmentFiles()
    try #require(segments.count == 1)
    return segments[0]
}

@Suite("Encrypted stores: damage, tampering and moved bytes")
struct EncryptedDamageTests {
    @Test("ciphertext altered with its checksums fixed is refused as authenticationFailed, by open and verify")
    func alteredCiphertext() throws {
        let directory = TemporaryStore("encrypted-altered", unverifiedBecause: "a batch is altered on purpose")
        let path = try makeStore(directory)
        var bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: path)))
        let found = frames(of: bytes)
        try #require(found.count >= 10)
        let target = found[4]
        bytes[target.payloadOffset + 3] ^= 0x01
        refreshChecksums(of: target, in: &bytes)
        try Data(bytes).write(to: URL(fileURLWithPath: path))
        do {
            _ = try Store.open(at: directory.path, options: encryptedOptions())
            Issue.record("an altered batch opened")
        } catch {
            #expect(error.code == .authenticationFailed)
            #expect(error.offset == UInt64(target.offset))
        }
        let report = try Store.verify(at: directory.path, cipher: testCipher())
        #expect(report.problems.contains { $0.offset == UInt64(target.offset) && $0.message.contains("authenticate") })
    }

    @Test("a damaged byte (checksums not fixed) in the middle of the log is corruption, as in any store")
    func damagedCiphertext() throws {
        let directory = TemporaryStore("encrypted-damaged", unverifiedBecause: "a byte is damaged on purpose")
        let path = try makeStore(directory)
        var bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: path)))
        let target = frames(of: bytes)[3]
        bytes[target.payloadOffset] ^= 0x40
        try Data(bytes).write(to: URL(fileURLWithPath: path))
        do {
            _ = try Store.open(at: directory.path, options: encryptedOptions())
            Issue.record("a damaged segment opened")
        } catch {
            #expect(error.code == .corruptFrame)
            #expect(error.offset == UInt64(target.offset))
        }
    }

    @Test("two whole batches swapped in place are each refused: a batch is tied to its position")
    func swappedBatches() throws {
        let directory = TemporaryStore("encrypted-swapped", unverifiedBecause: "batches are moved on purpose")
        let path = try makeStore(directory)
        var bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: path)))
        let found = frames(of: bytes)
        let (first, second) = (found[2], found[3])
        try #require(first.length == second.length)
        let a = Array(bytes[first.offset..<first.offset + first.length])
        let b = Array(bytes[second.offset..<second.offset + second.length])
        bytes.replaceSubrange(first.offset..<first.offset + first.length, with: b)
        bytes.replaceSubrange(second.offset..<second.offset + second.length, with: a)
        try Data(bytes).write(to: URL(fileURLWithPath: path))
        do {
            _ = try Store.open(at: directory.path, options: encryptedOptions())
            Issue.record("swapped batches opened")
        } catch {
            #expect(error.code == .authenticationFailed)
        }
    }

    @Test("a segment of another encrypted store under the same key is refused: a batch is tied to its store")
    func segmentFromAnotherStore() throws {
        let one = TemporaryStore("encrypted-one")
        one.verifies(with: testCipher())
        let other = TemporaryStore("encrypted-other", unverifiedBecause: "a segment of another store is copied in")
        let onePath = try makeStore(one)
        let otherPath = try makeStore(other)
        try FileManager.default.removeItem(atPath: otherPath)
        try FileManager.default.copyItem(atPath: onePath, toPath: otherPath)
        for name in other.fileNames() where name.hasSuffix(".hint") {
            try FileManager.default.removeItem(atPath: other.path + "/" + name)
        }
        do {
            _ = try Store.open(at: other.path, options: encryptedOptions())
            Issue.record("another store's segment opened")
        } catch {
            #expect(error.code == .authenticationFailed)
        }
    }

    @Test("an unencrypted segment in an encrypted store, and the reverse, are refused")
    func mixedSegments() throws {
        let encrypted = TemporaryStore("encrypted-mixed", unverifiedBecause: "a plain segment is copied in")
        let plain = TemporaryStore("plain-mixed")
        let encryptedPath = try makeStore(encrypted)
        let plainStore = try plain.open(options: testOptions())
        try plainStore.put(typeTag: 1, payload: [1, 2, 3])
        try plainStore.close()
        try FileManager.default.removeItem(atPath: encryptedPath)
        try FileManager.default.copyItem(atPath: plain.segmentFiles()[0], toPath: encryptedPath)
        #expect(throws: LogStoreError.self) { try Store.open(at: encrypted.path, options: encryptedOptions()) }
        let report = try Store.verify(at: encrypted.path, cipher: testCipher())
        #expect(report.problems.contains { $0.message.contains("not encrypted in an encrypted store") })

        let reverse = TemporaryStore("plain-reverse", unverifiedBecause: "an encrypted segment is copied in")
        let reversePath = try {
            let store = try reverse.open(options: testOptions())
            try store.put(typeTag: 1, payload: [4, 5, 6])
            try store.close()
            return reverse.segmentFiles()[0]
        }()
        let source = TemporaryStore("encrypted-source")
        source.verifies(with: testCipher())
        try FileManager.default.removeItem(atPath: reversePath)
        try FileManager.default.copyItem(atPath: try makeStore(source), toPath: reversePath)
        let plainReport = try Store.verify(at: reverse.path)
        #expect(plainReport.problems.contains { $0.message.contains("encrypted segment in a store that is not") })
    }
}
