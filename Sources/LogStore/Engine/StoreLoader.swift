@_spi(Engine) import LogStoreFormat
@_spi(Engine) import LogStoreSystem

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Rebuilds a store's state from its segment files: the index, roots, counters and allocators.
///
/// Used by `Store.open` (which repairs a torn tail and refuses corruption) and by `Store.verify`
/// (which repairs nothing and lists every problem). What a segment's end is comes from
/// ``TailClassifier``; what to do about it from ``RecoveryPolicy``; the loader carries that out.
struct StoreLoader {
    enum Mode {
        /// Open for writing: cut a torn tail (keeping the bytes in a side file), throw on corruption.
        case writable(segmentSize: Int)
        /// Open read-only: report a torn tail without cutting it, throw on corruption.
        case readOnly
        /// Verify: change nothing, collect every problem.
        case verify
    }

    /// A problem found by a verifying load.
    struct Problem: Sendable {
        var file: String
        var offset: UInt64?
        var message: String
    }

    /// What a load found.
    struct Loaded {
        var state = IndexState()
        var maxSequence: UInt64 = 0
        /// Highest object id named by any frame.
        var highestID: UInt64 = 0
        /// Highest id reservation (exclusive bound) found.
        var reservedIDs: UInt64 = 0
        /// The newest segment and its valid size, where writing continues.
        var newest: (file: SegmentFile, size: UInt64)?
        /// The highest segment number in the directory, also of a segment removed as torn.
        var highestSegmentNumber: UInt32 = 0
        /// Whether the newest segment ends with a seal frame (writing then starts a new one).
        var newestIsSealed = false
        var recovery: RecoveryReport?
        /// The segments loaded (the directory listing), in increasing order.
        var segmentNumbers: [UInt32] = []
        /// The segment manifest as read, when there is a valid one.
        var manifest: SegmentManifest?
        /// What the last clean close recorded, while it holds (a torn tail is then impossible).
        var cleanClose: SegmentManifest.CleanClose?
        var problems: [Problem] = []
        var notes: [String] = []
        var frames = 0
        /// Segments rebuilt from their hint files.
        var hintedSegments = 0
        /// Their hints, mapped until the reference recount has read them.
        var hints: [UInt32: HintReader] = [:]
        /// The hinted segments holding at least one put with references (the recount reads only those).
        var hintsWithReferences: Set<UInt32> = []
        /// Whether a put frame of a scanned (unhinted) segment has references.
        var scannedReferences = false
        var hintMappings: [AnyObject] = []
        /// Sequence number of the newest tombstone of each deleted id, while loading: segments are
        /// replayed in number order, and compaction outputs hold older records under newer numbers, so
        /// the sequence number, not the file order, decides which frame of an object wins.
        var tombstones: [UInt64: UInt64] = [:]
        /// What replaying the segment being read found besides its records, applied when it is read.
        var segmentEdit = SegmentReplayEdit(segment: 0)
        /// `verify` only: which bytes of each segment its committed frames take (``SegmentCoverage``), for
        /// salvage to tell what a damaged store lost.
        var coverage: [UInt32: SegmentCoverage] = [:]
        /// `verify` only: the size the last clean close recorded for an append segment that is shorter now.
        var expectedSizes: [UInt32: UInt64] = [:]
        /// Segments the manifest lists that are not in the directory.
        var missingSegments: [UInt32] = []
        /// `verify` only: the sequence number of the newest tombstone of each deleted id, kept after the load.
        var deletions: [UInt64: UInt64] = [:]

        /// Starts replaying `file`: registered first, since its records' effects count bytes in it.
        mutating func beginSegment(_ file: SegmentFile) {
            state.segments.register(file)
            segmentEdit = SegmentReplayEdit(segment: file.number)
        }

        /// Ends replaying the segment begun last: `finish` fills in what the whole segment says, and the
        /// edit is applied.
        mutating func finishSegment(_ finish: (inout SegmentReplayEdit) -> Void) {
            finish(&segmentEdit)
            state.apply(segmentEdit)
        }

