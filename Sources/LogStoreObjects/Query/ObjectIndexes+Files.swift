@_spi(Testing) import LogStore
@_spi(Engine) @_spi(Testing) import LogStoreSystem

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Index files: the indexes of each built class written when the object store closes, and read by the first
/// build after the next open instead of every record (see ``IndexFile`` for what makes a file trusted).
extension ObjectIndexes {
    private var io: SystemIO { SystemIO(faults: store.options.faultInjector) }

    private func path(of type: IndexedType) -> String {
        store.directory + "/" + IndexFile.fileName(tag: type.registered.tag)
    }

    private func ties(of type: IndexedType, storeID: [UInt8]) -> IndexFile.Ties {
        IndexFile.Ties(
            storeID: storeID, fingerprint: IndexFile.fingerprint(of: type), indexCount: type.definitions.count)
    }

    private func note(_ text: String) {
        state.withLock { $0.fileNotes.append(text) }
    }

    /// Why index files could not be read or written since the open (each such index was built from the
    /// records instead, or will be at the next open).
    var fileNotes: [String] { state.withLock { $0.fileNotes } }

    /// How many builds read an index file instead of every record.
    var filesRead: Int { state.withLock { $0.filesRead } }

    /// The indexes of `type` from its file, when there is one that holds this store's indexes of this
    /// declaration at a sequence number not past `snapshot`'s; nil otherwise (a file that cannot be used is
    /// noted, not trusted).
    func readFile(_ type: IndexedType, at snapshot: Snapshot) -> TypeIndexData? {
        let path = path(of: type)
        let io = io
        // An encrypted store keeps no index files: they would hold its indexed values in the clear.
        guard store.options.cipher == nil, io.exists(path), let storeID = store.storeIdentifier() else { return nil }
        let bytes: [UInt8]
        do {
            let fd = try io.open(path, flags: O_RDONLY | O_CLOEXEC)
            defer { io.close(fd) }
            bytes = try io.read(fd, count: Int(try io.size(fd, path: path)), at: 0, path: path)
        } catch {
            note("\(path): cannot read the index file (\(error)); the index is built from the records")
            return nil
        }
        switch IndexFile.decode(bytes, ties: ties(of: type, storeID: storeID), unique: type.definitions.map(\.isUnique))
        {
        case .success(let contents):
            guard contents.sequence <= snapshot.sequence else {
                note(
                    "\(path): the index file is exact at sequence \(contents.sequence), past the store's "
                        + "\(snapshot.sequence); the index is built from the records")
                return nil
            }
            return contents.data
        case .failure(let problem):
            note("\(path): the index file is not used: \(problem); the index is built from the records")
            return nil
        }
    }

    /// Writes the index file of each class whose indexes are built and changed since they were read or
    /// last written, after making every batch they hold durable. Called by ``ObjectStore/close()`` while the
    /// store is still open (and locked); a store opened read-only writes none. A file that cannot be written
    /// is noted: the next open builds that index from the records.
    func writeFiles() {
        guard !store.options.readOnly, store.options.cipher == nil, let storeID = store.storeIdentifier() else {
            return
        }
        defer { removeUnusedFiles() }
        // Every batch published by now is in the segment files; the sync makes them durable, so a file exact
        // at or before `published` names no version a crash could take back.
        let published: UInt64
        do {
            published = try store.snapshot().sequence
            try store.sync()
        } catch {
            note("cannot make the store durable before writing index files (\(error)); none is written")
            return
        }
        maintenance.withLock { _ in
            for type in types {
                let number = type.number
                let taken = whenApplierDone(number) { state -> (data: TypeIndexData, sequence: UInt64)? in
                    guard state.types[number].data != nil, state.types[number].recordFrom != nil else {
                        return nil
                    }
                    if published <= state.lastAccepted {
                        apply(through: published, to: &state.types[number], type, nil)
                    }
                    state.types[number].data?.flushEntries()
                    let typeState = state.types[number]
                    guard typeState.changedSinceFile, typeState.sequence <= published, let data = typeState.data
                    else { return nil }
                    return (data, typeState.sequence)
                }
                guard let taken else { continue }
                let bytes = IndexFile.encode(
                    taken.data, sequence: taken.sequence, ties: ties(of: type, storeID: storeID))
                do {
                    try io.replaceFile(path(of: type), with: bytes, directory: store.directory)
                    state.withLock { state in
                        if state.types[number].sequence == taken.sequence {
                            state.types[number].changedSinceFile = false
                        }
                    }
                } catch {
                    note("\(path(of: type)): cannot write the index file (\(error)); the next open builds it")
                }
            }
        }
    }

    /// Deletes the index files of classes that declare no index any more (their indexes were removed): those
    /// the store's index catalog, which lists the indexes of every class that declared any, does not name.
    private func removeUnusedFiles() {
        let io = io
        guard let view = try? store.snapshot(), let catalog = try? IndexCatalog.load(from: view)?.0,
            let names = try? io.listDirectory(store.directory)
        else { return }
        let kept = Set(catalog.entries.map { IndexFile.fileName(tag: TypeNames.tag(for: $0.typeName)) })
        var removed = false
        for name in names
        where name.hasPrefix("index-") && name.hasSuffix("." + IndexFile.fileExtension) && !kept.contains(name) {
            removed = (try? io.unlink(store.directory + "/" + name)) != nil || removed
        }
        if removed { try? io.syncDirectory(store.directory) }
    }
}
