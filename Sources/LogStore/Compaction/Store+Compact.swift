import Dispatch
import Foundation
@_spi(Engine) import LogStoreFormat
@_spi(Engine) import LogStoreSystem

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Compaction: rewriting the live records of sealed segments that hold garbage into new segments,
/// then deleting the old ones.
///
/// A pass is crash-safe at every step: outputs are written under a temporary name and renamed into
/// place only when complete and synced; the index switches to the copies only after that; the old
/// segments are deleted last. After a crash the copies and the originals carry the same sequence
/// numbers, so either wins on replay with the same result. A tombstone is dropped only when no other
/// segment can hold an older copy of its object (every other segment's lowest sequence number is
/// higher), so a deleted object never comes back.
extension Store {
    /// Compacts now: rewrites every sealed segment that holds any garbage (dead or superseded records,
    /// tombstones no longer needed), then deletes the old segments.
    ///
    /// Readers are never blocked for long; writers go on meanwhile. The background compactor (see
    /// ``CompactionOptions``) runs the same code.
    ///
    /// A pass never runs beside ``close()``: one in progress when another thread closes the store finishes
    /// first, and one asked for once the close has begun is refused with `closed`.
    ///
    /// The first pass of a session that compacts anything first compares every hint file the open used with
    /// its segment (a read of those segments, as `verify` does): what the index took from a hint decides
    /// nothing until it is found true.
    /// - parameter progress: called from the compacting thread as bytes of the chosen segments are processed.
    /// - throws: ``LogStoreError`` with code `closed`, `readOnly`, `corruptFrame` when a chosen segment
    ///   is damaged (nothing is deleted then), `corruptHint` (naming the hint file) when a hint the open
    ///   used disagrees with its segment (nothing is compacted in this session then; a true hint is written
    ///   in its place), or `ioError`.
    @discardableResult
    public func compact(progress: ((CompactionProgress) -> Void)? = nil) throws(LogStoreError) -> CompactionReport {
        guard !options.readOnly else { throw LogStoreError(.readOnly, "the store is open read-only", file: directory) }
        try checkWritable()
        try sealActiveSegmentIfItHoldsGarbage()
        return try compactSegments(garbageRatio: 0, progress: progress)
    }

    /// Rewrites every segment into segments of the format this version writes (version 2), dropping
    /// garbage on the way: the segment being written is sealed first, and every sealed segment is
    /// compacted whether it holds garbage or not. A store written by an older version is converted as a
    /// whole (it is also read as it is, and compaction converts what it rewrites).
    ///
    /// - throws: as ``compact(progress:)``.
    @discardableResult
    public func rewriteAllSegments(progress: ((CompactionProgress) -> Void)? = nil) throws(LogStoreError)
        -> CompactionReport
    {
        guard !options.readOnly else { throw LogStoreError(.readOnly, "the store is open read-only", file: directory) }
        try checkWritable()
        // A dictionary of today's records, before the seal: what is written from here on uses it, and the
        // rewrite recompresses every older record against it.
        let installed = options.compression && options.sharedDictionary ? try buildDictionaryFromLiveRecords() : nil
        try sealActiveSegment { _ in true }
        let report = try compactSegments(garbageRatio: 0, rewritingAll: true, progress: progress)
        if installed != nil { try removeUnusedDictionaries() }
        return report
    }

    /// Seals the segment being written when it holds garbage, so an on-demand pass reclaims that too;
    /// the next batch starts a new segment.
    func sealActiveSegmentIfItHoldsGarbage() throws(LogStoreError) {
        try sealActiveSegment { number in state.withLock { $0.segments.garbageBytes(of: number) } > 0 }
    }

    /// Seals the segment being written when `shouldSeal` says so (given its number); the next batch starts
    /// a new segment.
    private func sealActiveSegment(when shouldSeal: (UInt32) -> Bool) throws(LogStoreError) {
        // From the hand-over on, new batches go to a new segment; no leader writes until the seal is done.
        let taken = pipeline.handOverTail(if: shouldSeal)
        guard let (file, size, sequence) = taken else { return }
        var failure: LogStoreError?
        do throws(LogStoreError) {
            try pipeline.seal(file, at: size, sequence: sequence)
        } catch {
            failure = error
        }
        pipeline.takeBackTail(sealFailure: failure)
        if let failure { throw failure }
    }

