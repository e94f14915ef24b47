@_spi(Engine) import LogStoreFormat
@_spi(Engine) import LogStoreSystem

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Brings a replica's directory up to a ``CheckpointSource`` in place, in the order a writer changes its
/// own store, so that a process reading the replica (a read-only open, a follower) sees it as it would see
/// a store beside its writer:
/// 1. leftovers of a pass cut short are removed, and a part of a segment the store no longer has is sealed;
/// 2. new dictionaries are written and renamed in, then recorded in a manifest of the segments the replica
///    has so far (a dictionary is known before any frame names it);
/// 3. segments the replica lacks are copied under `NAME.writing`, synced and renamed (with their hints); the
///    segment the replica has a part of is extended by the bytes up to the captured commit (whole batches: a
///    reader sees at most a torn tail while the bytes are written), and synced;
/// 4. the manifest is replaced (written, synced, renamed), without a clean-close record: the replica's
///    newest segment may grow;
/// 5. segments the store compacted away are removed, with their hints, and the directory synced.
struct ReplicaWriter {
    let io: SystemIO
    let storeDirectory: String
    let replica: String

    /// - throws: ``LogStoreError`` `invalidArgument` when the replica holds a segment that is not the store's
    ///   (it was written to: opened for writing, promoted), `ioError` naming the file.
    func update(from source: CheckpointSource) throws(LogStoreError) -> ReplicationReport {
        var report = ReplicationReport(
            destination: replica, sequence: source.sequence, segmentsCopied: 0, bytesAppended: 0, bytesCopied: 0,
            segmentsRemoved: 0)
        let names: [String]
        do {
            names = try io.listDirectory(replica)
            for name in names where name.hasSuffix(LogFormat.writingSuffix) {
                try io.unlink(replica + "/" + name)
            }
        } catch {
            throw LogStoreError(.ioError, "cannot list the replica", file: replica, underlying: error)
        }
        let present = Set(names.compactMap(LogFormat.segmentNumber(fromFileName:)))
        let wanted = Set(source.segments.map(\.file.number))
        if let stranger = present.subtracting(wanted).first(where: { $0 > (wanted.max() ?? 0) }) {
            throw LogStoreError(
                .invalidArgument,
                "the replica has a segment the store never had: it was written to (opened for writing, promoted); "
                    + "make a new replica", file: replica + "/" + LogFormat.segmentFileName(stranger))
        }
        // A segment the replica has a part of that the store compacted away since (sealed, then rewritten) can
        // no longer be extended: it is sealed here as it is, as a writer seals its segment before it starts
        // the next, so that it is never an unsealed segment below the replica's newest one.
        for number in present.subtracting(wanted).sorted() {
            try sealIfOpen(replica + "/" + LogFormat.segmentFileName(number), sequence: source.sequence)
        }
        // Dictionaries before any segment whose frames name them, recorded in a manifest of the segments the
        // replica has so far, as a writer records a dictionary before it writes a frame against it.
        let newDictionaries = source.dictionaries.filter {
            !io.exists(replica + "/" + DictionaryFile.fileName($0.id))
        }
        if !newDictionaries.isEmpty {
            for dictionary in newDictionaries {
                try writeNew(
                    replica + "/" + DictionaryFile.fileName(dictionary.id),
                    DictionaryFile.encode(id: dictionary.id, content: Array(dictionary.content)))
            }
            var interim = source.manifest
            interim.cleanClose = nil
            interim.segments = present.sorted()
            try syncReplica()
            try writeNew(replica + "/" + SegmentManifest.fileName, interim.encoded(), replacing: true)
            try syncReplica()
        }
        for segment in source.segments {
            let path = replica + "/" + LogFormat.segmentFileName(segment.file.number)
            if present.contains(segment.file.number) {
                report.bytesAppended += try extend(path, to: segment)
            } else {
                try copyNew(segment.file.fd, count: segment.size, source: segment.file.path, to: path)
                report.segmentsCopied += 1
                report.bytesCopied += segment.size
            }
            if !segment.mayGrow, segment.hintUsable { copyHint(of: segment.file.number) }
        }
        try syncReplica()
        var manifest = source.manifest
        manifest.cleanClose = nil
        try writeNew(replica + "/" + SegmentManifest.fileName, manifest.encoded(), replacing: true)
        try syncReplica()
        let gone = present.subtracting(wanted)
        for number in gone.sorted() {
            do {
                let hint = replica + "/" + HintFile.fileName(number)
                if io.exists(hint) { try io.unlink(hint) }
                try io.unlink(replica + "/" + LogFormat.segmentFileName(number))
            } catch {
                throw LogStoreError(
                    .ioError, "cannot remove a segment the store compacted away", file: replica, underlying: error)
            }
        }
        if !gone.isEmpty { try syncReplica() }
        report.segmentsRemoved = gone.count
        return report
    }