        /// Whether `frame` is newer than what the state holds for its object or root.
        mutating func supersedes(_ effect: IndexEffect, sequence: UInt64) -> Bool {
            switch effect {
            case .put(let id, _):
                if !tombstones.isEmpty, let deleted = tombstones[id], deleted > sequence { return false }
                if let existing = state.index.entry(id), let newest = state.sequence(of: existing) {
                    return newest <= sequence
                }
                return true
            case .delete(let id):
                tombstones[id] = max(tombstones[id] ?? 0, sequence)
                if let existing = state.index.entry(id), let newest = state.sequence(of: existing) {
                    return newest <= sequence
                }
                return true
            case .setRoot(let name, _, _), .removeRoot(let name, _):
                return (state.rootSequences[name] ?? 0) <= sequence
            }
        }

        /// Applies one committed frame, found by a scan or in a hint, of segment `number` (the one begun
        /// last).
        mutating func replay(
            _ kind: FrameKind, id: UInt64, sequence: UInt64, effect: IndexEffect?, segment number: UInt32
        ) {
            if kind == .reserveIDs {
                reservedIDs = max(reservedIDs, id)
            } else if kind != .seal {
                highestID = max(highestID, id)
            }
            if kind == .delete || kind == .setRoot || kind == .removeRoot {
                segmentEdit.controlFrames += 1
            }
            guard let effect else { return }
            if supersedes(effect, sequence: sequence) {
                state.applyReplayed(effect)
            } else if kind == .put {
                segmentEdit.deadRecords += 1
            }
        }
    }

    let directory: String
    let mode: Mode
    let io: SystemIO
    /// Whether a store with segments must have a manifest (it has an identity file, so it was made by a
    /// version that writes the manifest before any segment).
    let requiresManifest: Bool
    /// Names of the hint files in the directory listing the segments were taken from.
    var hintNames: Set<String> = []
    /// For a read-only open or `verify`: the listed segments, opened before any is read (nil for an open
    /// for writing, which opens each segment as it loads it: it holds the lock, nothing changes under it).
    var pinned: PinnedSegments?
    /// Reads the hints ahead of the load, on another thread (an open without fault injection).
    var prefetcher: HintPrefetcher?
    /// The store's encryption (its segments are read decrypted, its hints and dictionaries opened with
    /// it); nil for an unencrypted store.
    let encryption: StoreEncryption?

    init(
        directory: String, mode: Mode, io: SystemIO, requiresManifest: Bool = false, encryption: StoreEncryption? = nil
    ) {
        self.directory = directory
        self.mode = mode
        self.io = io
        self.requiresManifest = requiresManifest
        self.encryption = encryption
    }

    /// What is done about torn tails, interrupted creations and corruption in this mode.
    var policy: RecoveryPolicy {
        switch mode {
        case .writable: return RecoveryPolicy(context: .openForWriting)
        case .readOnly: return RecoveryPolicy(context: .readOnlyOpen)
        case .verify: return RecoveryPolicy(context: .verify)
        }
    }

    var collectsProblems: Bool { policy.listsProblems }

    /// Loads the segments `numbers` (the directory listing, in increasing order), with the manifest
    /// already checked into `loaded`.
    func loadListed(_ numbers: [UInt32], into start: Loaded) throws(LogStoreError) -> Loaded {
        var loaded = start
        loaded.segmentNumbers = numbers
        loaded.highestSegmentNumber = numbers.last ?? 0
        // The segment the writer appended to last: the highest-numbered one that is not a compaction
        // output. Only it may have a torn tail or an interrupted creation, and only after a crash.
        var appendSegment = numbers.last { !isCompactionOutput($0) }
        var stray: UInt32?
        if let candidate = appendSegment {
            let previous = numbers.last { $0 < candidate && !isCompactionOutput($0) }
            if let problem = strayProblem(candidate, previous: previous) {
                let path = directory + "/" + LogFormat.segmentFileName(candidate)
                try fail(path, 0, problem, .corruptSegmentHeader, &loaded)
                (stray, appendSegment) = (candidate, previous)
            }
        }
        try checkCleanClose(appendSegment: appendSegment, into: &loaded)
        var loader = self
        if !collectsProblems, io.faults == nil {
            // The segments whose hints `loadSegment` will ask for, in its order.
            let hinted = numbers.filter { number in
                number != stray && number != appendSegment && hintNames.contains(HintFile.fileName(number))
            }
            if hinted.count > 1 {
                loader.prefetcher = HintPrefetcher(
                    hinted.map { ($0, directory + "/" + HintFile.fileName($0)) }, io: io, encryption: encryption)
            }
        }
        for number in numbers where number != stray {
            try loader.loadSegment(number, isNewest: number == appendSegment, into: &loaded)
        }
        if collectsProblems { loaded.deletions = loaded.tombstones }
        loaded.tombstones = [:]
        loaded.state.finishReplay()
        loaded.state.recountReferences(
            hints: loaded.hints, hintsWithReferences: loaded.hintsWithReferences,
            scannedReferences: loaded.scannedReferences)
        loaded.hints = [:]
        loaded.hintMappings = []
        return loaded
    }

