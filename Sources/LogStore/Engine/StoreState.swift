/// A change to the visible state of a store, produced by a committed frame.
enum IndexEffect: Sendable {
    case put(id: UInt64, entry: IndexEntry)
    case delete(id: UInt64)
    case setRoot(String, ObjectID, sequence: UInt64)
    case removeRoot(String, sequence: UInt64)
}

/// What readers see: the index, the open segments, the roots and the counters kept beside them.
///
/// Lives inside the store's `Mutex`; writers change it only by applying the effects of whole,
/// written batches, so every reader sees a state between two batches.
struct StoreState: Sendable {
    var index = ObjectIndex()
    var segments: [UInt32: SegmentFile] = [:]
    /// Bytes written to each segment (header included).
    var segmentSizes: [UInt32: UInt64] = [:]
    /// Bytes of each segment that hold the newest record of a live object.
    var liveBytes: [UInt32: UInt64] = [:]
    var roots: [String: ObjectID] = [:]
    /// Sequence number of the newest frame that set or removed each root name (removed names too).
    var rootSequences: [String: UInt64] = [:]
    /// Lowest sequence number of a frame in each segment (for deciding when a tombstone may go).
    var segmentMinSequence: [UInt32: UInt64] = [:]
    /// Number of dead (superseded or deleted) put records in each segment: a segment without any
    /// cannot hold an older copy of a deleted object.
    var deadRecords: [UInt32: Int] = [:]
    var typeCounts: [UInt32: Int] = [:]
    var isOpen = true

    /// Applies one effect.
    mutating func apply(_ effect: IndexEffect) {
        switch effect {
        case .put(let id, let entry):
            if let old = index.set(id, entry) { forget(old) }
            typeCounts[entry.typeTag, default: 0] += 1
            liveBytes[entry.segment, default: 0] += UInt64(entry.length)
        case .delete(let id):
            if let old = index.remove(id) { forget(old) }
        case .setRoot(let name, let id, let sequence):
            roots[name] = id
            rootSequences[name] = sequence
        case .removeRoot(let name, let sequence):
            roots[name] = nil
            rootSequences[name] = sequence
        }
    }

    private mutating func forget(_ old: IndexEntry) {
        let remaining = typeCounts[old.typeTag, default: 1] - 1
        typeCounts[old.typeTag] = remaining > 0 ? remaining : nil
        liveBytes[old.segment, default: UInt64(old.length)] -= UInt64(old.length)
        deadRecords[old.segment, default: 0] += 1
    }

    /// The effect of a committed frame found at `frame.offset` of `segment` (nil for frames that
    /// change nothing readers see, like id reservations, or root frames whose name is not UTF-8).
    static func effect(of frame: DecodedFrame, segment: UInt32, bytes: UnsafeRawBufferPointer) -> IndexEffect? {
        switch frame.kind {
        case .put:
            return .put(
                id: frame.id,
                entry: IndexEntry(
                    segment: segment, offset: UInt32(frame.offset), length: UInt32(frame.length),
                    typeTag: frame.typeTag))
        case .delete:
            return .delete(id: frame.id)
        case .setRoot, .removeRoot:
            guard let payload = FrameDecoder.payload(of: frame, in: bytes),
                let name = String(validating: payload, as: UTF8.self)
            else { return nil }
            return frame.kind == .setRoot
                ? .setRoot(name, ObjectID(frame.id), sequence: frame.sequence)
                : .removeRoot(name, sequence: frame.sequence)
        case .reserveIDs:
            return nil
        }
    }

    /// The sequence number of the frame an index entry points at.
    func sequence(of entry: IndexEntry) -> UInt64? {
        guard let file = segments[entry.segment], Int(entry.offset) + 16 <= file.mappedLength else { return nil }
        return file.base.readLE(UInt64.self, at: Int(entry.offset) + 8)
    }

    /// Points a live object at an identical copy of its record (compaction).
    mutating func relocate(_ id: UInt64, from old: IndexEntry, to new: IndexEntry) {
        index.set(id, new)
        liveBytes[old.segment, default: UInt64(old.length)] -= UInt64(old.length)
        liveBytes[new.segment, default: 0] += UInt64(new.length)
    }
}