    /// One pass over the sealed segments whose garbage share is at least `garbageRatio` (any garbage
    /// at all when 0).
    ///
    /// - parameter rewritingAll: every sealed segment, garbage or not.
    /// - parameter limit: at most this many segments, those with the largest garbage share first (nil: every
    ///   one that qualifies). The inputs of a pass are deleted at its end, so the disk holds them and their
    ///   copies meanwhile: the background compactor takes one segment per pass to keep that extra small.
    func compactSegments(
        garbageRatio: Double, rewritingAll: Bool = false, limit: Int? = nil, progress: ((CompactionProgress) -> Void)?
    ) throws(LogStoreError) -> CompactionReport {
        guard !options.readOnly else { throw LogStoreError(.readOnly, "the store is open read-only", file: directory) }
        try checkWritable()
        return try withCompactionLock { () throws(LogStoreError) -> CompactionReport in
            try compactionPass(garbageRatio: garbageRatio, rewritingAll: rewritingAll, limit: limit, progress: progress)
        }
    }

    /// Runs `body` holding the compaction lock (one pass, dictionary removal or hint write at a time; see
    /// ``compactionLock`` for the lock order), waiting while another holds it.
    /// - throws: ``LogStoreError`` with code `closed` when ``close()`` has begun (nothing runs then), and
    ///   what `body` throws.
    func withCompactionLock<Result: Sendable>(_ body: () throws(LogStoreError) -> Result) throws(LogStoreError)
        -> Result
    {
        try compactionLock.withLock { closing throws(LogStoreError) -> Result in
            guard !closing else { throw LogStoreError(.closed, "the store is closed", file: directory) }
            return try body()
        }
    }