    /// Whether segment `number` has a valid header flagged as a compaction output.
    private func isCompactionOutput(_ number: UInt32) -> Bool {
        let path = directory + "/" + LogFormat.segmentFileName(number)
        if let fd = pinned?.descriptor(number) { return Self.isCompactionOutput(fd, path: path, io: io) }
        guard let fd = try? io.open(path, flags: O_RDONLY | O_CLOEXEC) else { return false }
        defer { io.close(fd) }
        return Self.isCompactionOutput(fd, path: path, io: io)
    }

    private static func isCompactionOutput(_ fd: Int32, path: String, io: SystemIO) -> Bool {
        guard let bytes = try? io.read(fd, count: LogFormat.segmentHeaderSize, at: 0, path: path) else { return false }
        let header = bytes.withUnsafeBytes { SegmentHeader.decode($0) }
        if case .success(let header) = header { return header.isCompactionOutput }
        return false
    }

    /// Deletes compaction outputs and hint files that a crash left unfinished (never renamed into
    /// place), and hints whose segment is gone.
    func removeUnfinishedCompactions() throws(LogStoreError) {
        do {
            let names = try io.listDirectory(directory)
            let segments = Set(names.filter { LogFormat.segmentNumber(fromFileName: $0) != nil })
            let leftovers = names.filter { name in
                if name.hasSuffix(LogFormat.compactingSuffix) || name.hasSuffix(LogFormat.writingSuffix) { return true }
                guard name.hasSuffix("." + HintFile.fileExtension) else { return false }
                return !segments.contains(
                    String(name.dropLast(HintFile.fileExtension.count)) + LogFormat.segmentExtension)
            }
            for name in leftovers { try io.unlink(directory + "/" + name) }
            if !leftovers.isEmpty { try io.syncDirectory(directory) }
        } catch {
            throw LogStoreError(
                .ioError, "cannot remove an unfinished compaction output", file: directory, underlying: error)
        }
    }

