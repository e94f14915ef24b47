@_spi(Engine) import LogStoreFormat
@_spi(Engine) import LogStoreSystem

/// A change to the durable state of a store, produced by a committed frame.
enum IndexEffect: Sendable {
    case put(id: UInt64, entry: IndexEntry)
    case delete(id: UInt64)
    case setRoot(String, ObjectID, sequence: UInt64)
    case removeRoot(String, sequence: UInt64)

    /// The effect of a committed frame found at `frame.offset` of `segment` (nil for frames that
    /// change nothing readers see, like id reservations, or root frames whose name is not UTF-8).
    static func of(_ frame: DecodedFrame, segment: UInt32, bytes: UnsafeRawBufferPointer) -> IndexEffect? {
        switch frame.kind {
        case .put:
            return .put(
                id: frame.id,
                entry: IndexEntry(
                    segment: segment, offset: UInt32(frame.offset), length: UInt32(frame.length),
                    typeTag: frame.typeTag, flags: frame.flags.contains(.pinned) ? IndexEntry.pinnedFlag : 0))
        case .delete:
            return .delete(id: frame.id)
        case .setRoot, .removeRoot:
            guard let payload = FrameDecoder.payload(of: frame, in: bytes),
                let name = String(validating: payload, as: UTF8.self)
            else { return nil }
            return frame.kind == .setRoot
                ? .setRoot(name, ObjectID(frame.id), sequence: frame.sequence)
                : .removeRoot(name, sequence: frame.sequence)
        case .reserveIDs, .seal:
            return nil
        }
    }
}

extension IndexEntry {
    func withFlags(_ flags: UInt32) -> IndexEntry {
        var copy = self
        copy.flags = flags
        return copy
    }

    func withIncoming(_ incoming: UInt32) -> IndexEntry {
        var copy = self
        copy.incoming = incoming
        return copy
    }
}
