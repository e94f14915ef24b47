import Foundation
import LogStoreEncryption
@_spi(Engine) import LogStoreFormat
import TestSupport
import Testing

@testable @_spi(Testing) import LogStore

@Suite("Encrypted stores: the format")
struct EncryptedFormatTests {
    /// The key, store id and nonce of the worked example (`Documentation/Format.md`, section 13.7).
    static let key: [UInt8] = Array(0..<32)
    static let storeID: [UInt8] = Array(0x10..<0x20)
    static let nonce: [UInt8] = Array(0xA0..<0xAC)

    static func encryption() throws -> StoreEncryption {
        StoreEncryption(cipher: try AESGCMCipher(key: key), storeID: storeID)
    }

    /// The worked example of section 11.6 in the sealed layout: plaintext (as a reader's decrypted copy
    /// holds it before the nonce and tag) and the bytes written.
    static func workedExample() throws -> (plaintext: [UInt8], written: [UInt8]) {
        let plaintext = CompactFormatTests.workedExample(sealed: true)
        let encryption = try encryption()
        let sealed = try #require(
            plaintext.withUnsafeBytes { raw in
                BatchSealing.seal(
                    UnsafeRawBufferPointer(rebasing: raw[48...]), at: 48, segment: 1, baseSequence: 7,
                    encryption: encryption, nonce: { nonce })
            })
        return (plaintext, Array(plaintext[0..<48]) + sealed)
    }

    static func hex(_ bytes: [UInt8]) -> String { bytes.map { String(format: "%02x", $0) }.joined(separator: " ") }

    static func bytes(_ hex: String) -> [UInt8] {
        hex.split(whereSeparator: { $0 == " " || $0 == "\n" }).compactMap { UInt8($0, radix: 16) }
    }

    @Test func theWorkedExampleHasItsDocumentedBytes() throws {
        let (plaintext, written) = try Self.workedExample()
        let documented = Self.bytes(
            """
            4c 4f 47 53 54 53 45 47 02 00 30 00 02 00 00 00 01 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00
            07 00 00 00 00 00 00 00 fb 0d 90 e9 74 b8 df 11 21 00 02 01 01 06 e7 70 19 41 29 a4 59 2f 21 f5
            11 00 ac 02 01 00 02 6a d6 c1 86 8d 50 62 90 65 cb a0 a1 a2 a3 a4 a5 a6 a7 a8 a9 aa ab 32 9d 9f
            91 77 eb 05 84 5a 39 ca 79 15 15 bf cf d4 2c 22 a6
            """)
        #expect(written == documented, "\(Self.hex(written))")
        #expect(written.count == 113, "the plain example's 85 bytes and 28 for the batch")

        // An independent reading: AES-256-GCM of the two bodies with the documented additional data.
        let additional =
            Self.storeID + [0x01] + [1, 0, 0, 0, 0, 0, 0, 0] + [0x30, 0, 0, 0, 0, 0, 0, 0]
            + [0x21, 0x00, 0x02, 0x01, 0x01, 0x06] + [0x11, 0x00, 0xAC, 0x02, 0x01, 0x00, 0x02]
        var message = Array(documented[0x36..<0x3C]) + Array(documented[0x47..<0x49])
        let opened = message.withUnsafeMutableBytes { message in
            additional.withUnsafeBytes { additional in
                (try? AESGCMCipher(key: Self.key))?.open(
                    message, nonce: Array(documented[0x51..<0x5D]), tag: Array(documented[0x5D..<0x6D]),
                    additionalData: additional) ?? false
            }
        }
        #expect(opened)
        #expect(message == [0x01] + Array("hello".utf8) + Array("hi".utf8))

        // The engine's reading: the decrypted copy is the plaintext frames, with checksums of their own.
        let encryption = try Self.encryption()
        var copy = written
        let outcome = copy.withUnsafeMutableBytes {
            SegmentDecryption.decrypt($0, from: 48, segment: 1, encryption: encryption)
        }
        #expect(outcome.verifiedEnd == 113 && outcome.failures.isEmpty)
        #expect(Array(copy[0..<0x51]) == Array(plaintext[0..<0x51]))
        var frames: [DecodedFrame] = []
        let scan = copy.withUnsafeBytes { raw in SegmentScanner(bytes: raw).scan { frames.append($0) } }
        #expect(scan.damages.isEmpty && frames.map(\.id) == [2, 300] && frames.allSatisfy { $0.sequence == 7 })
        #expect(frames.map(\.offset) == [0x30, 0x40] && frames.map(\.length) == [16, 49])
        #expect(
            frames.map { frame in copy.withUnsafeBytes { raw in FrameDecoder.references(of: frame, in: raw) } }
                == [[ObjectID(1)], []])
        // The wrong key: nothing decrypts, nothing is taken for valid.
        var wrong = written
        let refused = wrong.withUnsafeMutableBytes { raw in
            SegmentDecryption.decrypt(
                raw, from: 48, segment: 1,
                encryption: StoreEncryption(cipher: testCipher(9), storeID: Self.storeID))
        }
        #expect(refused.failures == [0x30] && refused.verifiedEnd == 48)
        let rescan = wrong.withUnsafeBytes { raw in SegmentScanner(bytes: raw).scan { _ in } }
        #expect(rescan.frames == 0)
    }
}
