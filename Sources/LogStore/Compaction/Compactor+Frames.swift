@_spi(Engine) import LogStoreFormat
@_spi(Engine) import LogStoreSystem

/// Reading an input's frames: which survive, and checks that nothing live is lost with the segment.
extension Compactor {
    /// Sorts `records` (the live records of one segment) by offset and checks that each names a `put`
    /// frame of its object and length; false when one does not (the segment is then scanned instead).
    func sortAndCheck(
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
    func checkEveryLiveRecordIsKept(
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
    func committedFrames(of file: SegmentFile, bytes: UnsafeRawBufferPointer) throws(LogStoreError)
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
    func decide(
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
                    // record its hint hides (``HintFiles/checkEveryReplayedHint()`` has checked them all by now).
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
}