    private func compactionPass(
        garbageRatio: Double, rewritingAll: Bool, limit: Int?, progress: ((CompactionProgress) -> Void)?
    ) throws(LogStoreError) -> CompactionReport {
        let started = ContinuousClock.now
        var report = CompactionReport()
        var chosen = chooseSegments(garbageRatio: garbageRatio, rewritingAll: rewritingAll, report: &report)
        if let limit, chosen.count > limit {
            let shares = state.withLock { state in
                Dictionary(
                    uniqueKeysWithValues: chosen.map { segment in
                        (
                            segment.file.number,
                            Double(state.segments[segment.file.number]?.garbageBytes ?? 0)
                                / Double(max(segment.size, 1))
                        )
                    })
            }
            chosen = Array(
                chosen.sorted { (shares[$0.file.number] ?? 0) > (shares[$1.file.number] ?? 0) }.prefix(max(1, limit))
            ).sorted { $0.file.number < $1.file.number }
        }
        guard !chosen.isEmpty else {
            report.segmentsAfter = report.segmentsBefore
            report.bytesAfter = report.bytesBefore
            return report
        }
        // Before anything is written: what the index says of a segment whose records came from its hint
        // decides nothing until the hint is found true, and what is dropped from the chosen segments rests
        // on what the index says of every segment.
        try checkEveryReplayedHint()
        let total = chosen.reduce(UInt64(0)) { $0 + $1.size }
        // What the outputs will hold, about: the live bytes of the chosen segments (their page cache is
        // made ahead of the copy; an estimate too high only leaves a hole that is cut back).
        let liveTotal = state.withLock { state in
            chosen.reduce(UInt64(0)) { $0 + min(state.segments[$1.file.number]?.liveBytes ?? $1.size, $1.size) }
        }
        var done: UInt64 = 0
        var outputs: [CompactionOutput] = []
        var finished: [(CompactionOutput, SegmentFile)] = []
        let chosenNumbers = Set(chosen.map(\.file.number))
        let reservation = pipeline.reservation
        // Every live record of the chosen segments: each must be copied before its segment may go.
        var live = liveRecords(of: chosenNumbers)
        // Segments without tombstones and root frames are compacted from the index alone, without
        // reading their dead records.
        let indexOnly = state.withLock { state in chosenNumbers.filter { state.segments[$0]?.controlFrames ?? 0 == 0 } }
        let indexOnlyRecords = indexOnly.reduce(0) { $0 + (live[$1]?.count ?? 0) }
        // The outputs' frames are written against the oldest sequence number they may hold.
        let outputBase = state.withLock { state in
            chosenNumbers.compactMap { state.segments[$0]?.minSequence }.filter { $0 != .max }.min() ?? reservation.1
        }

        // Copies whose payloads predate the newest dictionary are compressed against it.
        let dictionaries = state.withLock { $0.dictionaries }
        let recompression = dictionaries.newest.flatMap { newest in
            options.compression && options.sharedDictionary && !options.readOnly
                ? CompactionOutput.Recompression(
                    newest: newest, dictionaries: dictionaries,
                    compressionMinimumSize: options.effectiveCompressionMinimum) : nil
        }

        do throws(LogStoreError) {
            for (file, size) in chosen {
                let bytes = file.bytes(count: Int(size))
                /// Copies one frame into the current output (starting one when needed).
                func copy(_ frame: DecodedFrame, _ move: (id: UInt64, from: IndexEntry)?) throws(LogStoreError) {
                    let room = UInt64(CompactionOutput.bound(of: frame, recompression))
                    if outputs.last.map({ $0.size + room > UInt64(options.segmentSize) }) ?? true {
                        if let full = outputs.last { finished.append((full, try finish(full))) }
                        let remaining = liveTotal > report.bytesCopied ? liveTotal - report.bytesCopied : 0
                        let output = try startOutput(
                            expectedSize: min(UInt64(options.segmentSize), remaining + (1 << 20)),
                            baseSequence: outputBase, recompression: recompression)
                        output.reserveMoves(min(indexOnlyRecords, options.segmentSize / LogFormat.minimumFrameSize))
                        try step(output.temporaryPath) { () throws(SystemError) in
                            try output.appendReservation(through: reservation.0, sequence: reservation.1)
                        }
                        outputs.append(output)
                    }
                    guard let output = outputs.last else { return }
                    guard FrameDecoder.checksumMatches(frame, in: bytes) else {
                        throw LogStoreError(
                            .corruptFrame, "cannot compact a damaged frame: checksum mismatch", file: file.path,
                            offset: UInt64(frame.offset))
                    }
                    if output.bufferedBytes + frame.length >= CompactionOutput.chunkSize { yieldToWriter() }
                    try step(output.temporaryPath) { () throws(SystemError) in
                        try output.append(frame, from: bytes, move: move)
                    }
                    if move != nil {
                        report.recordsCopied += 1
                        report.bytesCopied += UInt64(frame.length)
                    }
                    throttle(bytes: UInt64(frame.length), since: started, copied: report.bytesCopied)
                }
                // Taken out of the table, so it is sorted in place rather than copied.
                var records = live.removeValue(forKey: file.number) ?? []
                if indexOnly.contains(file.number), sortAndCheck(&records, in: bytes, format: file.format) {
                    // Streamed: a list of the decoded frames would be ~130 bytes per record of fresh memory.
                    for (id, entry) in records {
                        guard
                            case .success(let frame) = FrameDecoder.decode(
                                bytes, at: Int(entry.offset), format: file.format, verifyChecksum: false)
                        else {
                            // sortAndCheck decoded it a moment ago, and segments do not change: never skip one.
                            throw LogStoreError(
                                .corruptFrame, "a live record's frame no longer decodes", file: file.path,
                                offset: UInt64(entry.offset))
                        }
                        try copy(frame, (id, entry))
                    }
                } else {
                    let frames = try committedFrames(of: file, bytes: bytes)
                    let kept = decide(frames, in: file.number, bytes: bytes, chosen: chosenNumbers, report: &report)
                    try checkEveryLiveRecordIsKept(records, kept: kept, file: file)
                    for (frame, move) in kept { try copy(frame, move) }
                }
                done += size
                progress?(CompactionProgress(bytesDone: done, bytesTotal: total))
            }
            if let last = outputs.last, !finished.contains(where: { $0.0 === last }) {
                finished.append((last, try finish(last)))
            }
        } catch {
            for output in outputs where !finished.contains(where: { $0.0 === output }) { output.abandon() }
            // Finished outputs are complete duplicates that no index entry and no manifest names: deleted, so
            // that every segment file on disk is one the store knows (dictionary retirement scans those).
            for (_, file) in finished { try? io.unlink(file.path) }
            if !finished.isEmpty { try? io.syncDirectory(directory) }
            release(finished.map(\.1))
            throw error
        }

        for (output, file) in finished { switchIndex(to: output, file: file) }
        try removeSegments(chosen.map(\.file))
        let compacted = chosen.count
        release(chosen.map(\.file))
        chosen.removeAll()
        for (output, file) in finished where try writeHint(for: file, size: output.size) {
            state.withLock { $0.segments.update(output.number) { $0.hasHint = true } }
        }
        report.segmentsCompacted = compacted
        let after = try statistics()
        report.segmentsAfter = after.segments.count
        report.bytesAfter = after.totalBytes
        let elapsed = ContinuousClock.now - started
        report.seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
        return report
    }

