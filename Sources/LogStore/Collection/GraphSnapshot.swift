@_spi(Engine) import LogStoreFormat
@_spi(Engine) import LogStoreSystem

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
    init(of state: IndexState, chunks: [PendingChunk]) {
        segments = state.segments.files
        ids.reserveCapacity(state.index.count)
        entries.reserveCapacity(state.index.count)
        state.index.forEachLive { id, entry in
            ids.append(id)
            entries.append(entry)
            if entry.isPinned { roots.append(id) }
            if entry.isPending {
                pendingReferences[id] = state.references(of: entry, pendingIn: chunks)
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
            in: file.bytes(count: Int(entry.offset) + Int(entry.length)), at: Int(entry.offset), format: file.format,
            body)
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
