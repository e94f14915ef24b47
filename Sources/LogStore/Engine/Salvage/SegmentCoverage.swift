@_spi(Engine) import LogStoreFormat

/// Which bytes of one segment a verifying load accounted for: its header, each committed frame and its
/// seal frame. What is left below ``uncommittedFrom`` and ``end`` is what damage took (``gaps()``), which
/// salvage reports as lost.
struct SegmentCoverage: Sendable {
    /// Where the segment's data ends: past it are only zeros the writer extended the file by.
    var end: UInt64
    /// Where a tail that was never committed begins (a torn tail, a torn group, zeros after the last
    /// frame, or 0 for a creation a crash interrupted): nothing there was acknowledged as durable.
    var uncommittedFrom: UInt64?
    /// Whether the segment must end with a seal frame (every segment but the append segment).
    var mustBeSealed = false
    /// Whether it ends with a valid seal frame.
    var isSealed = false
    /// Whether it lacks the seal frame it must end with: it was cut short (or lost frames at its end).
    var isCutShort: Bool { mustBeSealed && !isSealed }
    /// The accounted ranges, in the order they were added.
    private(set) var ranges: [Range<UInt64>] = [0..<UInt64(LogFormat.segmentHeaderSize)]

    init(end: UInt64, uncommittedFrom: UInt64? = nil) {
        self.end = end
        self.uncommittedFrom = uncommittedFrom
    }

    /// Accounts for the `length` bytes at `offset` (a committed frame).
    mutating func add(_ offset: Int, length: Int) {
        ranges.append(UInt64(offset)..<UInt64(offset + length))
    }

    /// The byte ranges below the end (and below an uncommitted tail) that nothing accounts for, in order.
    func gaps() -> [Range<UInt64>] {
        let limit = min(end, uncommittedFrom ?? end)
        var gaps: [Range<UInt64>] = []
        var position: UInt64 = 0
        for range in ranges.sorted(by: { $0.lowerBound < $1.lowerBound }) {
            if range.lowerBound > position, position < limit {
                gaps.append(position..<min(range.lowerBound, limit))
            }
            position = max(position, range.upperBound)
        }
        if position < limit { gaps.append(position..<limit) }
        return gaps
    }
}