    /// The sealed segments to compact, with their sizes; fills the "before" figures of `report`.
    private func chooseSegments(garbageRatio: Double, rewritingAll: Bool, report: inout CompactionReport) -> [(
        file: SegmentFile, size: UInt64
    )] {
        // Under the queue lock, so no segment the writer may still append to can be chosen.
        pipeline.withBusySegments { busy in
            state.withLock { state in
                report.segmentsBefore = state.segments.count
                report.bytesBefore = state.segments.all.reduce(0) { $0 + $1.size }
                return state.segments.numbers.compactMap { number -> (SegmentFile, UInt64)? in
                    guard !busy.contains(number), let info = state.segments[number], !info.hintDisagrees else {
                        return nil
                    }
                    let garbage = info.garbageBytes
                    let qualifies =
                        rewritingAll
                        || (garbageRatio <= 0
                            ? (garbage > 0 || info.liveBytes == 0)
                            : Double(garbage) >= garbageRatio * Double(info.size))
                    return qualifies ? (info.file, info.size) : nil
                }
            }
        }
    }

    /// The live records of the chosen segments, found in the index in one pass.
    private func liveRecords(of chosen: Set<UInt32>) -> [UInt32: [(UInt64, IndexEntry)]] {
        state.withLock { state in
            let numbers = chosen.sorted()
            guard let highest = numbers.last else { return [:] }
            // Segment number → position in `lists`, in a table when the numbers are small (one array
            // read per live object instead of a dictionary lookup), in a dictionary otherwise.
            var lists = [[(UInt64, IndexEntry)]](repeating: [], count: numbers.count)
            for (index, number) in numbers.enumerated() {
                lists[index].reserveCapacity(Int(state.segments[number]?.liveBytes ?? 0) / LogFormat.minimumFrameSize)
            }
            if highest < 1 << 20 {
                var position = [Int32](repeating: -1, count: Int(highest) + 1)
                for (index, number) in numbers.enumerated() { position[Int(number)] = Int32(index) }
                state.forEachDurable { id, entry in
                    guard Int(entry.segment) < position.count else { return }
                    let index = Int(position[Int(entry.segment)])
                    if index >= 0 { lists[index].append((id, entry)) }
                }
            } else {
                let position = Dictionary(uniqueKeysWithValues: numbers.enumerated().map { ($1, $0) })
                state.forEachDurable { id, entry in
                    if let index = position[entry.segment] { lists[index].append((id, entry)) }
                }
            }
            return Dictionary(uniqueKeysWithValues: zip(numbers, lists))
        }
    }

    /// Lets go of compacted segments on a thread of its own at the lowest priority: the last reference
    /// closes a file the directory no longer names, and the kernel then frees its cached pages, which
    /// takes a while for big segments (about 0.3 s per GiB here) and need neither delay the pass nor
    /// take a processor from writers. Readers still holding one keep it.
    private func release(_ files: [SegmentFile]) {
        let held = RankedMutex(files, rank: .segmentRelease)
        let thread = Thread {
            #if os(Linux)
                // Linux niceness is per thread, and `who` 0 names the calling thread: only this one.
                _ = setpriority(__priority_which_t(PRIO_PROCESS.rawValue), 0, 19)
            #endif
            held.withLock { $0.removeAll() }
        }
        thread.name = "logstore.release"
        thread.start()
    }

    /// Lets a commit that is being written go first: the pass's next chunk (and its writeback) would
    /// otherwise queue the writer's sync behind a megabyte of compaction data. Waits, in steps of
    /// 100 µs, while the writer has a batch in flight, at most 2 ms per chunk.
    private func yieldToWriter() {
        let deadline = SystemClock.monotonicNanoseconds() + 2_000_000
        while pipeline.isWriting, SystemClock.monotonicNanoseconds() < deadline {
            SystemClock.sleep(.microseconds(100))
        }
    }