    private func loadSegment(_ number: UInt32, isNewest: Bool, into loaded: inout Loaded) throws(LogStoreError) {
        let path = directory + "/" + LogFormat.segmentFileName(number)
        var writable = false
        var capacity = 0
        if case .writable(let segmentSize) = mode, isNewest {
            writable = true
            capacity = segmentSize
        }
        // Room for the seal frame that opening may append to a full newest segment.
        let sealRoom = writable ? LogFormat.sealRoom : 0
        let size: UInt64
        /// For the newest segment: where its data ends. Past it is the hole it was extended by ahead of the
        /// writes (`SegmentPrefill.swift`), which reads as zeros; scanning it would only fill the page
        /// cache with zero pages (64 MiB of them after a crash).
        var dataEnd: UInt64
        /// Data after that hole: zeros the writer wrote ahead of itself (``PageCacheFiller``) that reached
        /// the disk while the bytes before them did not, or else a hole inside the log.
        var dataAfterHole: [Range<UInt64>] = []
        /// How the classifier reads the segment (``RecoveryPolicy/role(isAppendSegment:closedCleanly:)``):
        /// only the append segment of a store not closed cleanly may end torn (or in zeros extended ahead of
        /// the writes, or have its creation interrupted).
        let role: TailClassifier.Role
        /// The size the last clean close recorded, when the file's differs from it.
        var sizeAtCleanClose: UInt64?
        do {
            // A pinned segment is read through the descriptor opened at the listing (kept open).
            let held = pinned?.descriptor(number)
            let probe = try held ?? io.open(path, flags: O_RDONLY | O_CLOEXEC)
            defer { if held == nil { io.close(probe) } }
            size = try io.size(probe, path: path)
            if isNewest, let clean = loaded.cleanClose, clean.appendSize != size {
                if cleanCloseStillRecorded(clean) {
                    sizeAtCleanClose = clean.appendSize
                } else {
                    // A writer opened the store since the manifest was read: its tail may be being written.
                    loaded.cleanClose = nil
                }
            }
            role = RecoveryPolicy.role(isAppendSegment: isNewest, closedCleanly: loaded.cleanClose != nil)
            dataEnd = role == .appendAfterCrash ? io.dataEnd(probe, size: size) : size
            if dataEnd < size {
                // Zeros written ahead reach at most a window past the writer's end (and so past the hole).
                if let regions = io.dataRegions(probe, after: dataEnd, size: size),
                    (regions.last?.upperBound ?? 0) <= dataEnd + UInt64(TornGroup.window)
                {
                    dataAfterHole = regions
                } else {
                    dataEnd = size
                }
            }
        } catch {
            throw LogStoreError(.ioError, "cannot open segment", file: path, underlying: error)
        }
        guard size <= UInt64(UInt32.max) else {
            try fail(path, 0, "segment of \(size) bytes is larger than 4 GiB", .corruptSegmentHeader, &loaded)
            return
        }
        if let recorded = sizeAtCleanClose {
            if collectsProblems, recorded > size { loaded.expectedSizes[number] = recorded }
            try fail(path, min(size, recorded), Self.sizeChange(size, recorded), .corruptFrame, &loaded)
        }
        let isListed = loaded.manifest?.segments.contains(number) ?? false
        let file: SegmentFile
        do {
            let mappedSize = max(capacity, Int(size) + sealRoom)
            if let fd = pinned?.take(number) {
                file = try SegmentFile.map(
                    number: number, path: path, fd: fd, capacity: mappedSize, encryption: encryption, io: io)
            } else {
                file = try SegmentFile.open(
                    number: number, path: path, writable: writable, capacity: mappedSize, encryption: encryption,
                    io: io)
            }
        } catch {
            throw LogStoreError(.ioError, "cannot map segment", file: path, underlying: error)
        }
        // The hole starts at a block boundary; the zeros between the last frame and it are checked below.
        if dataEnd < UInt64(LogFormat.segmentHeaderSize) { dataEnd = size }
        // Beside a writer, the append segment is read from a copy, never through the mapping: the writer
        // may cut off the space after its frames meanwhile (see ``SegmentCopy``).
        // (An encrypted segment's decrypted copy is read with `pread` already.)
        var copy: SegmentCopy?
        if tracksChanges, isNewest, encryption == nil {
            copy = try copyOfAppendSegment(file, size: size, dataEnd: &dataEnd, dataAfterHole: dataAfterHole)
        }
        // A sealed encrypted segment that its hint may stand for is not decrypted here: its header and seal
        // frame are read as written (they hold nothing secret), and its batches are decrypted when first read.
        let decryptsLater =
            encryption != nil && !isNewest && !collectsProblems && hintNames.contains(HintFile.fileName(number))
        var bytes = copy?.bytes ?? (decryptsLater ? file.rawBytes(count: Int(size)) : file.bytes(count: Int(size)))
        // The hole is only a hint: where anything but zeros follows it (a hole inside the log, or a
        // filesystem that reports holes wrongly), the whole file is scanned, as without one.
        if copy == nil,
            !dataAfterHole.allSatisfy({ region in
                bytes[Int(region.lowerBound)..<Int(region.upperBound)].allSatisfy { $0 == 0 }
            })
        {
            dataEnd = size
        }
        let facts = RecoveryPolicy.Segment(
            path: path, size: size, dataEnd: dataEnd, isAppendSegment: isNewest,
            closedCleanly: loaded.cleanClose != nil)
        let isOutput: Bool
        switch SegmentHeader.decode(bytes) {
        case .failure(let problem):
            let action = policy.action(
                forHeader: problem, allZeros: bytes.allSatisfy({ $0 == 0 }), isListed: isListed, of: facts)
            try carryOut(action, on: file, size: size, into: &loaded)
            if collectsProblems, case .note = action {
                // An interrupted creation: nothing was ever committed in it.
                loaded.coverage[number] = SegmentCoverage(end: size, uncommittedFrom: 0)
            }
            return
        case .success(let header) where header.segmentNumber != number:
            try fail(path, 16, "header names segment \(header.segmentNumber)", .corruptSegmentHeader, &loaded)
            return
        case .success(let header) where header.isEncrypted != (encryption != nil):
            let reason =
                header.isEncrypted
                ? "an encrypted segment in a store that is not encrypted"
                : "a segment that is not encrypted in an encrypted store"
            try fail(path, 12, reason, .corruptSegmentHeader, &loaded)
            return
        case .success(let header):
            isOutput = header.isCompactionOutput
        }
        if !isNewest, !collectsProblems,
            let hint = usableHint(number, segment: bytes, format: file.format, into: &loaded)
        {
            replay(hint, file: file, size: size, isOutput: isOutput, into: &loaded)
            return
        }
        if decryptsLater { bytes = file.bytes(count: Int(size)) }
        let scanned = copy?.bytes ?? file.bytes(count: Int(dataEnd))

        loaded.beginSegment(file)
        var retained = UInt64(LogFormat.segmentHeaderSize)
        var coverage = SegmentCoverage(end: dataEnd)
        coverage.mustBeSealed = role == .sealed
        let classified = TailClassifier(bytes: scanned, fileSize: Int(size), role: role).classify(
            listEveryDamage: collectsProblems
        ) { frame in
            if collectsProblems { coverage.add(frame.offset, length: frame.length) }
            if frame.kind != .put && (isOutput || frame.kind != .delete) { retained += UInt64(frame.length) }
            if frame.referenceCount > 0 { loaded.scannedReferences = true }
            loaded.replay(
                frame.kind, id: frame.id, sequence: frame.sequence,
                effect: IndexEffect.of(frame, segment: number, bytes: bytes), segment: number)
        }
        let outcome = classified.scan
        // What a segment holds besides live records and reclaimable frames (dead records; tombstones of
        // writer segments, which may become droppable) must stay: header, seal, reservations, roots,
        // and the tombstones a compaction output kept.
        let sealBytes = outcome.sealedAt.map { UInt64(outcome.committedEnd - $0) } ?? 0
        if isNewest { loaded.newestIsSealed = outcome.sealedAt != nil }
        loaded.frames += outcome.frames
        loaded.maxSequence = max(loaded.maxSequence, outcome.maxSequence)
        for failure in file.authenticationFailures {
            try fail(
                path, UInt64(failure),
                "a batch whose checksums hold does not authenticate under the store's key (altered, moved from "
                    + "another place or store, or written under another key)", .authenticationFailed, &loaded)
        }
        for damage in classified.earlierCorruption {
            try carryOut(policy.action(forCorruption: damage), on: file, size: size, into: &loaded)
        }
        let action = policy.action(for: classified.tail, of: facts)
        try carryOut(action, on: file, size: size, into: &loaded)
        if collectsProblems {
            if let seal = outcome.sealedAt {
                coverage.add(seal, length: outcome.committedEnd - seal)
                coverage.isSealed = true
            }
            switch (classified.tail, action) {
            case (_, .refuse): break
            case (.tornTail(let end, _), _), (.tornGroup(let end, _), _), (.preallocatedZeros(let end), _):
                coverage.uncommittedFrom = UInt64(end)
            default: break
            }
            loaded.coverage[number] = coverage
        }
        // After the segment's own damage is listed: a hint of a damaged segment is not reported again.
        if !isNewest, hintNames.contains(HintFile.fileName(number)) { checkHint(number, against: bytes, into: &loaded) }
        // The log ends where a tail that is cut (or, read-only, ignored) begins.
        var validSize = size
        if case .refuse = action {
        } else if let end = classified.tail.validEnd {
            validSize = UInt64(end)
        }
        loaded.finishSegment { edit in
            edit.minSequence = outcome.minSequence
            edit.retainedBytes = retained + sealBytes
            edit.validSize = validSize
        }
        if isNewest { loaded.newest = (file, validSize) }
    }

