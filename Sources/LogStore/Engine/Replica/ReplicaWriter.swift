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
/// 1. every check first (a pass that refuses changes nothing), then leftovers of a pass cut short removed;
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

    /// Every check comes before the first write: a pass that refuses leaves the replica as it was.
    /// - throws: ``LogStoreError`` `invalidArgument` when the replica holds a segment that is not the store's
    ///   (it was written to: opened for writing, promoted), or only a part of a segment the store no longer
    ///   has (compacted away while no hold kept it); `ioError` naming the file.
    func update(from source: CheckpointSource) throws(LogStoreError) -> ReplicationReport {
        var report = ReplicationReport(
            destination: replica, sequence: source.sequence, segmentsCopied: 0, bytesAppended: 0, bytesCopied: 0,
            segmentsRemoved: 0)
        let names: [String]
        do {
            names = try io.listDirectory(replica)
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
        for number in present.subtracting(wanted) {
            try requireWhole(replica + "/" + LogFormat.segmentFileName(number))
        }
        var growing: [UInt32: UInt64] = [:]
        for segment in source.segments where present.contains(segment.file.number) {
            growing[segment.file.number] = try checkedPart(
                replica + "/" + LogFormat.segmentFileName(segment.file.number), of: segment)
        }
        let replicaManifest = CheckpointDestination.manifest(in: replica, io: io)
        if replicaManifest == nil, !present.isEmpty {
            throw LogStoreError(
                .invalidArgument,
                "the replica's manifest cannot be read: which dictionaries its segments name is unknown; make a new "
                    + "replica", file: replica + "/" + SegmentManifest.fileName)
        }
        // Leftovers of a pass cut short: files under `.writing`, and dictionary files neither the replica's
        // manifest nor the store records (a pass stopped between the manifest that no longer recorded one
        // and the file's removal).
        let known = Set((replicaManifest?.dictionaries ?? []).map(\.id) + source.dictionaries.map(\.id))
        do {
            for name in names where name.hasSuffix(LogFormat.writingSuffix) {
                try io.unlink(replica + "/" + name)
            }
            for name in names {
                guard let id = DictionaryFile.id(fromFileName: name), !known.contains(id) else { continue }
                try io.unlink(replica + "/" + name)
            }
        } catch {
            throw LogStoreError(.ioError, "cannot remove a pass's leftovers", file: replica, underlying: error)
        }
        // Dictionaries before any segment whose frames name them, recorded in a manifest of the segments the
        // replica has so far, as a writer records a dictionary before it writes a frame against it. The
        // dictionaries the replica's own segments name stay recorded until those segments are removed.
        let recorded = replicaManifest?.dictionaries ?? []
        let storeRecords = source.manifest.dictionaries ?? []
        let newDictionaries = source.dictionaries.filter { dictionary in !recorded.contains { $0.id == dictionary.id } }
        let kept = recorded.filter { old in !storeRecords.contains { $0.id == old.id } }
        var interim = source.manifest
        interim.cleanClose = nil
        if !kept.isEmpty { interim.dictionaries = (storeRecords + kept).sorted { $0.id < $1.id } }
        if !newDictionaries.isEmpty {
            for dictionary in newDictionaries {
                try writeNew(
                    replica + "/" + DictionaryFile.fileName(dictionary.id), try source.fileBytes(of: dictionary),
                    replacing: true)
            }
            var manifest = interim
            manifest.segments = present.sorted()
            try syncReplica()
            try writeNew(replica + "/" + SegmentManifest.fileName, manifest.encoded(), replacing: true)
            try syncReplica()
        }
        for segment in source.segments {
            let path = replica + "/" + LogFormat.segmentFileName(segment.file.number)
            if let have = growing[segment.file.number] {
                report.bytesAppended += try extend(path, from: have, to: segment)
            } else {
                try copyNew(segment.file.fd, count: segment.size, source: segment.file.path, to: path)
                report.segmentsCopied += 1
                report.bytesCopied += segment.size
            }
            if !segment.mayGrow, segment.hintUsable { copyHint(of: segment.file.number) }
        }
        try syncReplica()
        try writeNew(replica + "/" + SegmentManifest.fileName, interim.encoded(), replacing: true)
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
        // Dictionaries no segment of the replica names any more: no longer recorded, then removed.
        if !kept.isEmpty {
            var manifest = source.manifest
            manifest.cleanClose = nil
            try writeNew(replica + "/" + SegmentManifest.fileName, manifest.encoded(), replacing: true)
            try syncReplica()
            for old in kept { try? io.unlink(replica + "/" + DictionaryFile.fileName(old.id)) }
        }
        report.segmentsRemoved = gone.count
        return report
    }

    /// Checks that the replica's segment at `path`, which the store no longer has, ends with its seal frame:
    /// a part of one (the store compacted it away before the replica had it whole) cannot be completed, and
    /// the records after that part now live only in compaction outputs, without those they superseded.
    private func requireWhole(_ path: String) throws(LogStoreError) {
        let sealed: Bool
        do {
            let fd = try io.open(path, flags: O_RDONLY | O_CLOEXEC)
            defer { io.close(fd) }
            sealed = StoreLoader.endsWithSeal(fd, path: path, io: io)
        } catch {
            throw LogStoreError(.ioError, "cannot read a segment of the replica", file: path, underlying: error)
        }
        guard sealed else {
            throw LogStoreError(
                .invalidArgument,
                "the store compacted away this segment before the replica received it whole (no hold kept it: "
                    + "the store's history/replica-*.hold folder was removed, or the replica was reached by another "
                    + "path); a pass cannot bring the replica up to date through states some commit had: make a new "
                    + "replica", file: path)
        }
    }

    /// How many bytes of `segment` the replica's segment at `path` has, after checking that they are the
    /// store's (the header and the last 4 KiB compared).
    /// - throws: `invalidArgument` when they are not (the replica was written to).
    private func checkedPart(_ path: String, of segment: CheckpointSource.Segment) throws(LogStoreError) -> UInt64 {
        do {
            let fd = try io.open(path, flags: O_RDONLY | O_CLOEXEC)
            defer { io.close(fd) }
            let have = try io.size(fd, path: path)
            guard have <= segment.size, try isPrefix(fd, have: have, of: segment) else {
                throw LogStoreError(
                    .invalidArgument,
                    "the replica's segment differs from the store's: the replica was written to (opened for writing, "
                        + "promoted); make a new replica", file: path)
            }
            return have
        } catch let error as LogStoreError {
            throw error
        } catch {
            throw LogStoreError(.ioError, "cannot read a segment of the replica", file: path, underlying: error)
        }
    }

    /// Extends the replica's part of `segment` at `path`, `have` bytes (checked by ``checkedPart(_:of:)``),
    /// to the captured size; returns the bytes appended.
    private func extend(_ path: String, from have: UInt64, to segment: CheckpointSource.Segment) throws(LogStoreError)
        -> UInt64
    {
        guard have < segment.size else { return 0 }
        do {
            let fd = try io.open(path, flags: O_RDWR | O_CLOEXEC)
            defer { io.close(fd) }
            var offset = have
            while offset < segment.size {
                let count = Int(min(segment.size - offset, 1 << 20))
                let bytes = try io.read(segment.file.fd, count: count, at: offset, path: segment.file.path)
                guard bytes.count == count else {
                    throw LogStoreError(
                        .ioError, "the store's segment ended before the captured commit", file: segment.file.path,
                        offset: offset + UInt64(bytes.count))
                }
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