    /// Sorts `records` (the live records of one segment) by offset and checks that each names a `put`
    /// frame of its object and length; false when one does not (the segment is then scanned instead).
    private func sortAndCheck(
        _ records: inout [(UInt64, IndexEntry)], in bytes: UnsafeRawBufferPointer, format: FrameFormat
    ) -> Bool {
        records.sort { $0.1.offset < $1.1.offset }
        for (id, entry) in records {
            // The checksum is checked as the frame is copied.
            guard
                case .success(let frame) = FrameDecoder.decode(
                    bytes, at: Int(entry.offset), format: format, verifyChecksum: false),
                frame.kind == .put, frame.id == id, frame.length == Int(entry.length)
            else { return false }
        }
        return true
    }

    /// Checks that the frames a scan of `file` keeps include every record the index holds live in it
    /// (`records`, taken when the pass started). One that is missing (the index, rebuilt from a hint
    /// file, places the object where the segment has no frame of it) would be lost with the segment:
    /// that is corruption, and the pass stops before anything is deleted. A record that stopped being
    /// live meanwhile (deleted or replaced by a writer) is not missing.
    private func checkEveryLiveRecordIsKept(
        _ records: [(UInt64, IndexEntry)], kept: [(DecodedFrame, (id: UInt64, from: IndexEntry)?)], file: SegmentFile
    ) throws(LogStoreError) {
        var copied: [UInt64: UInt32] = [:]
        copied.reserveCapacity(kept.count)
        for case (_, let move?) in kept { copied[move.id] = move.from.offset }
        for (id, entry) in records where copied[id] != entry.offset {
            guard state.withLock({ $0.isDurableRecord(id, entry) }) else { continue }
            throw LogStoreError(
                .corruptFrame,
                "cannot compact: object \(id) is live at offset \(entry.offset) of this segment by the index (its"
                    + " hint file?), but no frame of it is there; the segment is kept",
                file: file.path, offset: UInt64(entry.offset), objects: [ObjectID(id)])
        }
    }

    /// Every frame of a sealed segment; damage stops the pass.
    private func committedFrames(of file: SegmentFile, bytes: UnsafeRawBufferPointer) throws(LogStoreError)
        -> [DecodedFrame]
    {
        var frames: [DecodedFrame] = []
        // Headers only: most frames of a segment worth compacting are dead and never read again; the
        // frames that are copied have their checksums checked one by one.
        var scanner = SegmentScanner(bytes: bytes)
        scanner.verifyChecksums = false
        let outcome = scanner.scan { frames.append($0) }
        if let damage = outcome.damages.first {
            throw LogStoreError(
                .corruptFrame, "cannot compact a damaged segment: \(damage.reason)", file: file.path,
                offset: UInt64(damage.offset))
        }
        return frames
    }

    /// Which frames of a segment survive, and for live records the index entry they had.
    private func decide(
        _ frames: [DecodedFrame], in segment: UInt32, bytes: UnsafeRawBufferPointer, chosen: Set<UInt32>,
        report: inout CompactionReport
    ) -> [(DecodedFrame, (id: UInt64, from: IndexEntry)?)] {
        state.withLock { state in
            var keep: [(DecodedFrame, (id: UInt64, from: IndexEntry)?)] = []
            for frame in frames {
                switch frame.kind {
                case .put:
                    let here = IndexEntry(
                        segment: segment, offset: UInt32(frame.offset), length: UInt32(frame.length),
                        typeTag: frame.typeTag)
                    if state.isDurableRecord(frame.id, here) { keep.append((frame, (frame.id, here))) }
                case .delete:
                    if let current = state.durableEntry(frame.id), (state.sequence(of: current) ?? 0) > frame.sequence {
                        report.tombstonesDropped += 1  // the object was put again since
                        continue
                    }
                    // On checked counters only: a segment whose hint is not found true may hold a dead
                    // record its hint hides (``checkEveryReplayedHint()`` has checked them all by now).
                    let olderCopyMayExist = state.segments.all.contains { other in
                        other.file.number != segment
                            && ((other.minSequence < frame.sequence && other.deadRecords > 0)
                                || other.unverifiedHint != nil || other.hintDisagrees)
                    }
                    if olderCopyMayExist {
                        keep.append((frame, nil))
                        report.tombstonesKept += 1
                    } else {
                        report.tombstonesDropped += 1
                    }
                case .setRoot, .removeRoot:
                    guard let payload = FrameDecoder.payload(of: frame, in: bytes),
                        let name = String(validating: payload, as: UTF8.self)
                    else { continue }
                    if state.rootSequences[name] == frame.sequence { keep.append((frame, nil)) }
                case .reserveIDs, .seal:
                    continue
                }
            }
            return keep
        }
    }

