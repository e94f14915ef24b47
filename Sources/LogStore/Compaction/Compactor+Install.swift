import Foundation
@_spi(Engine) import LogStoreFormat
@_spi(Engine) import LogStoreSystem
import Synchronization

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// The end of a pass, once its outputs are complete and synced: the index switches to them, then the
/// inputs leave the segment table, the manifest and the directory.
extension Compactor {
    /// Publishes each output and points the index at its copies: one edit adds the output with its
    /// counters, then edits of at most ``CompactionEdit/movesPerHold`` moves each, one hold of the index
    /// lock apiece, so readers wait little.
    func installOutputs(_ finished: [(CompactionOutput, SegmentFile)]) {
        for (output, file) in finished {
            var info = SegmentInfo(file: file)
            info.size = output.size
            info.liveBytes = 0
            info.retainedBytes = output.retainedBytes
            info.controlFrames = output.controlFrames
            info.minSequence = output.minSequence
            state.withLock { $0.apply(CompactionEdit(added: [info])) }
            var start = 0
            let moves = output.moves
            while start < moves.count {
                let end = min(start + CompactionEdit.movesPerHold, moves.count)
                state.withLock { state in
                    pipeline.readViews.release()
                    state.apply(CompactionEdit(moved: moves[start..<end]))
                }
                start = end
            }
        }
    }

    /// Forgets the inputs, rewrites the manifest without them and deletes their files, then lets go of
    /// them on a thread of its own (``release(_:)``); `inputs` is left empty, so that thread holds the
    /// last references.
    func retireInputs(_ inputs: inout [(file: SegmentFile, size: UInt64)]) throws(LogStoreError) {
        let files = inputs.map(\.file)
        try removeSegments(files)
        release(files)
        inputs.removeAll()
    }

    /// Writes the hint file of each output.
    func writeHints(of finished: [(CompactionOutput, SegmentFile)]) throws(LogStoreError) {
        for (output, file) in finished where try hints.write(for: file, size: output.size) {
            state.withLock { $0.segments.recordHintWritten(output.number) }
        }
    }

    /// Forgets the compacted segments (one edit) and deletes their files (readers still holding one keep it
    /// mapped until they let go).
    private func removeSegments(_ files: [SegmentFile]) throws(LogStoreError) {
        let infos = state.withLock { state in
            let infos = files.map { state.segments[$0.number] }
            // No plain read's view made before (which may hold the removed segments) is kept from now on;
            // those kept are let go after the lock, so that no segment is unmapped under it.
            pipeline.readViews.advance()
            state.apply(CompactionEdit(removed: files.map(\.number)))
            return infos
        }
        pipeline.readViews.release()
        var deleted = 0
        /// The segments not deleted go back into the table as they were, but with their live records
        /// counted as dead (the index points at the copies): the next pass deletes them. Until then they
        /// still count as holding older copies, so no tombstone is dropped too early.
        func keepUndeleted() {
            let kept = zip(files, infos).dropFirst(deleted).map { file, info -> SegmentInfo in
                guard var kept = info else { return SegmentInfo(file: file) }
                kept.liveBytes = 0
                kept.deadRecords = max(kept.deadRecords, 1)
                return kept
            }
            state.withLock { $0.apply(CompactionEdit(added: kept)) }
        }
        do throws(LogStoreError) {
            try pipeline.writeManifest()
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

    /// Lets go of compacted segments on a thread of its own at the lowest priority: the last reference
    /// closes a file the directory no longer names, and the kernel then frees its cached pages, which
    /// takes a while for big segments (about 0.3 s per GiB here) and need neither delay the pass nor
    /// take a processor from writers. Readers still holding one keep it.
    func release(_ files: [SegmentFile]) {
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
}
