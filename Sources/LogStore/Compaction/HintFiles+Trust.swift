@_spi(Engine) import LogStoreFormat
@_spi(Engine) import LogStoreSystem

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// A hint file speeds up an open, but never decides what compaction or the collector destroys. Open
/// rebuilds a sealed segment's records from its hint without reading the segment's frames; before a
/// compaction pass or a mark-sweep pass frees or drops anything, every hint open used is compared with its
/// segment, entry for entry, as `verify` compares them (once per hint while the store is open). What a pass decides
/// for one segment rests on the others too: a frame is dead because another segment holds a newer record
/// or a tombstone of its object, a tombstone may go because no other segment holds a dead record older
/// than it, an object is unreachable because no root frame of any segment names it. A hint that disagrees
/// (an entry left out, or described as another kind, hides an object, a root or a dead record) stops the
/// pass before anything is written or deleted, and every later one while the store is open: the index is wrong
/// until the store is opened again.
extension HintFiles {
    /// Checks every hint open used that has not been checked yet, each by a scan of its segment: the first
    /// compaction or mark-sweep pass after the store is opened reads every segment open did not scan, as `verify` does,
    /// and later passes nothing. Call with the compaction lock held.
    /// - throws: ``LogStoreError`` with code `corruptHint` when a hint disagrees with its segment, now or
    ///   earlier since the store was opened (naming the hint file; the collector's finding of a pinned frame whose
    ///   hint entry left the flag out counts, see ``IndexState/repairPinned(_:_:)``).
    func checkEveryReplayedHint() throws(LogStoreError) {
        let (unchecked, wrong) = state.withLock { state in
            (
                state.segments.all.filter { $0.unverifiedHint != nil }.map { (file: $0.file, size: $0.size) },
                state.segments.all.filter(\.hintDisagrees).map(\.file.number).min()
            )
        }
        if let wrong {
            throw LogStoreError(
                .corruptHint,
                "the hint file this open rebuilt segment \(LogFormat.segmentFileName(wrong)) from disagrees with the"
                    + " segment, so the index may be wrong: nothing is compacted or collected until the store is"
                    + " opened again",
                file: directory + "/" + HintFile.fileName(wrong))
        }
        try checkReplayedHints(of: unchecked.sorted { $0.file.number < $1.file.number })
    }

    /// Checks the hint open used for each of `chosen` (the segments of a pass) that has not been checked
    /// yet, by a scan of the segment.
    /// - throws: ``LogStoreError`` with code `corruptHint`, naming the hint file, when one disagrees with
    ///   its segment (nothing is then compacted or collected until the store is opened again; the hint is deleted, and a
    ///   true one is written from the segment's frames by the next write of missing hints).
    func checkReplayedHints(of chosen: [(file: SegmentFile, size: UInt64)]) throws(LogStoreError) {
        for (file, size) in chosen {
            guard let checksum = state.withLock({ $0.segments[file.number]?.unverifiedHint }) else { continue }
            let path = directory + "/" + HintFile.fileName(file.number)
            let problem = hintProblem(at: path, checksum: checksum, segment: file, size: size)
            guard let problem else {
                state.withLock { $0.segments.recordHintTrue(file.number) }
                continue
            }
            state.withLock { $0.segments.recordHintDisagrees(file.number) }
            var removal = "it was deleted, and a new one is written from the segment's frames"
            do {
                try io.unlink(path)
                try io.syncDirectory(directory)
            } catch  where error.errno == ENOENT {
            } catch {
                removal = "it could not be deleted (\(error)); a new one written from the segment's frames replaces it"
            }
            throw LogStoreError(
                .corruptHint,
                "the hint file this open rebuilt segment \(LogFormat.segmentFileName(file.number)) from \(problem); "
                    + "nothing is compacted or collected while the store stays open, \(removal): open the store again",
                file: path)
        }
    }

    /// What is wrong with the hint at `path` (whose checksum at open was `checksum`) for the first `size`
    /// bytes of segment `file`, or nil when it describes them exactly.
    private func hintProblem(at path: String, checksum: UInt64, segment file: SegmentFile, size: UInt64) -> String? {
        let bytes: [UInt8]
        do {
            let fd = try io.open(path, flags: O_RDONLY | O_CLOEXEC)
            defer { io.close(fd) }
            bytes = try io.read(fd, count: Int(try io.size(fd, path: path)), at: 0, path: path)
        } catch {
            return "cannot be read again (\(error))"
        }
        guard let bytes = Self.plaintext(bytes, segment: file.number, encryption: encryption) else {
            return "does not open with the store's key"
        }
        guard bytes.count >= LogFormat.frameChecksumSize,
            bytes.withUnsafeBytes({ $0.loadUnaligned(fromByteOffset: $0.count - 8, as: UInt64.self) })
                == checksum.littleEndian
        else { return "was replaced since" }
        guard size <= UInt64(file.mappedLength),
            let made = HintWriter.hint(segment: file.number, bytes: file.bytes(count: Int(size)))
        else { return "belongs to a segment that is damaged or not sealed" }
        let agrees = bytes.withUnsafeBytes { hint in
            made.withUnsafeBytes { made in
                guard case .success(let used) = HintReader.open(hint), case .success(let truth) = HintReader.open(made)
                else { return false }
                return used.hasSameEntries(as: truth)
            }
        }
        return agrees ? nil : "disagrees with the segment"
    }
}
