@_spi(Engine) import LogStoreFormat
@_spi(Engine) import LogStoreSystem

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// What a checkpoint copies, taken in one hold of the index lock: the segments and their sizes as of the
/// newest published commit, the dictionaries their frames name, and that commit's sequence number.
struct CheckpointSource {
    struct Segment {
        /// The open file: it stays readable (and copyable) when compaction deletes the segment meanwhile.
        let file: SegmentFile
        /// Bytes that belong to the captured state: the whole segment when sealed, up to the last
        /// published commit for the segment being written.
        let size: UInt64
        /// Whether it is the store's append segment (the newest writer segment), which the copy's manifest
        /// names in its clean-close record.
        let isAppend: Bool
        /// Whether a writer may still append to it (the segment being written, or the newest writer
        /// segment of a store open read-only): it is copied, never linked.
        var mayGrow: Bool
        /// Whether the store has a hint for it that it does not distrust (compaction found none wrong).
        let hintUsable: Bool
    }

    var segments: [Segment]
    var dictionaries: [CompressionDictionary]
    var sequence: UInt64
    var reservedIDs: UInt64
    /// The store's encryption: the copy's dictionary files are sealed with it (its segments and hints are
    /// copied as they are, sealed already).
    var encryption: StoreEncryption? = nil

    /// The bytes of the copy's file of `dictionary`; nil when the cipher fails.
    func fileBytes(of dictionary: CompressionDictionary) throws(LogStoreError) -> [UInt8] {
        guard
            let bytes = StoreDictionaries.fileBytes(
                id: dictionary.id, content: Array(dictionary.content), encryption: encryption)
        else {
            throw LogStoreError(.ioError, "cannot encrypt dictionary \(dictionary.id)")
        }
        return bytes
    }

    /// The manifest of the copy: its segments, its dictionaries, and a clean-close record naming the
    /// append segment's exact size, so that opening the copy treats any other size of it as damage.
    var manifest: SegmentManifest {
        let append = segments.last { $0.isAppend }
        return SegmentManifest(
            segments: segments.map(\.file.number), reservedIDs: reservedIDs,
            cleanClose: SegmentManifest.CleanClose(
                appendSegment: append?.file.number ?? 0, appendSize: append?.size ?? 0),
            dictionaries: dictionaries.isEmpty
                ? nil
                : dictionaries.map {
                    SegmentManifest.DictionaryRecord(
                        id: $0.id, contentLength: UInt32($0.content.count), contentChecksum: $0.contentChecksum)
                })
    }
}

/// Writes the files of a checkpoint into a new staging directory: sealed segments and their hints as hard
/// links where the file system allows (else copies), the append segment copied up to the captured commit,
/// the dictionaries, the identity file and a manifest; every file and the directory synced.
struct CheckpointWriter {
    let io: SystemIO
    /// The store's directory (hints and the identity file are taken from there).
    let storeDirectory: String
    /// The new directory the files go into (created here).
    let staging: String
    /// A backup this one replaces: its sealed segments that the store still has are linked from there.
    /// `appendSegment` is the segment that backup copied while it was being written (never reused).
    let previous: (directory: String, appendSegment: UInt32)?
    /// Whether sealed segments and hints may be hard links to the store's files (else they are copied).
    let linksToStore: Bool
    let progress: ((CheckpointProgress) -> Void)?