    private func startOutput(
        expectedSize: UInt64, baseSequence: UInt64, recompression: CompactionOutput.Recompression?
    ) throws(LogStoreError) -> CompactionOutput {
        let number = pipeline.newSegmentNumber()
        do {
            return try CompactionOutput(
                number: number, directory: directory, io: io, expectedSize: expectedSize, baseSequence: baseSequence,
                recompression: recompression)
        } catch {
            throw LogStoreError(.ioError, "cannot create a compaction output", file: directory, underlying: error)
        }
    }

    private func finish(_ output: CompactionOutput) throws(LogStoreError) -> SegmentFile {
        do {
            return try output.finish(directory: directory)
        } catch {
            throw LogStoreError(.ioError, "cannot finish a compaction output", file: output.path, underlying: error)
        }
    }

    private func step(_ path: String, _ body: () throws(SystemError) -> Void) throws(LogStoreError) {
        do {
            try body()
        } catch {
            throw LogStoreError(.ioError, "compaction write failed", file: path, underlying: error)
        }
    }

    /// Sleeps as needed to keep the pass under ``CompactionOptions/bytesPerSecondLimit``.
    private func throttle(bytes: UInt64, since started: ContinuousClock.Instant, copied: UInt64) {
        guard let limit = options.compaction.bytesPerSecondLimit, limit > 0 else { return }
        let due = Duration.seconds(Double(copied) / Double(limit))
        let elapsed = ContinuousClock.now - started
        if due > elapsed { SystemClock.sleep(due - elapsed) }
    }

    /// Publishes an output and points the index at its copies, in slices so readers wait little.
    private func switchIndex(to output: CompactionOutput, file: SegmentFile) {
        state.withLock { state in
            state.segments.register(file)
            state.segments.update(output.number) { info in
                info.size = output.size
                info.liveBytes = 0
                info.retainedBytes = output.retainedBytes
                info.controlFrames = output.controlFrames
                info.minSequence = output.minSequence
            }
        }
        var start = 0
        let moves = output.moves
        while start < moves.count {
            let end = min(start + 8192, moves.count)
            state.withLock { state in
                for move in moves[start..<end] { state.relocate(move.id, from: move.from, to: move.to) }
            }
            start = end
        }
    }

    /// Forgets the compacted segments and deletes their files (readers still holding one keep it
    /// mapped until they let go).
    private func removeSegments(_ files: [SegmentFile]) throws(LogStoreError) {
        let infos = state.withLock { state in
            files.map { file in
                defer { state.segments.remove(file.number) }
                return state.segments[file.number]
            }
        }
        var deleted = 0
        /// The segments not deleted go back into the table as they were, but with their live records
        /// counted as dead (the index points at the copies): the next pass deletes them. Until then they
        /// still count as holding older copies, so no tombstone is dropped too early.
        func keepUndeleted() {
            state.withLock { state in
                for (file, info) in zip(files, infos).dropFirst(deleted) {
                    state.segments.register(file)
                    guard let info else { continue }
                    state.segments.update(file.number) { kept in
                        kept = info
                        kept.liveBytes = 0
                        kept.deadRecords = max(info.deadRecords, 1)
                    }
                }
            }
        }
        do throws(LogStoreError) {
            try writeManifest()
        } catch {
            keepUndeleted()
            throw error
        }
        do {
            for file in files {
                let hint = directory + "/" + HintFile.fileName(file.number)
                do {
                    try io.unlink(hint)
                } catch  where error.errno == ENOENT {}
                try io.unlink(file.path)
                deleted += 1
            }
            try io.syncDirectory(directory)
        } catch {
            keepUndeleted()
            throw LogStoreError(.ioError, "cannot delete a compacted segment", file: directory, underlying: error)
        }
    }
}
