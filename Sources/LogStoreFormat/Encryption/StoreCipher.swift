/// An authenticated cipher that encrypts a store: every batch of its segments, its hint files and its
/// dictionary files (`Documentation/Format.md`, section 13).
///
/// The engine never implements a cipher. `LogStoreEncryption` provides ``StoreCipher`` as AES-256-GCM
/// over swift-crypto (`AESGCMCipher`); give one to `StoreOptions.cipher` to create or open an encrypted
/// store.
///
/// An implementation must be an AEAD with a 12-byte nonce and a 16-byte tag, and must never be used
/// with a nonce twice for one key; the engine draws a fresh random nonce for every message.
public protocol StoreCipher: Sendable {
    /// The scheme's name, recorded in the store's identity file: 1 … 16 bytes of ASCII, such as
    /// `"AES-256-GCM"`. A store opens only with a cipher of the scheme it was created with.
    var scheme: String { get }
    /// 16 bytes that name the key without revealing it (a keyed hash of a constant), recorded in the
    /// identity file so that a wrong key is refused before anything is decrypted.
    var keyID: [UInt8] { get }
    /// Encrypts `message` in place under `nonce` (12 bytes), authenticating `additionalData` with it, and
    /// returns the 16-byte tag; nil when the cipher fails.
    func seal(_ message: UnsafeMutableRawBufferPointer, nonce: [UInt8], additionalData: UnsafeRawBufferPointer)
        -> [UInt8]?
    /// Decrypts `message` in place when `tag` authenticates it and `additionalData` under `nonce`; returns
    /// false, with `message` in an unspecified state, when it does not.
    func open(
        _ message: UnsafeMutableRawBufferPointer, nonce: [UInt8], tag: [UInt8], additionalData: UnsafeRawBufferPointer
    ) -> Bool
}

/// A store's cipher with what ties its messages to the store: the store id, which every message
/// authenticates, so that bytes of another store under the same key are refused.
package struct StoreEncryption: Sendable {
    package let cipher: any StoreCipher
    /// The store's id (its identity file's).
    package let storeID: [UInt8]

    package init(cipher: any StoreCipher, storeID: [UInt8]) {
        self.cipher = cipher
        self.storeID = storeID
    }

    /// A fresh random nonce.
    package static func nonce() -> [UInt8] {
        var generator = SystemRandomNumberGenerator()
        var nonce = [UInt8](repeating: 0, count: CompactFrame.nonceSize)
        for start in stride(from: 0, to: nonce.count, by: 8) {
            let word = generator.next()
            for index in start..<min(start + 8, nonce.count) {
                nonce[index] = UInt8(truncatingIfNeeded: word >> ((index - start) * 8))
            }
        }
        return nonce
    }

    /// The additional data of a message: the store id, a domain byte (what the message is), and the
    /// little-endian `u64`s that place it.
    package func additionalData(_ domain: UInt8, _ place: [UInt64]) -> [UInt8] {
        var data = storeID
        data.append(domain)
        for value in place { withUnsafeBytes(of: value.littleEndian) { data.append(contentsOf: $0) } }
        return data
    }
}
