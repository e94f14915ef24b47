@_spi(Engine) import LogStoreFormat
@_spi(Engine) import LogStoreSystem

/// What one mark-sweep pass found and freed.
public struct GarbageCollectionReport: Sendable, Equatable {
    /// Live objects at the pass's snapshot.
    public var liveAtSnapshot = 0
    /// Objects reachable from the roots (named roots and pinned objects) at the snapshot.
    public var reachable = 0
    /// Objects freed by this pass (cycles and other unreachable objects).
    public var collected = 0
    /// Unreachable objects spared because a batch named them after the snapshot, or because their frames
    /// on disk say they are pinned (or cannot be read), with everything they reach.
    public var spared = 0
    /// Wall-clock duration in seconds.
    public var seconds: Double = 0
}

/// The mark-sweep pass: frees what reference counting cannot — cycles (A ↔ B, rings, self-references)
/// and objects that were never referenced — by tracing from the roots.
///
/// The pass traces a snapshot taken at one log position, with writers running meanwhile. From that
/// moment the writer records every id a batch puts, references or names as a root; the sweep spares
/// those and everything they reach, so nothing written, re-linked or newly referenced after the
/// snapshot is ever freed. The sweep is one atomic batch of tombstones; the writer's integrity check
/// refuses it (and nothing is freed) if any freed object were still referenced.
extension Store {
    /// Traces from the roots and frees every unreachable object now.
    ///
    /// The first pass after the store is opened first compares every hint file the open used with its segment (a read
    /// of those segments, as `verify` does): the roots and objects the index took from a hint decide
    /// nothing until it is found true.
    /// - throws: ``LogStoreError`` with code `closed`, `readOnly`, `corruptHint` (naming the hint file) when
    ///   a hint the open used disagrees with its segment (nothing is freed until the store is opened again; a true hint
    ///   is written in its place), or what a write throws.
    @discardableResult
    public func collectGarbage() throws(LogStoreError) -> GarbageCollectionReport {
        guard !options.readOnly else { throw LogStoreError(.readOnly, "the store is open read-only", file: directory) }
        try checkWritable()
        // Under the compaction lock: a pass may delete a hint (with its segment) once it checked it.
        try withCompactionLock { () throws(LogStoreError) in try hints.checkEveryReplayedHint() }
        return try sweep(takeSnapshot(recordingChanges: true))
    }

    /// The second half of ``collectGarbage()``: traces `snapshot` and frees what it finds unreachable,
    /// sparing whatever batches touched since the snapshot was taken.
    func sweep(_ snapshot: GraphSnapshot) throws(LogStoreError) -> GarbageCollectionReport {
        let started = ContinuousClock.now
        var report = GarbageCollectionReport()
        let marked = snapshot.mark()
        report.liveAtSnapshot = snapshot.ids.count
        var garbage = Set<UInt64>()
        var unmarked: [Int] = []
        for (position, isMarked) in marked.enumerated() {
            if isMarked { report.reachable += 1 } else { unmarked.append(position) }
        }
        // Where an entry's flag may come from a hint not found true, the frame decides: a durable object
        // whose frame is pinned is a root after all, and one whose frame cannot be read is not freed.
        // Other entries carry their frame's flag (``IndexState/flagMayComeFromHint(_:)``).
        let untrusted = state.withLock { state in
            Set(state.segments.numbers.filter { state.flagMayComeFromHint($0) })
        }
        var spared: [UInt64] = []
        var pinned: [Int] = []
        for position in unmarked {
            let id = snapshot.ids[position]
            garbage.insert(id)
            let entry = snapshot.entries[position]
            guard !entry.isPending, entry.segment != 0, untrusted.contains(entry.segment) else { continue }
            let verdict = snapshot.segments[entry.segment].flatMap { IndexState.framePinned(id, entry, in: $0) }
            if verdict != false { spared.append(id) }
            if verdict == true { pinned.append(position) }
        }
        if !spared.isEmpty {
            let before = garbage.count
            snapshot.spare(Set(spared), in: &garbage)
            report.spared += before - garbage.count
            state.withLock { state in
                for position in pinned { state.repairPinned(snapshot.ids[position], snapshot.entries[position]) }
            }
        }
        let swept = try pipeline.sweep { touched in
            let before = garbage.count
            snapshot.spare(touched, in: &garbage)
            report.spared += before - garbage.count
            return garbage.sorted()
        }
        if swept { report.collected = garbage.count }
        let elapsed = ContinuousClock.now - started
        report.seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
        return report
    }

    /// Compares every maintained incoming count with a recount of the logical graph; returns one line
    /// per difference (empty when they agree). For tests and `verify`.
    func auditReferenceCounts() -> [String] {
        let snapshot = takeSnapshot(recordingChanges: false)
        var counts: [UInt64: UInt32] = [:]
        for position in snapshot.ids.indices {
            snapshot.forEachReference(at: position) { counts[$0, default: 0] &+= 1 }
        }
        let roots = state.withLock { $0.logicalRoots }
        for target in roots.values { counts[target.rawValue, default: 0] &+= 1 }
        var problems: [String] = []
        for (position, id) in snapshot.ids.enumerated() where snapshot.entries[position].incoming != counts[id] ?? 0 {
            problems.append("object \(id): count \(snapshot.entries[position].incoming), recount \(counts[id] ?? 0)")
        }
        return problems
    }

    /// The number of objects reachable from the roots now (a mark without a sweep).
    /// - throws: ``LogStoreError`` with code `closed`.
    public func reachableObjectCount() throws(LogStoreError) -> Int {
        try checkOpen()
        return takeSnapshot(recordingChanges: false).reachableCount()
    }

    /// Copies what tracing needs, at one log position: every live object's references (pending ones
    /// resolved from the writer's buffers), the roots, and the segments, kept mapped while tracing.
    func takeSnapshot(recordingChanges: Bool) -> GraphSnapshot {
        var snapshot = copyGraph(recordingChanges: recordingChanges)
        snapshot.indexPositions()  // outside the locks
        return snapshot
    }

    private func copyGraph(recordingChanges: Bool) -> GraphSnapshot {
        pipeline.withPendingChunks(observing: recordingChanges) { chunks in
            state.withLock { GraphSnapshot(of: $0, chunks: chunks) }
        }
    }
}
