import Crypto
import Foundation
import LogStore

/// AES-256-GCM (swift-crypto: BoringSSL on Linux, CryptoKit on Apple platforms) as the cipher of an
/// encrypted store.
///
/// ```swift
/// let key = AESGCMCipher.newKey()          // keep it safe: the store cannot be read without it
/// var options = StoreOptions()
/// options.cipher = try AESGCMCipher(key: key)
/// let store = try Store.open(at: "/var/db/app", options: options)
/// ```
/// The key is 32 bytes. Its id, recorded in the store's identity file so that a wrong key is refused
/// at once, is the first 16 bytes of HMAC-SHA256(key, "LogStore key id"): it names the key without
/// revealing it.
public struct AESGCMCipher: StoreCipher {
    /// `"AES-256-GCM"`.
    public let scheme = "AES-256-GCM"
    /// The first 16 bytes of HMAC-SHA256(key, "LogStore key id").
    public let keyID: [UInt8]
    private let key: SymmetricKey

    /// A cipher with `key`, 32 bytes.
    /// - throws: ``LogStoreError`` with code `invalidArgument` for a key of another length.
    public init(key: [UInt8]) throws(LogStoreError) {
        guard key.count == 32 else {
            throw LogStoreError(.invalidArgument, "an AES-256-GCM key is 32 bytes, not \(key.count)")
        }
        self.key = SymmetricKey(data: key)
        let code = HMAC<SHA256>.authenticationCode(for: Array("LogStore key id".utf8), using: self.key)
        keyID = Array(Array(code).prefix(16))
    }

    /// A cipher with the key in the file at `path`: 32 bytes, or 64 hexadecimal digits (a line end
    /// after them is allowed).
    /// - throws: ``LogStoreError`` with code `ioError` when the file cannot be read, `invalidArgument`
    ///   when it holds no key.
    public init(keyFile path: String) throws(LogStoreError) {
        guard let data = FileManager.default.contents(atPath: path) else {
            throw LogStoreError(.ioError, "cannot read the key file", file: path)
        }
        let bytes = [UInt8](data)
        if bytes.count == 32 {
            try self.init(key: bytes)
            return
        }
        let text = String(decoding: bytes, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
        guard text.count == 64, let key = Self.bytes(hex: text) else {
            throw LogStoreError(
                .invalidArgument, "the key file holds neither 32 bytes nor 64 hexadecimal digits", file: path)
        }
        try self.init(key: key)
    }

    /// A new random key of 32 bytes.
    public static func newKey() -> [UInt8] {
        SymmetricKey(size: .bits256).withUnsafeBytes { Array($0) }
    }

    /// `key` as 64 hexadecimal digits, as a key file may hold it.
    public static func hex(_ key: [UInt8]) -> String {
        key.map { String(format: "%02x", $0) }.joined()
    }

    /// Encrypts `message` in place (AES-256-GCM) and returns the tag; nil when swift-crypto fails.
    public func seal(_ message: UnsafeMutableRawBufferPointer, nonce: [UInt8], additionalData: UnsafeRawBufferPointer)
        -> [UInt8]?
    {
        guard let nonce = try? AES.GCM.Nonce(data: nonce),
            let box = try? AES.GCM.seal(
                UnsafeRawBufferPointer(message), using: key, nonce: nonce, authenticating: additionalData)
        else { return nil }
        _ = box.ciphertext.copyBytes(to: message)
        return Array(box.tag)
    }

    /// Decrypts `message` in place when `tag` authenticates it; false when it does not.
    public func open(
        _ message: UnsafeMutableRawBufferPointer, nonce: [UInt8], tag: [UInt8], additionalData: UnsafeRawBufferPointer
    ) -> Bool {
        guard let nonce = try? AES.GCM.Nonce(data: nonce),
            let box = try? AES.GCM.SealedBox(nonce: nonce, ciphertext: UnsafeRawBufferPointer(message), tag: tag),
            let plaintext = try? AES.GCM.open(box, using: key, authenticating: additionalData)
        else { return false }
        _ = plaintext.copyBytes(to: message)
        return true
    }

    private static func bytes(hex: String) -> [UInt8]? {
        var bytes: [UInt8] = []
        var iterator = hex.utf8.makeIterator()
        while let high = iterator.next() {
            guard let low = iterator.next(), let h = digit(high), let l = digit(low) else { return nil }
            bytes.append(h << 4 | l)
        }
        return bytes
    }

    private static func digit(_ character: UInt8) -> UInt8? {
        switch character {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): return character - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): return character - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): return character - UInt8(ascii: "A") + 10
        default: return nil
        }
    }
}
