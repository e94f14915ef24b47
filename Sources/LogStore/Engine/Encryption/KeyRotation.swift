@_spi(Engine) import LogStoreFormat
@_spi(Engine) import LogStoreSystem

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// What a key rotation (``Store/rotateKey(at:from:to:)``) re-encrypted.
public struct KeyRotationReport: Sendable, Equatable {
    /// Segments re-encrypted.
    public var segments = 0
    /// Hint files re-encrypted.
    public var hints = 0
    /// Dictionary files re-encrypted.
    public var dictionaries = 0
    /// Bytes of the files written.
    public var bytes: UInt64 = 0
}

extension Store {
    /// Re-encrypts the encrypted store in `directory` from the key of `old` to the key of `new`, while
    /// no process has it open for writing.
    ///
    /// The store is first opened with `old` and closed (which recovers it after a crash and writes its
    /// missing hints); then, holding its lock, every batch, hint file and dictionary file is decrypted
    /// with the old key and encrypted again with the new one under fresh nonces, into a complete copy
    /// beside the store (`DIR.rekeying`, every file synced), whose identity file names the new key. The
    /// copy and the store then swap names in one atomic step (`renameat2(RENAME_EXCHANGE)`,
    /// `renamex_np(RENAME_SWAP)`), and the old store is deleted. So a crash at any point leaves `DIR` a
    /// whole store under the old key or a whole store under the new one, with everything acknowledged
    /// before the rotation; the next rotation removes what an interrupted one left beside it. Offsets
    /// and sizes do not change (the sealed layout's ciphertext is as long as its plaintext).
    ///
    /// Retained moments and replica holds would not open with the new key: forget them first. Backups
    /// and replicas made before keep the old key.
    /// - throws: ``LogStoreError``: what an open with `old` throws (`keyRequired`, `wrongKey`, `locked`,
    ///   damage); `notEncrypted` for a store that is not encrypted; `invalidArgument` when the store keeps
    ///   retained moments or replica holds, or `DIR.rekeying` is not what a rotation left;
    ///   `authenticationFailed` or `corruptFrame` when a file does not decrypt whole; `ioError`, also
    ///   where the file system cannot exchange two names.
    @discardableResult
    public static func rotateKey(at directory: String, from old: any StoreCipher, to new: any StoreCipher)
        throws(LogStoreError) -> KeyRotationReport
    {
        let io = SystemIO(faults: nil)
        let directory = try KeyRotation.normalized(directory)
        let staging = directory + ".rekeying"
        var options = StoreOptions()
        options.cipher = old
        options.createIfMissing = false
        options.compaction.background = false
        let store = try Store.open(at: directory, options: options)
        guard let oldEncryption = store.options.encryption else {
            try? store.close()
            throw LogStoreError(.notEncrypted, "the store is not encrypted: there is no key to rotate", file: directory)
        }
        let usage = Result { () throws(LogStoreError) in try store.historyUsage() }
        try store.close()
        if case .success(let usage) = usage, !usage.moments.isEmpty || !usage.replicaHolds.isEmpty {
            throw LogStoreError(
                .invalidArgument,
                "the store keeps \(usage.moments.count) retained moment(s) and \(usage.replicaHolds.count) replica "
                    + "hold(s), which would not open with the new key: forget them first", file: directory)
        }
        let lock = try DirectoryLock(directory: directory, io: io)
        defer { withExtendedLifetime(lock) {} }
        // Under the lock: a second rotation cannot remove the copy of one that runs.
        try KeyRotation.removeLeftover(of: directory, staging: staging, storeID: oldEncryption.storeID, io: io)
        let rotation = KeyRotation(
            directory: directory, staging: staging, io: io, old: oldEncryption,
            new: StoreEncryption(cipher: new, storeID: oldEncryption.storeID))
        return try rotation.run(newCipher: new)
    }
}

/// The steps of a key rotation, under the store's lock.
struct KeyRotation {
    let directory: String
    let staging: String
    let io: SystemIO
    let old: StoreEncryption
    let new: StoreEncryption

    /// The file that marks the copy a rotation makes (removed once the copy is in place).
    static let markerName = "REKEYING"

