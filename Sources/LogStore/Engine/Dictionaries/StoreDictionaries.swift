@_spi(Engine) import LogStoreFormat
@_spi(Engine) import LogStoreSystem

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// The dictionary files of a store directory: loaded at open, one written when the store builds a
/// dictionary, the unused ones removed after a full rewrite.
enum StoreDictionaries {
    /// A dictionary file that could not be loaded.
    struct Damage: Sendable {
        enum Kind: Sendable {
            /// Listed, then gone before it was read.
            case vanished(SystemError)
            /// It could not be read.
            case unreadable(SystemError)
            /// Its bytes are not a valid dictionary file (true: a valid one of a newer version), or its
            /// content is not the one the segment manifest records for it.
            case invalid(unsupportedVersion: Bool)
            /// A valid file the segment manifest, which records the store's dictionaries, does not record:
            /// no frame names it (a dictionary is recorded before any frame names it), so it is not loaded.
            case unrecorded
        }
        var kind: Kind
        var path: String
        var offset: UInt64
        var message: String
    }

    /// Every dictionary file in `directory` (among `names`, its listing), checked: each must be valid and,
    /// when the segment manifest records the store's dictionaries (`records`, nil when it does not: a
    /// manifest written before the store had one, or by an older version), have the content recorded for
    /// its id.
    static func load(
        _ directory: String, names: [String], records: [SegmentManifest.DictionaryRecord]?, io: SystemIO,
        encryption: StoreEncryption? = nil
    ) -> (dictionaries: CompressionDictionaries, damage: [Damage]) {
        let recorded = records.map { records in Dictionary(records.map { ($0.id, $0) }) { first, _ in first } }
        var dictionaries = CompressionDictionaries()
        var damage: [Damage] = []
        for name in names.sorted() {
            guard let id = DictionaryFile.id(fromFileName: name) else { continue }
            let path = directory + "/" + name
            func invalid(_ offset: UInt64, _ message: String, unsupported: Bool = false) {
                damage.append(
                    Damage(
                        kind: .invalid(unsupportedVersion: unsupported), path: path, offset: offset, message: message))
            }
            let bytes: [UInt8]
            do {
                let fd = try io.open(path, flags: O_RDONLY | O_CLOEXEC)
                defer { io.close(fd) }
                let size = try io.size(fd, path: path)
                let limit =
                    DictionaryFile.headerSize + DictionaryFile.maximumContentSize + DictionaryFile.checksumSize
                    + (encryption == nil ? 0 : SealedFile.overhead)
                guard size <= UInt64(limit) else {
                    invalid(UInt64(limit), "dictionary file is \(size) bytes, more than a dictionary file can be")
                    continue
                }
                bytes = try io.read(fd, count: Int(size), at: 0, path: path)
            } catch {
                damage.append(
                    Damage(
                        kind: error.isNoSuchFile ? .vanished(error) : .unreadable(error), path: path, offset: 0,
                        message: "cannot read the dictionary file: \(error)"))
                continue
            }
            var plaintext = bytes
            if let encryption {
                switch bytes.withUnsafeBytes({
                    SealedFile.open($0, kind: .dictionary, number: UInt64(id), encryption: encryption)
                }) {
                case .success(let opened): plaintext = opened
                case .failure(let problem):
                    invalid(problem.offset, problem.reason, unsupported: problem.isUnsupportedVersion)
                    continue
                }
            }
            switch plaintext.withUnsafeBytes({ DictionaryFile.decode($0) }) {
            case .failure(let problem):
                invalid(problem.offset, problem.reason, unsupported: problem.isUnsupportedVersion)
            case .success(let decoded):
                guard decoded.id == id else {
                    invalid(12, "the file holds dictionary \(decoded.id), not \(id)")
                    continue
                }
                if let recorded {
                    guard let record = recorded[id] else {
                        damage.append(
                            Damage(
                                kind: .unrecorded, path: path, offset: 0,
                                message: "the segment manifest does not record this dictionary (a write of it was "
                                    + "interrupted, or it was copied in); no frame names it, so it is not used"))
                        continue
                    }
                    let checksum = decoded.content.withUnsafeBytes { Checksum.xxh3($0) }
                    guard record.contentChecksum == checksum, Int(record.contentLength) == decoded.content.count
                    else {
                        invalid(
                            UInt64(DictionaryFile.headerSize),
                            "not the dictionary this store wrote as \(id): its content (\(decoded.content.count) bytes, "
                                + "XXH3-64 \(hex(checksum))) is not the one the segment manifest records "
                                + "(\(record.contentLength) bytes, \(hex(record.contentChecksum))): another store's "
                                + "dictionary, or one altered")
                        continue
                    }
                }
                guard let dictionary = CompressionDictionary(id: id, content: decoded.content) else {
                    let error = SystemError(call: "LZ4_createStream", errno: ENOMEM, path: path)
                    damage.append(
                        Damage(
                            kind: .unreadable(error), path: path, offset: 0,
                            message: "LZ4 could not allocate the dictionary"))
                    continue
                }
                dictionaries.add(dictionary)
            }
        }
        return (dictionaries, damage)
    }

    private static func hex(_ value: UInt64) -> String { "0x" + String(value, radix: 16) }

    /// Writes dictionary `id` durably (temporary name, sync, rename, directory sync) and returns it ready
    /// for use: a frame may name it as soon as this returns.
    static func write(
        id: UInt32, content: [UInt8], in directory: String, io: SystemIO, encryption: StoreEncryption? = nil
    ) throws(LogStoreError) -> CompressionDictionary {
        let path = directory + "/" + DictionaryFile.fileName(id)
        guard let dictionary = CompressionDictionary(id: id, content: content) else {
            throw LogStoreError(.ioError, "LZ4 could not allocate a dictionary", file: path)
        }
        guard let bytes = fileBytes(id: id, content: content, encryption: encryption) else {
            throw LogStoreError(.ioError, "cannot encrypt the dictionary file", file: path)
        }
        do {
            try io.replaceFile(path, with: bytes, directory: directory)
        } catch {
            throw LogStoreError(.ioError, "cannot write the dictionary file", file: path, underlying: error)
        }
        return dictionary
    }

    /// The bytes of the file of dictionary `id`: sealed when the store is encrypted; nil when the cipher
    /// fails.
    static func fileBytes(id: UInt32, content: [UInt8], encryption: StoreEncryption?) -> [UInt8]? {
        let plaintext = DictionaryFile.encode(id: id, content: content)
        guard let encryption else { return plaintext }
        return SealedFile.seal(plaintext, kind: .dictionary, number: UInt64(id), encryption: encryption)
    }

    /// The highest id of a dictionary file in `directory` (0 when there is none).
    /// - throws: ``LogStoreError`` with code `ioError` when the directory cannot be listed.
    static func highestFileID(in directory: String, io: SystemIO) throws(LogStoreError) -> UInt32 {
        do {
            return try io.listDirectory(directory).compactMap { DictionaryFile.id(fromFileName: $0) }.max() ?? 0
        } catch {
            throw LogStoreError(.ioError, "cannot list the store directory", file: directory, underlying: error)
        }
    }

    /// Deletes the file of dictionary `id` (the caller has made sure no frame names it).
    static func remove(id: UInt32, in directory: String, io: SystemIO) throws(LogStoreError) {
        let path = directory + "/" + DictionaryFile.fileName(id)
        do {
            try io.unlink(path)
        } catch {
            throw LogStoreError(.ioError, "cannot delete the dictionary file", file: path, underlying: error)
        }
    }
}
