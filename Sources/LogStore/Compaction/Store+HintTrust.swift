@_spi(Engine) import LogStoreFormat
@_spi(Engine) import LogStoreSystem

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// A hint file speeds up an open, but never decides what compaction destroys. Open rebuilds a sealed
/// segment's records from its hint without reading the segment's frames; before a pass drops any frame
/// of such a segment (dead by the index), the hint is compared with the segment, entry for entry, as
/// `verify` compares them. One that disagrees (an entry left out hides an object, which the pass would
/// otherwise delete with the segment) stops the pass before anything is written or deleted.
extension Store {
    /// Checks the hint open used for each of `chosen` (the segments of a pass) that has not been checked
    /// yet, by a scan of the segment.
    /// - throws: ``LogStoreError`` with code `corruptHint`, naming the hint file, when one disagrees with
    ///   its segment (the segment is then never compacted in this session, and the hint is deleted so that
    ///   the next open scans the segment).
    func checkReplayedHints(of chosen: [(file: SegmentFile, size: UInt64)]) throws(LogStoreError) {
        for (file, size) in chosen {
            guard let checksum = state.withLock({ $0.segments[file.number]?.unverifiedHint }) else { continue }
            let path = directory + "/" + HintFile.fileName(file.number)
            let problem = hintProblem(at: path, checksum: checksum, segment: file, size: size)
            guard let problem else {
                state.withLock { $0.segments.update(file.number) { $0.unverifiedHint = nil } }
                continue
            }
            state.withLock { state in
                state.segments.update(file.number) { info in
                    info.unverifiedHint = nil
                    info.hasHint = false
                    info.hintDisagrees = true
                }
            }
            var removal = "it was deleted, so the next open scans the segment"
            do {
                try io.unlink(path)
                try io.syncDirectory(directory)
            } catch  where error.errno == ENOENT {
            } catch {
                removal = "it could not be deleted (\(error)): delete it, and the next open scans the segment"
            }
            throw LogStoreError(
                .corruptHint,
                "the hint file this open rebuilt segment \(LogFormat.segmentFileName(file.number)) from \(problem); "
                    + "nothing of the segment is compacted, \(removal): open the store again",
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
