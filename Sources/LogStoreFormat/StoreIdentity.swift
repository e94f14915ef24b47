/// The `STORE` file: says that a directory is a LogStore store. Written first when a store is created,
/// never changed afterwards. Specified in `Documentation/Format.md`.
///
/// ```
/// identity := "LOGSTORE" u16 version (1), u16 reserved, u32 reserved, u8[16] store_id,
///             u64 created_ms, u64 XXH3-64 of bytes 0..<40          ; 48 bytes
/// encrypted := "LOGSTORE" u16 version (2), u16 reserved, u32 reserved, u8[16] store_id,
///             u64 created_ms, u8[16] scheme (ASCII, zero-padded), u8[16] key_id,
///             u64 XXH3-64 of bytes 0..<72                          ; 80 bytes
/// ```
package struct StoreIdentity: Equatable {
    package static let fileName = "STORE"
    package static let magic: [UInt8] = Array("LOGSTORE".utf8)
    package static let version: UInt16 = 1
    package static let size = 48
    /// The version and size of the identity file of an encrypted store.
    package static let encryptedVersion: UInt16 = 2
    package static let encryptedSize = 80

    /// How an encrypted store is encrypted: the cipher's scheme and the id of its key (never the key).
    package struct Encryption: Equatable, Sendable {
        package var scheme: String
        package var keyID: [UInt8]

        package init(scheme: String, keyID: [UInt8]) {
            self.scheme = scheme
            self.keyID = keyID
        }
    }

    /// A random id, different for every store created.
    package var storeID: [UInt8]
    /// Creation time, milliseconds since 1970.
    package var createdAtMilliseconds: UInt64
    /// The store's encryption; nil for an unencrypted store.
    package var encryption: Encryption?

    package init(storeID: [UInt8], createdAtMilliseconds: UInt64, encryption: Encryption? = nil) {
        self.storeID = storeID
        self.createdAtMilliseconds = createdAtMilliseconds
        self.encryption = encryption
    }

    /// A new identity with a random store id, created at `createdAtMilliseconds` (since 1970).
    package static func new(createdAtMilliseconds: UInt64, encryption: Encryption? = nil) -> StoreIdentity {
        var generator = SystemRandomNumberGenerator()
        let id = (0..<16).map { _ in UInt8.random(in: 0...255, using: &generator) }
        return StoreIdentity(storeID: id, createdAtMilliseconds: createdAtMilliseconds, encryption: encryption)
    }

    package func encoded() -> [UInt8] {
        let checked = encryption == nil ? 40 : 72
        var bytes = [UInt8](repeating: 0, count: checked + 8)
        bytes.withUnsafeMutableBytes { raw in
            guard let base = raw.baseAddress else { return }
            for (index, byte) in Self.magic.enumerated() { raw[index] = byte }
            base.writeLE(encryption == nil ? Self.version : Self.encryptedVersion, at: 8)
            for (index, byte) in storeID.prefix(16).enumerated() { raw[16 + index] = byte }
            base.writeLE(createdAtMilliseconds, at: 32)
            if let encryption {
                for (index, byte) in encryption.scheme.utf8.prefix(16).enumerated() { raw[40 + index] = byte }
                for (index, byte) in encryption.keyID.prefix(16).enumerated() { raw[56 + index] = byte }
            }
            base.writeLE(Checksum.xxh3(UnsafeRawPointer(base), count: checked), at: checked)
        }
        return bytes
    }

    /// Why the file is not valid, and at which offset.
    package typealias Problem = SmallFileProblem

    /// Decodes and checks the bytes of an identity file: magic, length, checksum, then version.
    package static func decode(_ raw: UnsafeRawBufferPointer) -> Result<StoreIdentity, Problem> {
        guard let base = raw.baseAddress, raw.count >= 8, raw.prefix(8).elementsEqual(magic) else {
            return .failure(Problem(offset: 0, reason: "not a LogStore identity file (wrong magic)"))
        }
        let version = raw.count >= 10 ? base.readLE(UInt16.self, at: 8) : 0
        let expected = version == Self.encryptedVersion ? Self.encryptedSize : size
        guard raw.count == expected else {
            return .failure(
                Problem(
                    offset: UInt64(min(raw.count, expected)),
                    reason: "identity file is \(raw.count) bytes long, not \(expected)"))
        }
        let checked = expected - 8
        guard base.readLE(UInt64.self, at: checked) == Checksum.xxh3(base, count: checked) else {
            return .failure(Problem(offset: UInt64(checked), reason: "identity file checksum mismatch"))
        }
        guard version == Self.version || version == Self.encryptedVersion else {
            return .failure(
                Problem(offset: 8, reason: "unsupported identity file version \(version)", isUnsupportedVersion: true))
        }
        var encryption: Encryption?
        if version == Self.encryptedVersion {
            let schemeBytes = raw[40..<56].prefix { $0 != 0 }
            guard !schemeBytes.isEmpty, schemeBytes.allSatisfy({ $0 >= 0x20 && $0 < 0x7F }) else {
                return .failure(Problem(offset: 40, reason: "identity file names no encryption scheme"))
            }
            encryption = Encryption(scheme: String(decoding: schemeBytes, as: UTF8.self), keyID: Array(raw[56..<72]))
        }
        return .success(
            StoreIdentity(
                storeID: Array(raw[16..<32]), createdAtMilliseconds: base.readLE(UInt64.self, at: 32),
                encryption: encryption))
    }
}
