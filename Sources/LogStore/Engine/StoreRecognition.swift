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
        /// No identity file, but a segment manifest or segment files: a store made before identity files.
        case legacy
        /// Nothing (but maybe an identity file left half-made by an interrupted creation).
        case empty
    }

    var kind: Kind
    /// What is wrong with the identity file, when it is damaged (open throws it, `verify` lists it).
    var identityDamage: LogStoreError?

    /// Looks at `directory`, an existing directory, without changing it.
    /// - throws: ``LogStoreError`` with code `notAStore` when it holds other files and none of a store's, or
    ///   `ioError` when it cannot be read.
    init(directory: String, io: SystemIO) throws(LogStoreError) {
        let names: [String]
        do {
            names = try io.listDirectory(directory).filter { $0 != Self.temporaryIdentityName }
        } catch {
            throw LogStoreError(.ioError, "cannot list the directory", file: directory, underlying: error)
        }
        if names.contains(StoreIdentity.fileName) {
            kind = .store
            identityDamage = Self.readIdentity(directory + "/" + StoreIdentity.fileName, io: io)
        } else if names.contains(where: {
            $0 == SegmentManifest.fileName || LogFormat.segmentNumber(fromFileName: $0) != nil
        }) {
            try Self.requireLogStoreContent(directory, names: names, io: io)
            kind = .legacy
        } else if names.isEmpty {
            kind = .empty
        } else {
            let examples = names.sorted().prefix(3).joined(separator: ", ")
            throw LogStoreError(
                .notAStore,
                "not a LogStore store: the directory holds \(names.count) other file(s) (\(examples)"
                    + (names.count > 3 ? ", …" : "") + ") and no STORE, SEGMENTS or segment file; nothing was written",
                file: directory)
        }
    }

    /// A directory without an identity file is taken for a store made before identity files only when its
    /// manifest or one of its first segments starts with LogStore's magic, or is empty, shorter than a
    /// magic or starts with zeros (a creation a crash interrupted); files that merely carry a store's
    /// names (`SEGMENTS`, `0000000001.seg`) with other content make it `notAStore`, and nothing is written.
    private static func requireLogStoreContent(_ directory: String, names: [String], io: SystemIO)
        throws(LogStoreError)
    {
        let segments = names.compactMap { name in LogFormat.segmentNumber(fromFileName: name).map { ($0, name) } }
            .sorted { $0.0 < $1.0 }.prefix(4).map(\.1)
        var candidates: [(name: String, magic: [UInt8])] = segments.map { ($0, LogFormat.segmentMagic) }
        if names.contains(SegmentManifest.fileName) {
            candidates.append((SegmentManifest.fileName, SegmentManifest.magic))
        }
        for candidate in candidates {
            let path = directory + "/" + candidate.name
            let prefix: [UInt8]
            do {
                let fd = try io.open(path, flags: O_RDONLY | O_CLOEXEC)
                defer { io.close(fd) }
                let size = try io.size(fd, path: path)
                prefix = try io.read(fd, count: Int(min(size, 8)), at: 0, path: path)
            } catch {
                return  // Unreadable or not a regular file: the load reports it, naming the file.
            }
            if prefix.count < 8 || prefix.allSatisfy({ $0 == 0 }) || prefix.elementsEqual(candidate.magic) { return }
        }
        let examples = candidates.map(\.name).prefix(3).joined(separator: ", ")
        throw LogStoreError(
            .notAStore,
            "not a LogStore store: \(examples) carry a store's file names but not LogStore's content, and there is "
                + "no STORE; nothing was written",
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
