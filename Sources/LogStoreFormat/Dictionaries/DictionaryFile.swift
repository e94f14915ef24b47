/// A dictionary file (`0000000001.dict`): one shared LZ4 compression dictionary, written once (temporary
/// name, sync, rename, directory sync) before any frame names it, and never changed. Specified in
/// `Documentation/Format.md`, section 11.7.
///
/// ```
/// dictionary := "LOGSDICT" u16 version (1), u16 header_size (24), u32 id, u32 content_length,
///               u32 reserved (0), u8[content_length] content, u64 XXH3-64 of every byte before it
/// ```
/// `id` is at least 1 and matches the file name; `content_length` is 1…65,536. Integers are little-endian.
package enum DictionaryFile {
    package static let magic: [UInt8] = Array("LOGSDICT".utf8)
    package static let version: UInt16 = 1
    package static let headerSize = 24
    package static let checksumSize = 8
    /// LZ4 reads at most the last 64 KiB of a dictionary.
    package static let maximumContentSize = 65_536
    package static let fileExtension = "dict"

    /// Why a dictionary file is not valid, and at which offset.
    package typealias Problem = SmallFileProblem

    /// File name of dictionary `id` (`0000000001.dict`).
    package static func fileName(_ id: UInt32) -> String {
        String(LogFormat.segmentFileName(id).dropLast(LogFormat.segmentExtension.count)) + fileExtension
    }

    /// The dictionary id in a dictionary file name, or nil when the name is not one.
    package static func id(fromFileName name: String) -> UInt32? {
        let suffix = "." + fileExtension
        guard name.hasSuffix(suffix) else { return nil }
        return LogFormat.segmentNumber(
            fromFileName: String(name.dropLast(suffix.count)) + "." + LogFormat.segmentExtension)
    }

    /// The bytes of the file of dictionary `id` with `content` (1…``maximumContentSize`` bytes).
    package static func encode(id: UInt32, content: [UInt8]) -> [UInt8] {
        var bytes = [UInt8](repeating: 0, count: headerSize + content.count + checksumSize)
        bytes.withUnsafeMutableBytes { raw in
            guard let base = raw.baseAddress else { return }
            for (index, byte) in magic.enumerated() { raw[index] = byte }
            base.writeLE(version, at: 8)
            base.writeLE(UInt16(headerSize), at: 10)
            base.writeLE(id, at: 12)
            base.writeLE(UInt32(content.count), at: 16)
            for (index, byte) in content.enumerated() { raw[headerSize + index] = byte }
            let end = headerSize + content.count
            base.writeLE(Checksum.xxh3(UnsafeRawPointer(base), count: end), at: end)
        }
        return bytes
    }

    /// Decodes and checks the bytes of a dictionary file: magic, length, checksum, version, fields.
    package static func decode(_ raw: UnsafeRawBufferPointer) -> Result<(id: UInt32, content: [UInt8]), Problem> {
        guard let base = raw.baseAddress, raw.count >= magic.count, raw.prefix(magic.count).elementsEqual(magic) else {
            return .failure(Problem(offset: 0, reason: "not a LogStore dictionary file (wrong magic)"))
        }
        guard raw.count >= headerSize + checksumSize else {
            return .failure(
                Problem(
                    offset: UInt64(raw.count),
                    reason: "dictionary file is \(raw.count) bytes long, shorter than its header and checksum"))
        }
        let length = Int(base.readLE(UInt32.self, at: 16))
        guard raw.count == headerSize + length + checksumSize else {
            return .failure(
                Problem(
                    offset: 16,
                    reason: "dictionary file is \(raw.count) bytes long, not \(headerSize + length + checksumSize) "
                        + "as its content length of \(length) says"))
        }
        let end = headerSize + length
        guard base.readLE(UInt64.self, at: end) == Checksum.xxh3(base, count: end) else {
            return .failure(Problem(offset: UInt64(end), reason: "dictionary file checksum mismatch"))
        }
        let fileVersion = base.readLE(UInt16.self, at: 8)
        guard fileVersion == version else {
            return .failure(
                Problem(
                    offset: 8, reason: "unsupported dictionary file version \(fileVersion)", isUnsupportedVersion: true
                ))
        }
        guard base.readLE(UInt16.self, at: 10) == UInt16(headerSize) else {
            return .failure(Problem(offset: 10, reason: "dictionary file header size is not \(headerSize)"))
        }
        let id = base.readLE(UInt32.self, at: 12)
        guard id >= 1 else { return .failure(Problem(offset: 12, reason: "dictionary id 0 is reserved for none")) }
        guard (1...maximumContentSize).contains(length) else {
            return .failure(
                Problem(offset: 16, reason: "dictionary content of \(length) bytes, not 1…\(maximumContentSize)"))
        }
        guard base.readLE(UInt32.self, at: 20) == 0 else {
            return .failure(Problem(offset: 20, reason: "dictionary file reserved field is not zero"))
        }
        return .success((id, [UInt8](UnsafeRawBufferPointer(rebasing: raw[headerSize..<end]))))
    }
}