    /// The valid hint of sealed segment `number` (`segment`, its bytes), mapped, or nil (with a note saying
    /// why, when there is one).
    /// - parameter checkLayout: whether to check ``layoutProblem(of:segment:format:)`` (`verify` compares the
    ///   whole hint with its segment instead).
    private func usableHint(
        _ number: UInt32, segment: UnsafeRawBufferPointer, format: FrameFormat, checkLayout: Bool = true,
        into loaded: inout Loaded
    ) -> (AnyObject, HintReader)? {
        let name = HintFile.fileName(number)
        guard hintNames.contains(name) else { return nil }
        let path = directory + "/" + name
        let size = UInt64(segment.count)
        switch prefetcher?.take(number, path: path, io: io, encryption: encryption)
            ?? HintPrefetcher.open(number, path: path, io: io, encryption: encryption)
        {
        case .opened(let mapping, .success(let reader))
        where reader.segmentNumber == number && reader.segmentSize == size && reader.isCompact == format.isCompact:
            // An encrypted store's hint is authenticated with its key and its segment's number: its root
            // entries are the segment's (whose bytes may not be decrypted yet).
            if checkLayout,
                let problem = Self.layoutProblem(of: reader, segment: segment, format: format)
                    ?? (format.isSealed ? nil : Self.rootProblem(of: reader, segment: segment, format: format))
            {
                loaded.notes.append("\(path): \(problem); scanned the segment instead")
                return nil
            }
            return (mapping, reader)
        case .opened(_, .success):
            loaded.notes.append(
                "\(path): stale hint (another segment, size or format version); scanned the segment instead")
        case .opened(_, .failure(let problem)):
            loaded.notes.append("\(path): \(problem.reason); scanned the segment instead")
        case .failed(let error) where error.errno == ENOENT:
            // Listed, then deleted: compaction deletes a segment's hint just before the segment, which
            // a read-only open or `verify` holds open (``PinnedSegments``); scanning it gives the same.
            break
        case .failed(let error):
            loaded.notes.append("\(path): cannot read the hint (\(error)); scanned the segment instead")
        }
        return nil
    }

