@_spi(Engine) import LogStoreFormat
@_spi(Engine) import LogStoreSystem

/// What an open makes of a directory before it loads anything: recognition, then (for writing) the lock
/// and, in an empty directory, the creation of the store under that lock.
///
/// Nothing is written into a directory until it is recognized as a store or as empty. The lock is then
/// the first thing written, and the directory is looked at again under it: two processes (or two `Store`s)
/// creating a store in the same empty directory at once are thus one after the other. The first writes
/// `STORE`; the second finds the directory `locked`, or, once the first has closed it, a store, which it
/// opens. So a second creator can never replace, or install a half-written, identity file. When the second
/// look refuses the directory (other files appeared in between), a `LOCK` this open created is removed
/// again; one that was there before is left alone.
extension StoreRecognition {
    /// Recognizes `directory` (an existing directory) for an open with `options`: for writing, takes its
    /// lock and creates the store when the directory is empty.
    /// - returns: what the directory holds (a store or a legacy one; never empty), and the lock of an
    ///   open for writing.
    /// - throws: ``LogStoreError``: `notAStore` for a directory that is not a store (or an empty one opened
    ///   read-only), `storeMissing` for an empty one that the options do not let the open create,
    ///   `corruptStoreIdentity` / `unsupportedVersion` for a damaged `STORE`, `corruptManifest` (or
    ///   `ioError`) for a damaged (or unreadable) `SEGMENTS` found before anything is written, `locked`, or
    ///   `ioError` (also on a full disk while the identity file is written).
    static func claim(_ directory: String, options: StoreOptions, io: SystemIO) throws(LogStoreError) -> (
        kind: Kind, lock: DirectoryLock?
    ) {
        let seen = try StoreRecognition(directory: directory, io: io)
        if let damage = seen.identityDamage { throw damage }
        if options.readOnly {
            try seen.requireStore(directory, for: "a read-only open")
            return (seen.kind, nil)
        }
        if seen.kind == .empty { try requireCreation(directory, options: options) }
        if let damage = StoreLoader(directory: directory, mode: .readOnly, io: io).manifestDamageBeforeLoading() {
            throw damage
        }
        let lock = try DirectoryLock(directory: directory, io: io)
        // Under the lock, what the directory holds cannot change behind this open any more; another open
        // may have created the store (or a user changed the directory) since it was looked at.
        let held: StoreRecognition
        do throws(LogStoreError) {
            held = try StoreRecognition(directory: directory, io: io)
            if let damage = held.identityDamage { throw damage }
        } catch {
            // A directory that is no store any more keeps no LOCK that this open made (one that was there
            // before stays).
            if lock.createdFile { try? io.unlink(directory + "/" + LogFormat.lockFileName) }
            throw error
        }
        guard held.kind == .empty else { return (held.kind, lock) }
        try requireCreation(directory, options: options)
        if let cipher = options.cipher { try requireUsable(cipher, directory) }
        try createIdentity(in: directory, cipher: options.cipher, io: io)
        return (.store, lock)
    }

    /// The encryption of the store in `directory` (of `kind`) for an open with `options`: nil for an
    /// unencrypted store opened without a cipher.
    /// - throws: ``LogStoreError`` with code `keyRequired` (an encrypted store, no cipher), `wrongKey`
    ///   (another scheme or key id than the identity file records), `notEncrypted` (a cipher for a store
    ///   that is not encrypted), or `corruptStoreIdentity` when the identity file cannot be read again.
    static func encryption(of directory: String, kind: Kind, cipher: (any StoreCipher)?, io: SystemIO)
        throws(LogStoreError) -> StoreEncryption?
    {
        let path = directory + "/" + StoreIdentity.fileName
        let identity = kind == .store ? Self.identity(of: directory, io: io) : nil
        if kind == .store, identity == nil {
            throw LogStoreError(.corruptStoreIdentity, "the store's identity file cannot be read", file: path)
        }
        switch (identity?.encryption, cipher) {
        case (nil, nil):
            return nil
        case (nil, .some):
            throw LogStoreError(
                .notEncrypted,
                "the store is not encrypted: open it without a cipher (a cipher never encrypts an existing store)",
                file: path)
        case (.some(let recorded), nil):
            throw LogStoreError(
                .keyRequired, "the store is encrypted (\(recorded.scheme)): open it with its key (StoreOptions.cipher)",
                file: path)
        case (.some(let recorded), .some(let cipher)):
            guard cipher.scheme == recorded.scheme else {
                throw LogStoreError(
                    .wrongKey, "the store is encrypted with \(recorded.scheme), not \(cipher.scheme)", file: path,
                    offset: 40)
            }
            guard cipher.keyID == recorded.keyID else {
                throw LogStoreError(
                    .wrongKey, "the key is not the store's: its id is not the one the identity file records",
                    file: path, offset: 56)
            }
            return StoreEncryption(cipher: cipher, storeID: identity?.storeID ?? [])
        }
    }

    /// Throws `invalidArgument` for a cipher whose scheme or key id cannot be recorded.
    private static func requireUsable(_ cipher: any StoreCipher, _ directory: String) throws(LogStoreError) {
        let scheme = Array(cipher.scheme.utf8)
        guard !scheme.isEmpty, scheme.count <= 16, scheme.allSatisfy({ $0 >= 0x20 && $0 < 0x7F }),
            cipher.keyID.count == 16
        else {
            throw LogStoreError(
                .invalidArgument,
                "a cipher needs a scheme name of 1 … 16 ASCII characters and a key id of 16 bytes; nothing was written",
                file: directory)
        }
    }

    /// Throws `storeMissing` unless the options let an open make a store of the empty `directory`.
    private static func requireCreation(_ directory: String, options: StoreOptions) throws(LogStoreError) {
        guard options.createIfMissing else {
            throw LogStoreError(
                .storeMissing,
                "no store: the directory is empty, and this open does not create one (createIfMissing is off); "
                    + "nothing was written",
                file: directory)
        }
    }
}