    /// `directory` without trailing slashes; refused when it is a symbolic link (the exchange would swap the
    /// link, not the store) or names no folder of its own (`.`, `/`).
    static func normalized(_ directory: String) throws(LogStoreError) -> String {
        var path = directory
        while path.count > 1, path.hasSuffix("/") { path.removeLast() }
        let last = path.split(separator: "/").last.map(String.init) ?? path
        guard path != "/", last != ".", last != ".." else {
            throw LogStoreError(
                .invalidArgument, "name the store's folder by its own name to rotate its key", file: path)
        }
        var info = stat()
        if lstat(path, &info) == 0, info.st_mode & S_IFMT == S_IFLNK {
            throw LogStoreError(
                .invalidArgument, "the store's path is a symbolic link: rotate the key at the folder it names",
                file: path)
        }
        return path
    }

    /// Removes what an interrupted rotation left: a copy still being made (`staging` holds the marker), or,
    /// once the swap was made, the old store (the store holds the marker, and `staging` is a store of the
    /// same store id). Anything else at `staging` is refused. Call holding the store's lock.
    static func removeLeftover(of directory: String, staging: String, storeID: [UInt8], io: SystemIO)
        throws(LogStoreError)
    {
        let marker = directory + "/" + markerName
        // (An empty folder is a copy whose marker was not written yet.)
        let partialCopy =
            io.exists(staging + "/" + markerName) || (try? io.listDirectory(staging))?.isEmpty == true
        let oldStore =
            io.exists(marker) && StoreRecognition.identity(of: staging, io: io)?.storeID == storeID
        if io.exists(staging), !partialCopy, !oldStore {
            throw LogStoreError(
                .invalidArgument, "\(staging) exists and is not what a key rotation left; move it away", file: staging)
        }
        do throws(SystemError) {
            if io.exists(staging) {
                try removeTree(staging, io: io)
                try io.syncDirectory(Store.parentDirectory(of: directory))
            }
            if io.exists(marker) {
                try io.unlink(marker)
                try io.syncDirectory(directory)
            }
        } catch {
            throw LogStoreError(.ioError, "cannot remove what a key rotation left", file: staging, underlying: error)
        }
    }

    /// Removes `path` and everything in it (regular files and folders of them).
    static func removeTree(_ path: String, io: SystemIO) throws(SystemError) {
        for name in try io.listDirectory(path) {
            let child = path + "/" + name
            var info = stat()
            if lstat(child, &info) == 0, info.st_mode & S_IFMT == S_IFDIR {
                try removeTree(child, io: io)
            } else {
                try io.unlink(child)
            }
        }
        if rmdir(path) != 0 { throw SystemError(call: "rmdir", errno: errno, path: path) }
    }

    /// Makes the copy under the new key, swaps it in, and removes the old store.
    func run(newCipher: any StoreCipher) throws(LogStoreError) -> KeyRotationReport {
        var report = KeyRotationReport()
        do {
            try io.makeDirectory(staging)
            try io.writeNewFile(staging + "/" + Self.markerName, [])
            try io.syncDirectory(staging)
            try io.syncDirectory(Store.parentDirectory(of: directory))
        } catch {
            throw LogStoreError(.ioError, "cannot create the copy of the store", file: staging, underlying: error)
        }
        let names: [String]
        do {
            names = try io.listDirectory(directory).sorted()
        } catch {
            throw LogStoreError(.ioError, "cannot list the store", file: directory, underlying: error)
        }
        for name in names where name != Self.markerName {
            let path = directory + "/" + name
            let target = staging + "/" + name
            var info = stat()
            guard lstat(path, &info) == 0 else { continue }
            if info.st_mode & S_IFMT == S_IFDIR {
                guard name == HistoryFolder.folderName, (try? io.listDirectory(path))?.isEmpty ?? true else {
                    throw LogStoreError(
                        .invalidArgument, "the store holds a folder a rotation does not know; move it away", file: path)
                }
                continue
            }
            guard info.st_mode & S_IFMT == S_IFREG else { continue }
            let bytes = try rewritten(name, path: path)
            report.bytes += UInt64(bytes.count)
            if LogFormat.segmentNumber(fromFileName: name) != nil { report.segments += 1 }
            if name.hasSuffix(".hint") { report.hints += 1 }
            if DictionaryFile.id(fromFileName: name) != nil { report.dictionaries += 1 }
            do {
                try io.writeNewFile(target, bytes)
            } catch {
                throw LogStoreError(.ioError, "cannot write the copy", file: target, underlying: error)
            }
        }
        do {
            try io.syncDirectory(staging)
            try io.exchange(directory, staging)
            try io.syncDirectory(Store.parentDirectory(of: directory))
        } catch {
            throw LogStoreError(
                .ioError, "cannot put the re-encrypted copy in place of the store (nothing was changed)",
                file: directory, underlying: error)
        }
        // From here the store is under the new key; what follows only tidies up.
        try Self.removeLeftover(of: directory, staging: staging, storeID: old.storeID, io: io)
        return report
    }