    /// What shows, without reading the segment's frames, that a hint (with a valid checksum) does not
    /// describe its segment: its frames must follow each other from the end of the header, with no gap,
    /// up to the segment's seal frame (checked, one frame at the segment's end), which ends the file. A hint
    /// that leaves out an entry, or describes a frame longer or shorter than it is, fails this unless
    /// another entry makes up for it; only a scan (`verify`, and compaction and mark-sweep before they drop
    /// or free anything) finds every difference.
    static func layoutProblem(of hint: HintReader, segment: UnsafeRawBufferPointer, format: FrameFormat) -> String? {
        guard hint.isContiguous else { return "hint entries leave a gap between frames" }
        let end = hint.framesEnd
        guard end < UInt64(segment.count),
            case .success(let seal) = FrameDecoder.decode(segment, at: Int(end), format: format),
            seal.kind == .seal, seal.id == end, Int(end) + seal.length == segment.count
        else { return "hint entries do not end where the segment's seal frame is" }
        return nil
    }

    /// What shows that a hint's root entries (`setRoot`, `removeRoot`) are not the segment's root frames:
    /// each one's frame is read and checked (kind, id, sequence number, length, checksum and name), since a
    /// root renamed, retargeted or turned into a removal would leave objects unreachable. One frame per root
    /// entry, and roots are few. A root frame that a hint describes as an entry of another kind is not seen
    /// here: mark-sweep and compaction compare every hint open used with its segment before they free or
    /// drop anything (``HintFiles/checkEveryReplayedHint()``).
    static func rootProblem(of hint: HintReader, segment: UnsafeRawBufferPointer, format: FrameFormat) -> String? {
        var problem: String?
        hint.forEachEntry { entry in
            guard problem == nil, entry.kind == .setRoot || entry.kind == .removeRoot else { return }
            guard case .success(let frame) = FrameDecoder.decode(segment, at: Int(entry.offset), format: format),
                frame.kind == entry.kind, frame.id == entry.id, frame.sequence == entry.sequence,
                frame.length == Int(entry.length),
                let name = FrameDecoder.payload(of: frame, in: segment), name.elementsEqual(entry.nameBytes)
            else {
                problem = "hint entry of the root frame at offset \(entry.offset) disagrees with that frame"
                return
            }
        }
        return problem
    }

