/// The `STORE` file: says that a directory is a LogStore store. Written first when a store is created,
/// never changed afterwards. Specified in `Documentation/Format.md`.
///
/// ```
/// identity := "LOGSTORE" u16 version (1), u16 reserved, u32 reserved, u8[16] store_id,
///             u64 created_ms, u64 XXH3-64 of bytes 0..<40          ; 48 bytes
/// ```
package struct StoreIdentity: Equatable {
    package static let fileName = "STORE"
    package static let magic: [UInt8] = Array("LOGSTORE".utf8)
    package static let version: UInt16 = 1
    package static let size = 48

    /// A random id, different for every store created.
    package var storeID: [UInt8]
    /// Creation time, milliseconds since 1970.
    package var createdAtMilliseconds: UInt64

    /// A new identity with a random store id, created at `createdAtMilliseconds` (since 1970).
    package static func new(createdAtMilliseconds: UInt64) -> StoreIdentity {
        var generator = SystemRandomNumberGenerator()
        let id = (0..<16).map { _ in UInt8.random(in: 0...255, using: &generator) }
        return StoreIdentity(storeID: id, createdAtMilliseconds: createdAtMilliseconds)
    }

    package func encoded() -> [UInt8] {
        var bytes = [UInt8](repeating: 0, count: Self.size)
        bytes.withUnsafeMutableBytes { raw in
            guard let base = raw.baseAddress else { return }
            for (index, byte) in Self.magic.enumerated() { raw[index] = byte }
            base.writeLE(Self.version, at: 8)
            for (index, byte) in storeID.prefix(16).enumerated() { raw[16 + index] = byte }
            base.writeLE(createdAtMilliseconds, at: 32)
            base.writeLE(Checksum.xxh3(UnsafeRawPointer(base), count: 40), at: 40)
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
        guard raw.count == size else {
            return .failure(
                Problem(
                    offset: UInt64(min(raw.count, size)),
                    reason: "identity file is \(raw.count) bytes long, not \(size)"))
        }
        guard base.readLE(UInt64.self, at: 40) == Checksum.xxh3(base, count: 40) else {
            return .failure(Problem(offset: 40, reason: "identity file checksum mismatch"))
        }
        let version = base.readLE(UInt16.self, at: 8)
        guard version == Self.version else {
            return .failure(
                Problem(offset: 8, reason: "unsupported identity file version \(version)", isUnsupportedVersion: true))
        }
        return .success(
            StoreIdentity(
                storeID: Array(raw[16..<32]), createdAtMilliseconds: base.readLE(UInt64.self, at: 32)))
    }
}
