@_spi(Engine) import LogStoreFormat
@_spi(Engine) import LogStoreSystem

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// The follower's reads of the directory: which segments there are, what a segment the state does not
/// hold is (the writer's next segment, a compaction output, or one not written far enough yet), the
/// batches after the position, segments mapped again when frames were appended past their mapping, and
/// dictionaries a writer added.
extension Follower {
    /// What reading the writer's log from the position found.
    struct ReadBatches {
        /// The whole batches, in commit order.
        var batches: [FollowedBatch] = []
        /// Where reading goes on next time.
        var position: Position
        /// Segment files to (re)register in the state: new segments, and segments mapped again, larger.
        var files: [SegmentFile] = []
        /// The new segments.
        var added: Set<UInt32> = []
        /// Seal frames read: segment, end, length.
        var seals: [(segment: UInt32, end: UInt64, length: UInt64)] = []
        /// Dictionaries the batches name that the state does not hold yet.
        var dictionaries: [CompressionDictionary] = []
        /// Where reading stopped at bytes that are not a whole batch.
        var stall: Stall?
        /// Why the segment followed cannot be followed any more: it became shorter than what was read.
        var shrunk: String?

        /// Whether nothing was read: no batch, seal, new segment or segment mapped again (the position is
        /// where it was).
        var isEmpty: Bool { batches.isEmpty && seals.isEmpty && files.isEmpty && dictionaries.isEmpty }
    }

    /// The segments the state does not hold, sorted out.
    struct UnknownSegments {
        /// Writer segments above the one followed (mapped), in increasing order, up to the first one that is
        /// not ready.
        var writers: [SegmentFile] = []
        /// Compaction outputs: copies of frames the state holds, left alone until the pass deletes the
        /// segments they replace (then the store is loaded again, outputs included).
        var outputs: Set<UInt32> = []
        /// A segment whose header is not written yet, or a writer segment where none can be.
        var stall: Stall?
    }

    /// What one segment the state does not hold is.
    private enum Probe {
        case writer(SegmentFile)
        case output
        case notReady(String)
        case gone
    }

    /// The segment numbers in the directory.
    /// - throws: ``LogStoreError`` with code `ioError` when it cannot be listed.
    func listSegments() throws(LogStoreError) -> Set<UInt32> {
        do {
            return Set(try io.listDirectory(directory).compactMap(LogFormat.segmentNumber(fromFileName:)))
        } catch {
            throw LogStoreError(.ioError, "cannot list the store directory", file: directory, underlying: error)
        }
    }

    /// Sorts out the segments `numbers`, which the state does not hold; writer segments above `floor` (the
    /// one followed) are the writer's next ones.
    func probeUnknown(_ numbers: Set<UInt32>, above floor: UInt32) throws(LogStoreError) -> UnknownSegments {
        var unknown = UnknownSegments()
        for number in numbers.sorted() {
            let path = directory + "/" + LogFormat.segmentFileName(number)
            switch try probe(number, path: path) {
            case .gone:
                continue
            case .output:
                unknown.outputs.insert(number)
            case .writer where number <= floor:
                unknown.stall =
                    unknown.stall
                    ?? Stall(
                        file: path, offset: 0,
                        reason: "a writer segment that the store did not load, below the one followed")
            case .writer(let file) where unknown.stall == nil:
                unknown.writers.append(file)
            case .writer:
                // After a segment that is not ready: read once that one is.
                continue
            case .notReady(let reason):
                unknown.stall = unknown.stall ?? Stall(file: path, offset: 0, reason: reason)
            }
        }
        return unknown
    }

    /// Opens segment `number` and reads its header: a writer segment is mapped and returned.
    private func probe(_ number: UInt32, path: String) throws(LogStoreError) -> Probe {
        let fd: Int32
        do {
            fd = try io.open(path, flags: O_RDONLY | O_CLOEXEC)
        } catch  where error.isNoSuchFile {
            // Listed, then deleted: an interrupted creation a writer removed, or a compaction input.
            return .gone
        } catch {
            throw LogStoreError(.ioError, "cannot open segment", file: path, underlying: error)
        }
        var handedOver = false
        defer { if !handedOver { io.close(fd) } }
        do {
            let size = try io.size(fd, path: path)
            let bytes = try io.read(fd, count: LogFormat.segmentHeaderSize, at: 0, path: path)
            guard bytes.count == LogFormat.segmentHeaderSize else {
                return .notReady("only \(bytes.count) bytes: its header is not written yet")
            }
            switch bytes.withUnsafeBytes({ SegmentHeader.decode($0) }) {
            case .failure(let problem):
                return .notReady(problem.reason)
            case .success(let header) where header.segmentNumber != number:
                return .notReady("its header names segment \(header.segmentNumber)")
            case .success(let header) where header.isEncrypted != (encryption != nil):
                // Never read: a load of the store (after the stall limit) refuses it as damage.
                return .notReady(
                    header.isEncrypted
                        ? "an encrypted segment in a store that is not encrypted"
                        : "a segment that is not encrypted in an encrypted store")
            case .success(let header) where header.isCompactionOutput:
                return .output
            case .success:
                handedOver = true
                return .writer(
                    try SegmentFile.map(
                        number: number, path: path, fd: fd, capacity: Int(clamping: size), encryption: encryption,
                        io: io))
            }
        } catch {
            throw LogStoreError(.ioError, "cannot read segment", file: path, underlying: error)
        }
    }

