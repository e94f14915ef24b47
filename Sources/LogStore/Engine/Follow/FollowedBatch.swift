@_spi(Engine) import LogStoreFormat

/// One committed batch that a store open read-only read from a writer's segment (``TailReader``): its
/// frames as values, copied out of the bytes they were read from.
struct FollowedBatch: Sendable {
    /// One frame of the batch: what the index and the batch's description need of it.
    struct Frame: Sendable {
        var kind: FrameKind
        var flags: FrameFlags
        var id: UInt64
        var typeTag: UInt32
        /// Where the frame is in its segment, and its length.
        var offset: UInt32
        var length: UInt32
        /// The root's name, for a `setRoot` or `removeRoot` frame whose payload is UTF-8.
        var rootName: String?
        /// The compression dictionary a put's payload names (0: none).
        var dictionary: UInt32
    }

    /// The batch's sequence number (its commit frame's).
    var sequence: UInt64
    /// The segment that holds it (a batch never spans segments).
    var segment: UInt32
    /// Its frames, in file order; the last one has the commit flag.
    var frames: [Frame]
    /// The offset just after its commit frame.
    var end: UInt64

    /// Whether a mark-sweep pass wrote it: nothing but collected tombstones (after an id reservation, maybe).
    /// A batch with operations of its own that frees objects frees them by reference counting.
    var isMarkSweep: Bool {
        var collected = false
        for frame in frames {
            switch frame.kind {
            case .reserveIDs: continue
            case .delete where frame.flags.contains(.collected): collected = true
            default: return false
            }
        }
        return collected
    }

    /// The compression dictionaries its puts name.
    var dictionaries: Set<UInt32> {
        Set(frames.lazy.filter { $0.dictionary != 0 }.map(\.dictionary))
    }

    /// The largest id an id reservation of the batch reserves below, and the largest id another frame
    /// names: what the id allocator of a store open read-only moves past.
    var ids: (reserved: UInt64, highest: UInt64) {
        var reserved: UInt64 = 0
        var highest: UInt64 = 0
        for frame in frames {
            if frame.kind == .reserveIDs {
                reserved = max(reserved, frame.id)
            } else {
                highest = max(highest, frame.id)
            }
        }
        return (reserved, highest)
    }
}

extension FollowedBatch.Frame {
    /// The values of `frame`, decoded from `bytes` (read from offset `base` of its segment).
    init(_ frame: DecodedFrame, in bytes: UnsafeRawBufferPointer, base: UInt64) {
        var rootName: String?
        if frame.kind == .setRoot || frame.kind == .removeRoot, let payload = FrameDecoder.payload(of: frame, in: bytes)
        {
            rootName = String(validating: payload, as: UTF8.self)
        }
        self.init(
            kind: frame.kind, flags: frame.flags, id: frame.id, typeTag: frame.typeTag,
            offset: UInt32(truncatingIfNeeded: base + UInt64(frame.offset)), length: UInt32(frame.length),
            rootName: rootName, dictionary: frame.dictionary)
    }
}