    /// The bytes of `name` (at `path`) in the copy: re-encrypted, the new identity, or as they are.
    private func rewritten(_ name: String, path: String) throws(LogStoreError) -> [UInt8] {
        let raw: [UInt8]
        do {
            raw = try io.readWholeFile(path, limit: UInt64(UInt32.max))
        } catch {
            throw LogStoreError(.ioError, "cannot read", file: path, underlying: error)
        }
        if name == StoreIdentity.fileName {
            guard case .success(var identity) = raw.withUnsafeBytes({ StoreIdentity.decode($0) }) else {
                throw LogStoreError(.corruptStoreIdentity, "the identity file cannot be read", file: path)
            }
            identity.encryption = StoreIdentity.Encryption(scheme: new.cipher.scheme, keyID: new.cipher.keyID)
            return identity.encoded()
        }
        if name == LogFormat.lockFileName { return [] }
        if let number = LogFormat.segmentNumber(fromFileName: name) { return try rekeyed(segment: number, raw, path) }
        if name.hasSuffix(".hint"), let number = UInt32(name.dropLast(5)) {
            return try resealed(raw, kind: .hint, number: UInt64(number), path: path)
        }
        if let id = DictionaryFile.id(fromFileName: name) {
            return try resealed(raw, kind: .dictionary, number: UInt64(id), path: path)
        }
        return raw
    }

    /// A side file opened with the old key and sealed with the new one.
    private func resealed(_ raw: [UInt8], kind: SealedFile.Kind, number: UInt64, path: String)
        throws(LogStoreError) -> [UInt8]
    {
        switch raw.withUnsafeBytes({ SealedFile.open($0, kind: kind, number: number, encryption: old) }) {
        case .failure(let problem):
            throw LogStoreError(.authenticationFailed, problem.reason, file: path, offset: problem.offset)
        case .success(let plaintext):
            guard let sealed = SealedFile.seal(plaintext, kind: kind, number: number, encryption: new) else {
                throw LogStoreError(.ioError, "cannot encrypt", file: path)
            }
            return sealed
        }
    }

    /// A segment whose every batch is decrypted with the old key and sealed with the new one.
    private func rekeyed(segment number: UInt32, _ raw: [UInt8], _ path: String) throws(LogStoreError) -> [UInt8] {
        guard raw.count >= LogFormat.segmentHeaderSize,
            case .success(let header) = raw.withUnsafeBytes({ SegmentHeader.decode($0) }), header.isEncrypted
        else {
            throw LogStoreError(.corruptSegmentHeader, "not an encrypted segment", file: path, offset: 0)
        }
        var plaintext = raw
        let outcome = plaintext.withUnsafeMutableBytes {
            SegmentDecryption.decrypt($0, from: LogFormat.segmentHeaderSize, segment: number, encryption: old)
        }
        if let failure = outcome.failures.first {
            throw LogStoreError(
                .authenticationFailed, "a batch does not authenticate under the old key", file: path,
                offset: UInt64(failure))
        }
        guard outcome.verifiedEnd == raw.count else {
            throw LogStoreError(
                .corruptFrame, "the segment is not whole batches from here on: verify the store", file: path,
                offset: UInt64(outcome.verifiedEnd))
        }
        let batches = plaintext.withUnsafeBytes { bytes in
            BatchSealing.seal(
                UnsafeRawBufferPointer(rebasing: bytes[LogFormat.segmentHeaderSize...]),
                at: LogFormat.segmentHeaderSize, segment: number, baseSequence: header.baseSequence, encryption: new)
        }
        guard let batches else { throw LogStoreError(.ioError, "cannot encrypt", file: path) }
        return Array(raw[0..<LogFormat.segmentHeaderSize]) + batches
    }
}