    /// Reads the batches after `start`: the rest of the segment followed, then, once its seal frame is
    /// read, the writer's next segments (`newWriters`) in order.
    func readBatches(from start: Position, newWriters: [SegmentFile]) throws(LogStoreError) -> ReadBatches {
        var read = ReadBatches(position: start)
        /// Every segment read, and where what was read of it ends.
        var ends: [UInt32: (file: SegmentFile, end: UInt64)] = [:]
        reading: while true {
            if let file = read.position.file, !read.position.sealed {
                let outcome = try TailReader(file: file, io: io).read(from: read.position.offset)
                read.batches += outcome.batches
                read.position.offset = outcome.end
                ends[file.number] = (file, outcome.end)
                switch outcome.stop {
                case .sealed:
                    read.position.sealed = true
                    read.seals.append((file.number, outcome.end, outcome.sealLength))
                    continue reading
                case .end:
                    // The writer seals a segment before it creates the next: the seal must be there.
                    if let newer = newWriters.first(where: { $0.number > file.number }) {
                        read.stall = Stall(
                            file: file.path, offset: outcome.end,
                            reason: "\(LogFormat.segmentFileName(newer.number)) follows, but this segment does not "
                                + "end with its seal frame")
                    }
                case .unreadable(let offset, let reason):
                    read.stall = Stall(file: file.path, offset: offset, reason: reason)
                case .shrunk(let size):
                    read.shrunk = "\(file.path) is \(size) bytes, shorter than the \(outcome.end) bytes read of it"
                }
                break reading
            }
            let floor = read.position.file?.number ?? read.position.floor
            guard let next = newWriters.first(where: { $0.number > floor }) else { break }
            let start = UInt64(LogFormat.segmentHeaderSize)
            read.added.insert(next.number)
            read.position = Position(file: next, offset: start, sealed: false, floor: next.number)
            ends[next.number] = (next, start)
        }
        for (number, segment) in ends {
            let file =
                segment.end > UInt64(segment.file.mappedLength)
                ? try remap(segment.file, covering: segment.end) : segment.file
            if file !== segment.file || read.added.contains(number) { read.files.append(file) }
            if read.position.file?.number == number { read.position.file = file }
        }
        return read
    }

    /// Segment `file` mapped again, far enough to cover `end` (frames were appended past its mapping),
    /// through a second descriptor: readers holding the old mapping keep it.
    private func remap(_ file: SegmentFile, covering end: UInt64) throws(LogStoreError) -> SegmentFile {
        let capacity = min(max(end, UInt64(file.mappedLength) * 2), UInt64(UInt32.max))
        do {
            let fd = try io.duplicate(file.fd, path: file.path)
            return try SegmentFile.map(
                number: file.number, path: file.path, fd: fd, capacity: Int(capacity), encryption: encryption, io: io)
        } catch {
            throw LogStoreError(.ioError, "cannot map segment", file: file.path, underlying: error)
        }
    }

    /// The dictionaries `ids` from their files, each checked against its record in the segment manifest
    /// (a writer records a dictionary there before any frame names it); those that cannot be loaded so are
    /// left out.
    func loadDictionaries(_ ids: Set<UInt32>) throws(LogStoreError) -> [CompressionDictionary] {
        let loader = StoreLoader(directory: directory, mode: .readOnly, io: io, encryption: encryption)
        guard case .bytes(let bytes) = loader.readManifestFile(),
            case .success(let manifest) = bytes.withUnsafeBytes({ SegmentManifest.decode($0) }),
            let records = manifest.dictionaries
        else { return [] }
        let names: [String]
        do {
            names = try io.listDirectory(directory).filter { name in
                DictionaryFile.id(fromFileName: name).map(ids.contains) ?? false
            }
        } catch {
            throw LogStoreError(.ioError, "cannot list the store directory", file: directory, underlying: error)
        }
        return StoreDictionaries.load(directory, names: names, records: records, io: io, encryption: encryption)
            .dictionaries.all
    }
}