    func write(_ source: CheckpointSource, destination: String) throws(LogStoreError) -> CheckpointReport {
        var report = CheckpointReport(
            destination: destination, sequence: source.sequence, segments: source.segments.count,
            linkedSegments: 0, copiedSegments: 0, keptSegments: 0, bytesLinked: 0, bytesCopied: 0, notes: [])
        let total = source.segments.reduce(UInt64(0)) { $0 + $1.size }
        var done: UInt64 = 0
        let unsynced = UnsyncedCopies(io: io)
        func advance(_ bytes: Int) {
            done += UInt64(bytes)
            progress?(CheckpointProgress(bytesDone: done, bytesTotal: total))
        }
        do {
            try io.makeNewDirectory(staging)
        } catch {
            throw LogStoreError(.ioError, "cannot create the checkpoint folder", file: staging, underlying: error)
        }
        try copyIdentity()
        for segment in source.segments {
            let name = LogFormat.segmentFileName(segment.file.number)
            let target = staging + "/" + name
            let placement = try place(segment, at: target, unsynced: unsynced, advance: advance)
            switch placement {
            case .kept:
                report.keptSegments += 1
                report.bytesLinked += segment.size
            case .linked:
                report.linkedSegments += 1
                report.bytesLinked += segment.size
            case .copied:
                report.copiedSegments += 1
                report.bytesCopied += segment.size
            }
            if !segment.mayGrow && segment.hintUsable { placeHint(of: segment.file.number, kept: placement == .kept) }
        }
        try unsynced.syncAll()
        for dictionary in source.dictionaries {
            let path = staging + "/" + DictionaryFile.fileName(dictionary.id)
            try writeNew(path, try source.fileBytes(of: dictionary), "dictionary")
        }
        try writeNew(staging + "/" + SegmentManifest.fileName, source.manifest.encoded(), "segment manifest")
        do {
            try io.syncDirectory(staging)
        } catch {
            throw LogStoreError(.ioError, "cannot sync the checkpoint directory", file: staging, underlying: error)
        }
        return report
    }

    private enum Placement { case kept, linked, copied }

    /// Puts one segment at `target`: kept from the previous backup, linked to the store's file, or copied
    /// (left for `unsynced` to sync).
    private func place(
        _ segment: CheckpointSource.Segment, at target: String, unsynced: UnsyncedCopies, advance: (Int) -> Void
    ) throws(LogStoreError) -> Placement {
        let file = segment.file
        if !segment.mayGrow {
            if let previous, file.number != previous.appendSegment {
                let old = previous.directory + "/" + LogFormat.segmentFileName(file.number)
                if isSameSegment(old, as: segment), (try? io.link(old, to: target)) != nil {
                    advance(Int(clamping: segment.size))
                    return .kept
                }
            }
            // A sealed segment never changes, and is durable already: the writer syncs a segment when it
            // seals it (and creates the next one only then), compaction syncs its outputs before
            // installing them. Linked when its file is exactly the segment.
            if linksToStore, (try? io.size(file.fd, path: file.path)) == segment.size {
                if (try? io.link(file.path, to: target)) != nil {
                    // The name links the file the store has open, unless it names another file now (a
                    // read-only store's writer started over under that number): then the bytes are copied.
                    if isSameFile(target, as: file.fd) {
                        advance(Int(clamping: segment.size))
                        return .linked
                    }
                    try? io.unlink(target)
                }
            }
        }
        // The segment being written, a segment compaction deleted since the state was taken (its open file still
        // holds it), or another file system: the bytes are copied.
        let fd: Int32
        do {
            fd = try io.copyPrefixUnsynced(
                of: file.fd, count: segment.size, source: file.path, to: target, progress: advance)
        } catch {
            throw LogStoreError.writeFailed(
                "copy the segment \(file.path)", file: target, bytes: Int(clamping: segment.size), underlying: error)
        }
        try unsynced.add(fd, path: target)
        return .copied
    }

    /// Links (or copies) the hint of a sealed segment when the store has one (or, for a segment kept from
    /// the previous backup, that backup). A missing hint only makes the copy's first open scan that
    /// segment, so failures are ignored.
    private func placeHint(of number: UInt32, kept: Bool) {
        let name = HintFile.fileName(number)
        let target = staging + "/" + name
        for directory in [storeDirectory, kept ? previous?.directory : nil].compactMap({ $0 }) {
            let path = directory + "/" + name
            if linksToStore || directory != storeDirectory, (try? io.link(path, to: target)) != nil { return }
            guard let fd = try? io.open(path, flags: O_RDONLY | O_CLOEXEC) else { continue }
            defer { io.close(fd) }
            if let size = try? io.size(fd, path: path),
                (try? io.copyPrefix(of: fd, count: size, source: path, to: target, progress: { _ in })) != nil
            {
                return
            }
            try? io.unlink(target)
        }
    }

