@_spi(Engine) import LogStoreFormat
@_spi(Engine) import LogStoreSystem

/// Copying the live records of a pass's inputs into outputs.
extension Compactor {
    /// Copies every frame of `inputs` that survives into new outputs, each finished (complete, synced and
    /// renamed into place) before this returns; nothing in the index or the segment table changes. On
    /// failure every output is removed again.
    ///
    /// An input without tombstones and root frames is copied from the index alone (its live records
    /// sorted by offset); any other is scanned and its frames decided one by one.
    /// - returns: the outputs, with their files.
    func copyLiveRecords(
        of inputs: [(file: SegmentFile, size: UInt64)], plan: inout CompactionPlan, started: ContinuousClock.Instant,
        report: inout CompactionReport, progress: ((CompactionProgress) -> Void)?
    ) throws(LogStoreError) -> [(CompactionOutput, SegmentFile)] {
        var done: UInt64 = 0
        var outputs: [CompactionOutput] = []
        var finished: [(CompactionOutput, SegmentFile)] = []
        do throws(LogStoreError) {
            for (file, size) in inputs {
                let bytes = file.bytes(count: Int(size))
                /// Copies one frame into the current output (starting one when needed).
                func copy(_ frame: DecodedFrame, _ move: (id: UInt64, from: IndexEntry)?) throws(LogStoreError) {
                    let room = UInt64(CompactionOutput.bound(of: frame, plan.recompression))
                    if outputs.last.map({ $0.size + room > UInt64(options.segmentSize) }) ?? true {
                        if let full = outputs.last { finished.append((full, try finish(full))) }
                        let remaining = plan.liveTotal > report.bytesCopied ? plan.liveTotal - report.bytesCopied : 0
                        let output = try startOutput(
                            expectedSize: min(UInt64(options.segmentSize), remaining + (1 << 20)),
                            baseSequence: plan.outputBase, recompression: plan.recompression)
                        output.reserveMoves(
                            min(plan.indexOnlyRecords, options.segmentSize / LogFormat.minimumFrameSize))
                        try step(output.temporaryPath) { () throws(SystemError) in
                            try output.appendReservation(through: plan.reservation.0, sequence: plan.reservation.1)
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
                var records = plan.live.removeValue(forKey: file.number) ?? []
                if plan.indexOnly.contains(file.number), sortAndCheck(&records, in: bytes, format: file.format) {
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
                    let kept = decide(frames, in: file.number, bytes: bytes, chosen: plan.numbers, report: &report)
                    try checkEveryLiveRecordIsKept(records, kept: kept, file: file)
                    for (frame, move) in kept { try copy(frame, move) }
                }
                done += size
                progress?(CompactionProgress(bytesDone: done, bytesTotal: plan.total))
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
        return finished
    }
}
