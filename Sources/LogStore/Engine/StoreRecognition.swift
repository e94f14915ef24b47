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
    ///   that only carry a store's names included), or `ioError` when it cannot be read.
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
        } else if Self.holdsLogStoreContent(directory, names: names, io: io) {
            kind = .legacy
        } else if names.isEmpty {
            kind = .empty
        } else {
            throw Self.notAStore(directory, names: names)
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

    /// Whether a directory without an identity file holds a store made before identity files: its
    /// manifest starts with the manifest magic, or one of its four lowest-numbered segments starts with
    /// the segment magic. An empty, short, zeroed or unreadable file only named like a store's is no sign
    /// of a store.
    private static func holdsLogStoreContent(_ directory: String, names: [String], io: SystemIO) -> Bool {
        let segments = names.compactMap { name in LogFormat.segmentNumber(fromFileName: name).map { ($0, name) } }
            .sorted { $0.0 < $1.0 }.prefix(4).map(\.1)
        var candidates: [(name: String, magic: [UInt8])] = segments.map { ($0, LogFormat.segmentMagic) }
        if names.contains(SegmentManifest.fileName) {
            candidates.append((SegmentManifest.fileName, SegmentManifest.magic))
        }
        return candidates.contains { candidate in
            let path = directory + "/" + candidate.name
            guard let fd = try? io.open(path, flags: O_RDONLY | O_CLOEXEC) else { return false }
            defer { io.close(fd) }
            let prefix = try? io.read(fd, count: candidate.magic.count, at: 0, path: path)
            return prefix == candidate.magic
        }
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
            bytes = try io.read(fd, count: Int(min(size, UInt64(StoreIdentity.size + 1))), at: 0, path: path)
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

    /// Writes a new identity file into `directory` durably (temporary name, sync, rename, directory sync).
    static func createIdentity(in directory: String, io: SystemIO) throws(LogStoreError) {
        let path = directory + "/" + StoreIdentity.fileName
        do {
            try io.replaceFile(
                path, with: StoreIdentity.new(createdAtMilliseconds: SystemClock.milliseconds()).encoded(),
                directory: directory)
        } catch {
            throw LogStoreError.writeFailed(
                "write the store's identity file", file: path, bytes: StoreIdentity.size, underlying: error)
        }
    }
}