    /// Copies the store's identity file (`STORE`), when it has one.
    private func copyIdentity() throws(LogStoreError) {
        let path = storeDirectory + "/" + StoreIdentity.fileName
        guard io.exists(path) else { return }
        let bytes: [UInt8]
        do {
            bytes = try io.readWholeFile(path)
        } catch {
            throw LogStoreError(.ioError, "cannot read the store's identity file", file: path, underlying: error)
        }
        try writeNew(staging + "/" + StoreIdentity.fileName, bytes, "identity file")
    }

    private func writeNew(_ path: String, _ bytes: [UInt8], _ what: String) throws(LogStoreError) {
        do {
            try io.writeNewFile(path, bytes)
        } catch {
            throw LogStoreError.writeFailed("write the \(what)", file: path, bytes: bytes.count, underlying: error)
        }
    }

    /// Whether `path` names the file open at `fd` (the same device and inode).
    private func isSameFile(_ path: String, as fd: Int32) -> Bool {
        var info = stat()
        guard fstat(fd, &info) == 0, let linked = CheckpointDestination.status(path, following: false) else {
            return false
        }
        return linked.device == UInt64(info.st_dev) && linked.inode == UInt64(info.st_ino)
    }

    /// Whether the previous backup's file `path` is `segment` of the store: the same file (unless links to
    /// the store are off: then it must be copied), or one of the same size whose header (segment number,
    /// creation time, base sequence) and last 4 KiB (the last batch's frames and checksum, the seal) are the
    /// segment's. A copy of the store that went on writing (a restore, a checkpoint opened for writing)
    /// starts its own segments under numbers the store may also use; they differ there.
    private func isSameSegment(_ path: String, as segment: CheckpointSource.Segment) -> Bool {
        guard let old = CheckpointDestination.status(path, following: false), old.isRegular, old.size == segment.size
        else { return false }
        var info = stat()
        guard fstat(segment.file.fd, &info) == 0 else { return false }
        if old.device == UInt64(info.st_dev) && old.inode == UInt64(info.st_ino) { return linksToStore }
        guard let fd = try? io.open(path, flags: O_RDONLY | O_CLOEXEC) else { return false }
        defer { io.close(fd) }
        let header = LogFormat.segmentHeaderSize
        let tailStart = segment.size > 4_096 ? segment.size - 4_096 : 0
        for (offset, count) in [(UInt64(0), header), (tailStart, Int(segment.size - tailStart))] {
            guard let theirs = try? io.read(fd, count: count, at: offset, path: path),
                let ours = try? io.read(segment.file.fd, count: count, at: offset, path: segment.file.path),
                theirs.count == count, theirs == ours
            else { return false }
        }
        return true
    }
}

/// Copied files not synced yet, each with its descriptor open: they are synced together (up to 32 at a time,
/// and the rest before the manifest is written), so that the disk writes several at once, and through the
/// descriptor that wrote them, which sees every write error of the file. Closed on every path.
final class UnsyncedCopies {
    private let io: SystemIO
    private var files: [(fd: Int32, path: String)] = []

    init(io: SystemIO) { self.io = io }

    func add(_ fd: Int32, path: String) throws(LogStoreError) {
        files.append((fd, path))
        if files.count >= 32 { try syncAll() }
    }

    func syncAll() throws(LogStoreError) {
        defer {
            for file in files { io.close(file.fd) }
            files.removeAll()
        }
        for file in files {
            do {
                try io.syncData(file.fd, path: file.path)
            } catch {
                throw LogStoreError(.ioError, "cannot sync a copied segment", file: file.path, underlying: error)
            }
        }
    }

    deinit { for file in files { io.close(file.fd) } }
}
