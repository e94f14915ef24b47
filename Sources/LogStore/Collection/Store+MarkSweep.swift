import LogStoreFormat
import LogStoreSystem

/// What one mark-sweep pass found and freed.
public struct GarbageCollectionReport: Sendable, Equatable {
    /// Live objects at the pass's snapshot.
    public var liveAtSnapshot = 0
    /// Objects reachable from the roots (named roots and pinned objects) at the snapshot.
    public var reachable = 0
    /// Objects freed by this pass (cycles and other unreachable objects).
    public var collected = 0
    /// Unreachable objects spared because a batch named them after the snapshot.
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
    /// - throws: ``LogStoreError`` with code `closed`, `readOnly`, or what a write throws.
    @discardableResult
    public func collectGarbage() throws(LogStoreError) -> GarbageCollectionReport {
        guard !options.readOnly else { throw LogStoreError(.readOnly, "the store is open read-only", file: directory) }
        try checkOpen()
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
        for (position, isMarked) in marked.enumerated() {
            if isMarked { report.reachable += 1 } else { garbage.insert(snapshot.ids[position]) }
        }
        var ticket: UInt64?
        do throws(LogStoreError) {
            ticket = try queue.withLock { queue throws(LogStoreError) -> UInt64? in
                let touched = queue.markSweepTouched ?? []
                queue.markSweepTouched = nil
                let before = garbage.count
                snapshot.spare(touched, in: &garbage)
                report.spared = before - garbage.count
                guard !garbage.isEmpty, queue.failure == nil, !queue.closed else { return nil }
                let allocated = nextID.withLock { $0 }
                let sequence = try enqueue([], collecting: garbage.sorted(), allocatedBelow: allocated, into: &queue)
                report.collected = garbage.count
                return sequence
            }
        } catch {
            queue.withLock { $0.markSweepTouched = nil }
            throw error
        }
        if let ticket { try awaitDurable(ticket) }
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
        queue.withLock { queue in
            if recordingChanges { queue.markSweepTouched = [] }
            let chunks = queue.pending + queue.flushingChunks
            return state.withLock { GraphSnapshot(of: $0, chunks: chunks) }
        }
    }
}

/// The object graph at one log position, for tracing outside every lock.
struct GraphSnapshot: Sendable {
    /// Live ids in increasing order, and their entries.
    var ids: [UInt64] = []
    var entries: [IndexEntry] = []
    /// Pinned objects and the targets of named roots.
    var roots: [UInt64] = []
    var pendingReferences: [UInt64: [ObjectID]] = [:]
    let segments: [UInt32: SegmentFile]
    /// Position of id `first + k` in `ids`, for dense ids (`-1`: not live); empty for sparse ones.
    private var positions: [Int32] = []
    private var first: UInt64 = 0

    /// Copies the logical graph of `state` (call with the state locked; pending records' references
    /// are read from the writer's `chunks`). Call ``indexPositions()`` before tracing.
    init(of state: StoreState, chunks: [PendingChunk]) {
        segments = state.segments
        ids.reserveCapacity(state.index.count)
        entries.reserveCapacity(state.index.count)
        state.index.forEachLive { id, entry in
            ids.append(id)
            entries.append(entry)
            if entry.isPinned { roots.append(id) }
            if entry.isPending {
                pendingReferences[id] = Store.references(of: entry, segments: state.segments, chunks: chunks)
            }
        }
        roots.append(contentsOf: state.logicalRoots.values.map(\.rawValue))
    }

    /// Number of live objects reachable from the roots.
    func reachableCount() -> Int { mark().reduce(0) { $0 + ($1 ? 1 : 0) } }

    /// Builds the dense position table when ids are dense enough (call once `ids` is complete).
    mutating func indexPositions() {
        guard let low = ids.first, let high = ids.last, high - low < UInt64(4 * ids.count + 1024),
            ids.count < Int(Int32.max)
        else { return }
        first = low
        positions = [Int32](repeating: -1, count: Int(high - low) + 1)
        for (position, id) in ids.enumerated() { positions[Int(id - low)] = Int32(position) }
    }

    /// Calls `body` with each reference of the live object at `position` in `ids`.
    func forEachReference(at position: Int, _ body: (UInt64) -> Void) {
        if !pendingReferences.isEmpty, let pending = pendingReferences[ids[position]] {
            for target in pending { body(target.rawValue) }
            return
        }
        let entry = entries[position]
        guard let file = segments[entry.segment] else { return }
        FrameDecoder.forEachStoredReference(
            in: file.bytes(count: Int(entry.offset) + Int(entry.length)), at: Int(entry.offset), body)
    }

    /// Position of `id` in `ids`.
    func position(of id: UInt64) -> Int? {
        if !positions.isEmpty {
            guard id >= first, id - first < UInt64(positions.count) else { return nil }
            let position = positions[Int(id - first)]
            return position < 0 ? nil : Int(position)
        }
        var low = 0
        var high = ids.count
        while low < high {
            let middle = (low + high) / 2
            if ids[middle] < id { low = middle + 1 } else { high = middle }
        }
        return low < ids.count && ids[low] == id ? low : nil
    }

    /// Marks (by position) every live object reachable from the roots.
    func mark() -> [Bool] {
        var marked = [Bool](repeating: false, count: ids.count)
        var work: [Int] = roots.compactMap { position(of: $0) }
        while let position = work.popLast() {
            guard !marked[position] else { continue }
            marked[position] = true
            forEachReference(at: position) { target in
                if let next = self.position(of: target), !marked[next] { work.append(next) }
            }
        }
        return marked
    }

    /// Removes from `garbage` every id in `touched` and everything reachable from those within it.
    func spare(_ touched: Set<UInt64>, in garbage: inout Set<UInt64>) {
        var work = Array(touched.filter { garbage.contains($0) })
        while let id = work.popLast() {
            guard garbage.remove(id) != nil, let position = position(of: id) else { continue }
            forEachReference(at: position) { target in
                if garbage.contains(target) { work.append(target) }
            }
        }
    }
}
