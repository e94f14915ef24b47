import Foundation
@_spi(Engine) import LogStoreFormat
@_spi(Engine) import LogStoreSystem

/// Compaction: rewriting the live records of sealed segments that hold garbage into new segments,
/// then deleting the old ones.
///
/// A pass is crash-safe at every step: outputs are written under a temporary name and renamed into
/// place only when complete and synced; the index switches to the copies only after that; the old
/// segments leave the manifest, and then the directory, last. After a crash the copies and the originals
/// carry the same sequence numbers, so either wins on replay with the same result. A tombstone is dropped
/// only when no other segment can hold an older copy of its object (every other segment's lowest sequence
/// number is higher), so a deleted object never comes back.
///
/// It holds the narrow parts of the store it needs: the index lock, the commit pipeline (for its
/// compaction methods: sealing the tail, the busy segments, new segment numbers, the id reservation, and
/// the manifest writer), the hint files, the system calls and the options. The index and the segment table
/// change only through ``CompactionEdit``s. Every pass runs under ``Store/compactionLock``.
struct Compactor: Sendable {
    /// The index lock.
    let state: ConditionLock<IndexState>
    /// The writer: a pass takes segments from it, numbers its outputs with it and rewrites the manifest
    /// through it.
    let pipeline: CommitPipeline
    /// The hint files a pass checks before it decides anything, and writes for its outputs.
    let hints: HintFiles
    let io: SystemIO
    let options: StoreOptions
    /// The store's directory.
    let directory: String

    /// One pass over the sealed segments whose garbage share is at least `garbageRatio` (any garbage at
    /// all when 0): choose the inputs, copy their live records into outputs, install the outputs, retire
    /// the inputs. Call with the compaction lock held.
    ///
    /// - parameter rewritingAll: every sealed segment, garbage or not.
    /// - parameter limit: at most this many segments, those with the largest garbage share first (nil: every
    ///   one that qualifies).
    /// - throws: as ``Store/compact(progress:)``.
    func pass(
        garbageRatio: Double, rewritingAll: Bool, limit: Int?, progress: ((CompactionProgress) -> Void)?
    ) throws(LogStoreError) -> CompactionReport {
        let started = ContinuousClock.now
        var report = CompactionReport()
        var inputs = chooseInputs(garbageRatio: garbageRatio, rewritingAll: rewritingAll, limit: limit, report: &report)
        guard !inputs.isEmpty else {
            report.segmentsAfter = report.segmentsBefore
            report.bytesAfter = report.bytesBefore
            return report
        }
        // Before anything is written: what the index says of a segment whose records came from its hint
        // decides nothing until the hint is found true, and what is dropped from the chosen segments rests
        // on what the index says of every segment.
        try hints.checkEveryReplayedHint()
        var plan = plan(for: inputs)
        let finished = try copyLiveRecords(
            of: inputs, plan: &plan, started: started, report: &report, progress: progress)
        // A replica pass may have started to hold a chosen segment while the records were copied (see
        // `Store.replicate(to:)`): then the pass is dropped, its outputs deleted, and nothing changes. The
        // check, the install and the deletion of the inputs happen under the lock a replica pass links under.
        let history = HistoryFolder(store: directory, io: io)
        let compacted = inputs.count
        // A folder locked for long (by a process outside LogStore) drops the pass as a hold would.
        let attempt = Result { () throws(LogStoreError) -> Bool in
            try history.withHoldLock(required: false) { () throws(LogStoreError) -> Bool in
                let heldNow = history.heldSegments(includingMoments: false)
                guard heldNow.isDisjoint(with: inputs.map(\.file.number)) else {
                    report.segmentsHeld += heldNow.intersection(inputs.map(\.file.number)).count
                    return false
                }
                installOutputs(finished)
                try retireInputs(&inputs)
                return true
            }
        }
        let installed: Bool
        switch attempt {
        case .success(let done): installed = done
        case .failure(let error) where error.code == .locked: installed = false
        case .failure(let error): throw error
        }
        guard installed else {
            for (_, file) in finished { try? io.unlink(file.path) }
            if !finished.isEmpty { try? io.syncDirectory(directory) }
            release(finished.map(\.1))
            report.segmentsAfter = report.segmentsBefore
            report.bytesAfter = report.bytesBefore
            return report
        }
        try writeHints(of: finished)
        report.segmentsCompacted = compacted
        let (segments, bytes) = try segmentFigures()
        report.segmentsAfter = segments
        report.bytesAfter = bytes
        let elapsed = ContinuousClock.now - started
        report.seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
        return report
    }

    /// Seals the segment being written when `shouldSeal` says so (given its number); the next batch starts
    /// a new segment.
    func sealActiveSegment(when shouldSeal: (UInt32) -> Bool) throws(LogStoreError) {
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

    /// The number of segments and their bytes, for the "after" figures of a report.
    /// - throws: ``LogStoreError`` with code `closed` when the store was closed meanwhile.
    private func segmentFigures() throws(LogStoreError) -> (Int, UInt64) {
        let figures = state.withLock { state -> (Int, UInt64)? in
            state.isOpen ? (state.segments.count, state.segments.all.reduce(0) { $0 + $1.size }) : nil
        }
        guard let figures else { throw LogStoreError(.closed, "the store is closed", file: directory) }
        return figures
    }
}