    /// Extends the replica's part of `segment` at `path` to the captured size; returns the bytes appended.
    /// - throws: `invalidArgument` when the replica's bytes are not a part of the store's segment.
    private func extend(_ path: String, to segment: CheckpointSource.Segment) throws(LogStoreError) -> UInt64 {
        do {
            let fd = try io.open(path, flags: O_RDWR | O_CLOEXEC)
            defer { io.close(fd) }
            let have = try io.size(fd, path: path)
            guard have <= segment.size, try isPrefix(fd, have: have, of: segment) else {
                throw LogStoreError(
                    .invalidArgument,
                    "the replica's segment differs from the store's: the replica was written to (opened for writing, "
                        + "promoted); make a new replica", file: path)
            }
            guard have < segment.size else { return 0 }
            var offset = have
            while offset < segment.size {
                let count = Int(min(segment.size - offset, 1 << 20))
                let bytes = try io.read(segment.file.fd, count: count, at: offset, path: segment.file.path)
                let written = bytes.withUnsafeBytes { raw in
                    Result { () throws(SystemError) in try io.writeAll(fd, raw, at: offset, path: path) }
                }
                try written.get()
                offset += UInt64(count)
            }
            try io.syncData(fd, path: path)
            return segment.size - have
        } catch let error as LogStoreError {
            throw error
        } catch {
            throw LogStoreError(.ioError, "cannot extend the replica's segment", file: path, underlying: error)
        }
    }

    /// Seals the replica's segment at `path` after its last whole batch (cutting a torn part a pass cut short
    /// left) unless it ends with its seal frame already.
    private func sealIfOpen(_ path: String, sequence: UInt64) throws(LogStoreError) {
        do {
            let bytes = try io.readWholeFile(path, limit: UInt64(UInt32.max))
            let (sealed, end, format): (Bool, Int, FrameFormat?) = bytes.withUnsafeBytes { raw in
                guard case .success = SegmentHeader.decode(raw) else { return (false, 0, nil) }
                let outcome = SegmentScanner(bytes: raw).scan { _ in }
                return (outcome.sealedAt != nil, outcome.committedEnd, FrameFormat(segment: raw))
            }
            // A segment whose header does not read is removed with the others the store no longer has.
            guard !sealed, let format else { return }
            let buffer = WriteBuffer(capacity: 64)
            let empty = UnsafeRawBufferPointer(start: nil, count: 0)
            switch format {
            case .v1:
                FrameEncoder(compressionMinimumSize: 0).append(
                    kind: .seal, flags: .commit, sequence: sequence, id: UInt64(end), typeTag: 0, references: [],
                    payload: empty, to: buffer)
            case .v2(let base):
                CompactFrameEncoder(compressionMinimumSize: 0).append(
                    kind: .seal, flags: [], sequence: max(sequence, base), baseSequence: base, id: UInt64(end),
                    typeTag: 0, references: .ids([]), payload: .raw(empty), batchStart: 0, to: buffer)
            }
            let fd = try io.open(path, flags: O_RDWR | O_CLOEXEC)
            defer { io.close(fd) }
            try io.truncate(fd, to: UInt64(end), path: path)
            try io.writeAll(fd, buffer.bytes, at: UInt64(end), path: path)
            try io.syncData(fd, path: path)
        } catch {
            throw LogStoreError(.ioError, "cannot seal a segment of the replica", file: path, underlying: error)
        }
    }

    /// Whether the replica's first `have` bytes (open at `fd`) are the store's: the header and the last 4 KiB
    /// of them compared.
    private func isPrefix(_ fd: Int32, have: UInt64, of segment: CheckpointSource.Segment) throws(SystemError)
        -> Bool
    {
        let header = UInt64(LogFormat.segmentHeaderSize)
        let tail = min(have, 4_096)
        for (offset, count) in [(UInt64(0), min(have, header)), (have - tail, tail)] where count > 0 {
            let mine = try io.read(fd, count: Int(count), at: offset, path: replica)
            let theirs = try io.read(segment.file.fd, count: Int(count), at: offset, path: segment.file.path)
            if mine != theirs { return false }
        }
        return true
    }

    /// Copies the first `count` bytes of the file at `fd` to `path` (under `NAME.writing`, synced, renamed).
    private func copyNew(_ fd: Int32, count: UInt64, source: String, to path: String) throws(LogStoreError) {
        let temporary = path + LogFormat.writingSuffix
        do {
            try io.copyPrefix(of: fd, count: count, source: source, to: temporary, progress: { _ in })
            try io.rename(temporary, to: path)
        } catch {
            throw LogStoreError(.ioError, "cannot copy a segment into the replica", file: path, underlying: error)
        }
    }

    /// Copies the store's hint of segment `number` when the replica has none (a hint compaction deleted
    /// meanwhile is left out: it only makes the replica's open scan that segment).
    private func copyHint(of number: UInt32) {
        let target = replica + "/" + HintFile.fileName(number)
        guard !io.exists(target),
            let fd = try? io.open(storeDirectory + "/" + HintFile.fileName(number), flags: O_RDONLY | O_CLOEXEC)
        else { return }
        defer { io.close(fd) }
        guard let size = try? io.size(fd, path: target) else { return }
        try? copyNew(fd, count: size, source: storeDirectory + "/" + HintFile.fileName(number), to: target)
    }

    /// Writes `bytes` to `path` under `NAME.writing`, synced, and renames it in (over an existing file when
    /// `replacing`).
    private func writeNew(_ path: String, _ bytes: [UInt8], replacing: Bool = false) throws(LogStoreError) {
        let temporary = path + LogFormat.writingSuffix
        do {
            try io.writeNewFile(temporary, bytes)
            try io.rename(temporary, to: path)
        } catch {
            throw LogStoreError(.ioError, "cannot write a file of the replica", file: path, underlying: error)
        }
    }

    private func syncReplica() throws(LogStoreError) {
        do {
            try io.syncDirectory(replica)
        } catch {
            throw LogStoreError(.ioError, "cannot sync the replica's directory", file: replica, underlying: error)
        }
    }
}
