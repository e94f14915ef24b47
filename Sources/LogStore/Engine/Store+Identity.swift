@_spi(Engine) import LogStoreFormat
@_spi(Engine) import LogStoreSystem

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

extension Store {
    /// The store's identifier: 16 random bytes written in its identity file (`STORE`) when it was created,
    /// different for every store. Files kept beside the store (such as the object layer's index files) name it
    /// to tell their own store from a copy of another. Nil when the file cannot be read or is not valid (a
    /// store made before identity files, opened read-only).
    public func storeIdentifier() -> [UInt8]? {
        let path = directory + "/" + StoreIdentity.fileName
        guard let fd = try? io.open(path, flags: O_RDONLY | O_CLOEXEC) else { return nil }
        defer { io.close(fd) }
        guard let bytes = try? io.read(fd, count: StoreIdentity.encryptedSize + 1, at: 0, path: path) else {
            return nil
        }
        guard case .success(let identity) = bytes.withUnsafeBytes({ StoreIdentity.decode($0) }) else { return nil }
        return identity.storeID
    }
}