    /// Rebuilds a sealed segment's share of the state from its hint, without reading the segment.
    private func replay(
        _ hint: (mapping: AnyObject, reader: HintReader), file: SegmentFile, size: UInt64, isOutput: Bool,
        into loaded: inout Loaded
    ) {
        let number = file.number
        loaded.beginSegment(file)
        var retained = UInt64(LogFormat.segmentHeaderSize)
        var minimum = UInt64.max
        var maximum: UInt64 = 0
        // The seal frame, which has no entry, is what follows the last frame.
        var framesEnd = UInt64(LogFormat.segmentHeaderSize)
        var hasReferences = false
        hint.reader.forEachEntry { entry in
            framesEnd = max(framesEnd, UInt64(entry.offset) + UInt64(entry.length))
            if entry.referenceCount > 0 { hasReferences = true }
            let kind = entry.kind
            if kind != .put && (isOutput || kind != .delete) { retained += UInt64(entry.length) }
            let sequence = entry.sequence
            minimum = min(minimum, sequence)
            maximum = max(maximum, sequence)
            let effect: IndexEffect?
            switch kind {
            case .put:
                effect = .put(
                    id: entry.id,
                    entry: IndexEntry(
                        segment: number, offset: entry.offset, length: entry.length, typeTag: entry.typeTag,
                        flags: entry.flags.contains(.pinned) ? IndexEntry.pinnedFlag : 0))
            case .delete: effect = .delete(id: entry.id)
            case .setRoot: effect = entry.name.map { .setRoot($0, ObjectID(entry.id), sequence: sequence) }
            case .removeRoot: effect = entry.name.map { .removeRoot($0, sequence: sequence) }
            case .reserveIDs, .seal: effect = nil
            }
            loaded.replay(kind, id: entry.id, sequence: sequence, effect: effect, segment: number)
        }
        retained += size > framesEnd ? size - framesEnd : 0
        loaded.maxSequence = max(loaded.maxSequence, maximum)
        loaded.frames += hint.reader.entryCount
        let checksum = hint.reader.bytes.baseAddress.map {
            $0.readLE(UInt64.self, at: hint.reader.bytes.count - LogFormat.frameChecksumSize)
        }
        loaded.finishSegment { edit in
            edit.minSequence = minimum
            edit.retainedBytes = retained
            edit.validSize = size
            edit.hint = .some(checksum)
        }
        loaded.hints[number] = hint.reader
        if hasReferences { loaded.hintsWithReferences.insert(number) }
        loaded.hintMappings.append(hint.mapping)
        loaded.hintedSegments += 1
    }

    /// Verify: a segment's hint must describe exactly its frames.
    private func checkHint(_ number: UInt32, against bytes: UnsafeRawBufferPointer, into loaded: inout Loaded) {
        guard collectsProblems else { return }
        let path = directory + "/" + HintFile.fileName(number)
        var notes: [String] = []
        var scratch = Loaded()
        guard
            let (mapping, reader) = usableHint(
                number, segment: bytes, format: FrameFormat(segment: bytes), checkLayout: false, into: &scratch)
        else {
            notes = scratch.notes
            for note in notes { loaded.problems.append(Problem(file: path, offset: nil, message: note)) }
            return
        }
        guard let expected = HintWriter.hint(segment: number, bytes: bytes) else {
            // No hint can be made from the segment: it is damaged (reported at the damage's offset) or it
            // is not sealed, which only a damaged segment reports nothing else for.
            let segmentPath = directory + "/" + LogFormat.segmentFileName(number)
            if !loaded.problems.contains(where: { $0.file == segmentPath }) {
                loaded.problems.append(
                    Problem(file: path, offset: nil, message: "hint file of a segment that is not sealed"))
            }
            return
        }
        let agrees = withExtendedLifetime(mapping) {
            expected.withUnsafeBytes { expected in
                guard case .success(let made) = HintReader.open(expected) else { return false }
                return made.hasSameEntries(as: reader)
            }
        }
        if !agrees {
            loaded.problems.append(Problem(file: path, offset: nil, message: "hint file disagrees with its segment"))
        }
    }

