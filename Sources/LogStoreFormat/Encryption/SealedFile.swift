/// The envelope of a side file of an encrypted store (a hint file, a dictionary file): the file's
/// plaintext bytes, as an unencrypted store writes them, encrypted as one AEAD message
/// (`Documentation/Format.md`, section 13).
///
/// ```
/// sealed-file := "LOGSSEAL" u16 version (1) u8 kind u8 reserved u32 reserved   ; 16 bytes
///                u64 number                                                  ; the segment or dictionary
///                u8[12] nonce  u8[n] ciphertext  u8[16] tag
/// ```
/// The additional data is the store id, the kind, the number and the 24 header bytes: a file moved to
/// another name, kind or store does not open.
package enum SealedFile {
    package static let magic: [UInt8] = Array("LOGSSEAL".utf8)
    package static let version: UInt16 = 1
    /// Header, nonce and tag.
    package static let overhead = 24 + CompactFrame.sealSize

    /// What a sealed file holds.
    package enum Kind: UInt8, Sendable {
        case hint = 2
        case dictionary = 3
    }

    /// The bytes of the sealed file holding `plaintext`; nil when the cipher fails.
    package static func seal(_ plaintext: [UInt8], kind: Kind, number: UInt64, encryption: StoreEncryption) -> [UInt8]?
    {
        var header = magic
        withUnsafeBytes(of: version.littleEndian) { header.append(contentsOf: $0) }
        header.append(kind.rawValue)
        header.append(contentsOf: [0, 0, 0, 0, 0])
        withUnsafeBytes(of: number.littleEndian) { header.append(contentsOf: $0) }
        let nonce = StoreEncryption.nonce()
        var message = plaintext
        let additional = encryption.additionalData(kind.rawValue, [number]) + header
        let tag = message.withUnsafeMutableBytes { message in
            additional.withUnsafeBytes { encryption.cipher.seal(message, nonce: nonce, additionalData: $0) }
        }
        guard let tag, tag.count == CompactFrame.tagSize else { return nil }
        return header + nonce + message + tag
    }

    /// The plaintext of a sealed file of `kind` named `number`, or why it cannot be read: damage (a wrong
    /// magic, a short file), or a message that does not authenticate (another key, name or store, or
    /// altered bytes).
    package static func open(
        _ bytes: UnsafeRawBufferPointer, kind: Kind, number: UInt64, encryption: StoreEncryption
    ) -> Result<[UInt8], SmallFileProblem> {
        guard bytes.count >= 8, bytes.prefix(8).elementsEqual(magic) else {
            return .failure(
                SmallFileProblem(offset: 0, reason: "not a sealed file of an encrypted store (wrong magic)"))
        }
        guard bytes.count >= overhead, let base = bytes.baseAddress else {
            return .failure(SmallFileProblem(offset: UInt64(bytes.count), reason: "sealed file truncated"))
        }
        let fileVersion = base.readLE(UInt16.self, at: 8)
        guard fileVersion == version else {
            return .failure(
                SmallFileProblem(
                    offset: 8, reason: "unsupported sealed file version \(fileVersion)", isUnsupportedVersion: true))
        }
        guard base.load(fromByteOffset: 10, as: UInt8.self) == kind.rawValue, base.readLE(UInt64.self, at: 16) == number
        else {
            return .failure(SmallFileProblem(offset: 10, reason: "sealed file of another kind or name"))
        }
        let nonce = Array(bytes[24..<36])
        let tag = Array(bytes[(bytes.count - CompactFrame.tagSize)...])
        var message = Array(bytes[36..<(bytes.count - CompactFrame.tagSize)])
        let additional = encryption.additionalData(kind.rawValue, [number]) + Array(bytes[0..<24])
        let opened = message.withUnsafeMutableBytes { message in
            additional.withUnsafeBytes { encryption.cipher.open(message, nonce: nonce, tag: tag, additionalData: $0) }
        }
        guard opened else {
            return .failure(
                SmallFileProblem(
                    offset: 36, reason: "sealed file does not authenticate (altered, or written under another key)"))
        }
        return .success(message)
    }
}
