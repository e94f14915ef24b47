@_spi(Engine) import LogStoreFormat
@_spi(Engine) import LogStoreSystem

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Tells a store directory from any other before anything is written there (see "Recognizing a store" in
/// `Documentation/Format.md`).
struct StoreRecognition {
    /// What the directory holds.
    enum Kind: Equatable {
        /// An identity file (`STORE`), valid or not.
        case store
        /// No identity file, but a manifest or a segment that starts with LogStore's magic: a store made
        /// before identity files.
        case legacy
        /// Nothing but what an interrupted creation leaves (an empty `LOCK`, `STORE.writing`).
        case empty
    }

    var kind: Kind
    /// What is wrong with the identity file, when it is damaged (open throws it, `verify` lists it).
    var identityDamage: LogStoreError?

    /// Looks at `directory`, an existing directory, without changing it.
    /// - throws: ``LogStoreError`` with code `notAStore` when it holds other files and no store's (files
    ///   that only carry a store's names included), or `ioError` when it cannot be listed, or when it has
    ///   no `STORE` and a file named like a store's cannot be opened or read (naming that file).
    init(directory: String, io: SystemIO) throws(LogStoreError) {
        let names: [String]
        do {
            names = try io.listDirectory(directory).filter { !Self.isCreationLeftover($0, in: directory) }
        } catch {
            throw LogStoreError(.ioError, "cannot list the directory", file: directory, underlying: error)
        }
        if names.contains(StoreIdentity.fileName) {
            kind = .store
            identityDamage = Self.readIdentity(directory + "/" + StoreIdentity.fileName, io: io)
        } else {
            switch Self.lookForLogStoreContent(directory, names: names, io: io) {
            case .found:
                kind = .legacy
            case .unreadable(let path, let error):
                throw LogStoreError(
                    .ioError,
                    "cannot tell whether the directory holds a store: there is no STORE, and this file named like "
                        + "a store's cannot be read; nothing was written",
                    file: path, underlying: error)
            case .none where names.isEmpty:
                kind = .empty
            case .none:
                throw Self.notAStore(directory, names: names)
            }
        }
    }

    /// Whether `name` is what a creation interrupted before it wrote `STORE` leaves, which does not make
    /// a directory any less empty: `STORE.writing`, or `LOCK` when it is an empty regular file (the lock is
    /// taken before the identity file is written, and its file never holds anything).
    private static func isCreationLeftover(_ name: String, in directory: String) -> Bool {
        if name == temporaryIdentityName { return true }
        guard name == LogFormat.lockFileName else { return false }
        var info = stat()
        return lstat(directory + "/" + name, &info) == 0 && info.st_mode & S_IFMT == S_IFREG && info.st_size == 0
    }

    /// What the files of a directory without an identity file say about LogStore's content.
    private enum Content {
        /// A sign of a store made before identity files.
        case found
        /// No sign, and a file that could carry one could not be opened or read (the first such file).
        case unreadable(path: String, error: SystemError)
        /// No sign, and every file that could carry one was read (or is gone).
        case none
    }

    /// Whether a directory without an identity file holds a store made before identity files: its
    /// manifest starts with the manifest magic, or one of its four lowest-numbered segments starts with
    /// the segment magic. An empty, short or zeroed file only named like a store's is no sign of a store;
    /// when none is found, the first file that could not be opened or read (permissions, a dangling
    /// symbolic link, not a regular file) is named, as it might have been the sign.
    private static func lookForLogStoreContent(_ directory: String, names: [String], io: SystemIO) -> Content {
        let segments = names.compactMap { name in LogFormat.segmentNumber(fromFileName: name).map { ($0, name) } }
            .sorted { $0.0 < $1.0 }.prefix(4).map(\.1)
        var candidates: [(name: String, magic: [UInt8])] = segments.map { ($0, LogFormat.segmentMagic) }
        if names.contains(SegmentManifest.fileName) {
            candidates.append((SegmentManifest.fileName, SegmentManifest.magic))
        }
        var failure: (path: String, error: SystemError)?
        for candidate in candidates {
            let path = directory + "/" + candidate.name
            do {
                let fd = try io.open(path, flags: O_RDONLY | O_CLOEXEC)
                defer { io.close(fd) }
                if try io.read(fd, count: candidate.magic.count, at: 0, path: path) == candidate.magic { return .found }
            } catch  where error.isNoSuchFile {
                continue  // gone since the listing: no sign either way
            } catch {
                if failure == nil { failure = (path, error) }
            }
        }
        return failure.map { .unreadable(path: $0.path, error: $0.error) } ?? .none
    }

    /// The error for a directory of `names` (none of them `STORE`, none with LogStore's content).
    private static func notAStore(_ directory: String, names: [String]) -> LogStoreError {
        let storeNames = names.filter {
            $0 == SegmentManifest.fileName || LogFormat.segmentNumber(fromFileName: $0) != nil
        }.sorted()
        if !storeNames.isEmpty {
            let examples = storeNames.prefix(3).joined(separator: ", ") + (storeNames.count > 3 ? ", …" : "")
            return LogStoreError(
                .notAStore,
                "not a LogStore store: \(examples) carry a store's file names but not LogStore's content (no "
                    + "manifest starting with its magic, no segment starting with its magic), and there is no "
                    + "STORE; nothing was written",
                file: directory)
        }
        let examples = names.sorted().prefix(3).joined(separator: ", ")
        return LogStoreError(
            .notAStore,
            "not a LogStore store: the directory holds \(names.count) other file(s) (\(examples)"
                + (names.count > 3 ? ", …" : "") + ") and no STORE, SEGMENTS or segment file; nothing was written",
            file: directory)
    }

    /// The name under which the identity file is written before it is renamed into place.
    static let temporaryIdentityName = StoreIdentity.fileName + LogFormat.writingSuffix

    /// Throws `notAStore` for an empty directory, which only an open for writing makes a store.
    func requireStore(_ directory: String, for what: String) throws(LogStoreError) {
        guard kind != .empty else {
            throw LogStoreError(
                .notAStore, "not a LogStore store: the directory is empty (\(what) never creates a store)",
                file: directory)
        }
    }

    /// The damage of the identity file at `path`, or nil when it is valid.
    private static func readIdentity(_ path: String, io: SystemIO) -> LogStoreError? {
        let bytes: [UInt8]
        do {
            let fd = try io.open(path, flags: O_RDONLY | O_CLOEXEC)
            defer { io.close(fd) }
            let size = try io.size(fd, path: path)
            bytes = try io.read(fd, count: Int(min(size, UInt64(StoreIdentity.encryptedSize + 1))), at: 0, path: path)
        } catch {
            return LogStoreError(.ioError, "cannot read the store's identity file", file: path, underlying: error)
        }
        switch bytes.withUnsafeBytes({ StoreIdentity.decode($0) }) {
        case .success: return nil
        case .failure(let problem):
            return LogStoreError(
                problem.isUnsupportedVersion ? .unsupportedVersion : .corruptStoreIdentity, problem.reason, file: path,
                offset: problem.offset)
        }
    }

    /// The valid identity file of `directory`, or nil when there is none or it cannot be read.
    static func identity(of directory: String, io: SystemIO) -> StoreIdentity? {
        let path = directory + "/" + StoreIdentity.fileName
        guard let fd = try? io.open(path, flags: O_RDONLY | O_CLOEXEC) else { return nil }
        defer { io.close(fd) }
        guard let bytes = try? io.read(fd, count: StoreIdentity.encryptedSize + 1, at: 0, path: path),
            case .success(let identity) = bytes.withUnsafeBytes({ StoreIdentity.decode($0) })
        else { return nil }
        return identity
    }

    /// Writes a new identity file into `directory` durably (temporary name, sync, rename, directory sync),
    /// recording `cipher`'s scheme and key id when the store is to be encrypted.
    static func createIdentity(in directory: String, cipher: (any StoreCipher)? = nil, io: SystemIO)
        throws(LogStoreError)
    {
        let path = directory + "/" + StoreIdentity.fileName
        let encryption = cipher.map { StoreIdentity.Encryption(scheme: $0.scheme, keyID: $0.keyID) }
        do {
            try io.replaceFile(
                path,
                with: StoreIdentity.new(createdAtMilliseconds: SystemClock.milliseconds(), encryption: encryption)
                    .encoded(),
                directory: directory)
        } catch {
            throw LogStoreError.writeFailed(
                "write the store's identity file", file: path, bytes: StoreIdentity.size, underlying: error)
        }
    }
}