    /// Throws a corruption error, or records it as a problem when verifying.
    func fail(
        _ path: String, _ offset: UInt64?, _ message: String, _ code: LogStoreError.Code, _ loaded: inout Loaded
    ) throws(LogStoreError) {
        if collectsProblems {
            loaded.problems.append(Problem(file: path, offset: offset, message: message))
        } else {
            throw LogStoreError(code, message, file: path, offset: offset)
        }
    }

    /// Carries out what ``RecoveryPolicy`` decided for segment `file` (of `size` bytes).
    /// - throws: ``LogStoreError``: the corruption the action refuses (unless verifying); `ioError` when
    ///   the segment cannot be cut, trimmed or removed, or the side file cannot be written (then nothing
    ///   was cut).
    private func carryOut(
        _ action: RecoveryPolicy.Action, on file: SegmentFile, size: UInt64, into loaded: inout Loaded
    ) throws(LogStoreError) {
        switch action {
        case .accept:
            break
        case .note(let note):
            loaded.notes.append(note)
        case .report(let report):
            loaded.recovery = report
        case .trim(let end, let note):
            do {
                try io.truncate(file.fd, to: end, path: file.path)
                try io.syncData(file.fd, path: file.path)
            } catch {
                throw LogStoreError(.ioError, "cannot trim a segment", file: file.path, offset: end, underlying: error)
            }
            loaded.notes.append(note)
        case .cutAndKeep(var report, let keepEnd):
            let end = report.cutOffset
            report.savedTo = try saveTail(file, from: end, to: keepEnd)
            do {
                try io.truncate(file.fd, to: end, path: file.path)
                try io.syncData(file.fd, path: file.path)
            } catch {
                throw LogStoreError(.ioError, "cannot cut a torn tail", file: file.path, offset: end, underlying: error)
            }
            loaded.recovery = report
        case .removeAndKeep(var report):
            report.savedTo = try saveTail(file, from: 0, to: size)
            do {
                try io.unlink(file.path)
                try io.syncDirectory(directory)
            } catch {
                throw LogStoreError(.ioError, "cannot remove a torn segment", file: file.path, underlying: error)
            }
            loaded.recovery = report
        case .refuse(let code, let offset, let reason):
            try fail(file.path, offset, reason, code, &loaded)
        }
    }

    /// Copies bytes `from..<to` of a segment to a new side file `NAME.torn-MILLISECONDS`, durably; when
    /// that name is taken (a recovery interrupted after saving a tail, two recoveries within a millisecond,
    /// a clock set back), `NAME.torn-MILLISECONDS-N` with the first free N (the file is created with
    /// `O_EXCL`, so a name is never reused).
    private func saveTail(_ file: SegmentFile, from start: UInt64, to end: UInt64) throws(LogStoreError) -> String {
        let base = file.path + LogFormat.tornSuffix + String(SystemClock.milliseconds())
        // The bytes as the file holds them (an encrypted segment's decrypted copy would hold plaintext).
        var tail: [UInt8]
        if encryption != nil {
            do {
                tail = try io.read(file.fd, count: Int(end - start), at: start, path: file.path)
            } catch {
                throw LogStoreError(
                    .ioError, "cannot read the tail to save", file: file.path, offset: start, underlying: error)
            }
        } else {
            tail = [UInt8](file.bytes(count: Int(end))[Int(start)..<Int(end)])
        }
        var attempt = 0
        while true {
            let path = attempt == 0 ? base : base + "-\(attempt)"
            do {
                try io.writeNewFile(path, tail)
                try io.syncDirectory(directory)
                return path
            } catch  where error.errno == EEXIST && attempt < 1_000 {
                attempt += 1
            } catch {
                // Nothing was cut yet: remove what was written of the side file, leave the segment as it is.
                if error.errno != EEXIST, io.exists(path) { try? io.unlink(path) }
                throw LogStoreError.writeFailed(
                    "save the torn tail before cutting it (the segment is left as it is)", file: path,
                    bytes: tail.count, underlying: error)
            }
        }
    }
}
