/// Every on-disk constant of the LogStore format, in one place.
///
/// The format is specified in `Documentation/Format.md`; keep the two in step. All integers on
/// disk are little-endian.
package enum LogFormat {
    /// The 8 bytes every segment file starts with: `LOGSTSEG`.
    package static let segmentMagic: [UInt8] = Array("LOGSTSEG".utf8)
    /// The segment format version this code writes and the highest it reads (it reads 1 too).
    package static let formatVersion: UInt16 = 2
    /// Size of the segment header, including its trailing checksum.
    package static let segmentHeaderSize = 48
    /// Size of the fixed part of a frame, before the reference list.
    package static let frameHeaderSize = 36
    /// Size of the trailing XXH3-64 checksum of a frame.
    package static let frameChecksumSize = 8
    /// Size of one reference in a frame's reference list.
    package static let referenceSize = 8
    /// Smallest possible frame: header, no references, empty payload, checksum.
    package static let minimumFrameSize = frameHeaderSize + frameChecksumSize
    /// File name extension of segment files (`0000000001.seg`).
    package static let segmentExtension = "seg"
    /// Digits of the zero-padded segment number in a segment file name.
    package static let segmentNameDigits = 10
    /// Name of the lock file in the store directory.
    package static let lockFileName = "LOCK"
    /// Infix of the side files that keep the bytes cut off a torn tail (`N.seg.torn-TIME`).
    package static let tornSuffix = ".torn-"
    /// How many ids one `reserveIDs` frame reserves ahead of the allocator.
    package static let idReservationBlock: UInt64 = 64
    /// The largest object id: 2^63 − 1. Valid ids are 1 … `maxObjectID`; a `reserveIDs` frame may name
    /// one more (`maxObjectID + 1`, "every id reserved"). Half of the 64-bit range, so that arithmetic on
    /// ids and reservations (`id + 1`, `id + idReservationBlock`) can never overflow, and ids fit a
    /// signed 64-bit integer in other languages and tools.
    package static let maxObjectID: UInt64 = (1 << 63) - 1
    /// The largest sequence number: 2^63 − 1. Valid sequence numbers are 0 … `maxSequence`.
    package static let maxSequence: UInt64 = (1 << 63) - 1
    /// Segment header flag: the segment is a compaction output, written completely under a temporary
    /// name and renamed into place; the writer never appends to it, so it never has a torn tail.
    package static let compactedSegmentFlag: UInt32 = 1 << 0
    /// Segment header flag: the segment's frames are in the sealed layout, each batch's references and
    /// payloads encrypted with the store's key (Format.md, section 13).
    package static let encryptedSegmentFlag: UInt32 = 1 << 1
    /// Room kept free at the end of a segment for its seal frame: a version-1 seal (the longest plain one)
    /// and the nonce and tag of an encrypted segment's.
    package static let sealRoom = minimumFrameSize + CompactFrame.sealSize
    /// Every segment header flag this version knows.
    package static let knownSegmentFlags: UInt32 = compactedSegmentFlag | encryptedSegmentFlag
    /// Suffix of a compaction output while it is being written; leftovers are deleted on open.
    package static let compactingSuffix = ".compacting"
    /// Suffix of a hint file while it is being written; leftovers are deleted on open.
    package static let writingSuffix = ".writing"
    /// Dictionary id meaning "no dictionary"; the only one version 1 accepts.
    package static let noDictionary: UInt16 = 0

    /// Zeros prefilled ahead of the writer (the page-cache prefill of small durable commits) start this
    /// far past the end of the last commit.
    package static let prefillGap: UInt64 = 64 << 10
    /// Zeros prefilled ahead of the writer reach at most this far past the end of the last commit (plus
    /// one ``prefillChunk``): past it a crash leaves only holes or nothing. Recovery's torn-group rule
    /// (Format.md, "Torn groups") rests on this bound.
    package static let prefillWindow: UInt64 = 1 << 20
    /// The piece in which zeros are prefilled.
    package static let prefillChunk: UInt64 = 64 << 10

    /// File name of segment `number`.
    package static func segmentFileName(_ number: UInt32) -> String {
        let digits = String(number)
        return String(repeating: "0", count: max(0, segmentNameDigits - digits.count)) + digits + "."
            + segmentExtension
    }

    /// The segment number in a segment file name, or nil when the name is not one.
    package static func segmentNumber(fromFileName name: String) -> UInt32? {
        let suffix = "." + segmentExtension
        guard name.hasSuffix(suffix) else { return nil }
        let stem = name.dropLast(suffix.count)
        guard stem.count == segmentNameDigits, stem.utf8.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }) else { return nil }
        return UInt32(stem)
    }
}

/// The kind byte of a frame. (Engine SPI, `public` so that the engine's scans inline its comparisons.)
@_spi(Engine) public enum FrameKind: UInt8, Sendable {
    /// Stores (or replaces) an object record.
    case put = 1
    /// A tombstone: the object is deleted.
    case delete = 2
    /// Sets a named root; the payload is the UTF-8 name, the object id the target.
    case setRoot = 3
    /// Removes a named root; the payload is the UTF-8 name.
    case removeRoot = 4
    /// Reserves object ids below the frame's object id, so they are never handed out again.
    case reserveIDs = 5
    /// Ends a finished segment: its object id is its own offset, so a sealed segment that lost frames
    /// at its end (truncated exactly at a frame boundary) is told from a complete one.
    case seal = 6

    /// The kind of byte `byte`, or nil (inlinable, unlike `init(rawValue:)`).
    @inlinable public init?(byte: UInt8) {
        switch byte {
        case 1: self = .put
        case 2: self = .delete
        case 3: self = .setRoot
        case 4: self = .removeRoot
        case 5: self = .reserveIDs
        case 6: self = .seal
        default: return nil
        }
    }
}

/// The flag bits of a frame.
///
/// Engine SPI, `public` so that the engine inlines its tests of a flag.
@_spi(Engine) public struct FrameFlags: OptionSet, Sendable {
    /// The flag byte.
    public let rawValue: UInt8
    /// The flags of byte `rawValue`.
    @inlinable public init(rawValue: UInt8) { self.rawValue = rawValue }
    /// The stored payload is an LZ4 block; `originalLength` is its decompressed size.
    package static let compressed = FrameFlags(rawValue: 1 << 0)
    /// This frame ends a batch: it and every frame since the previous commit become visible together.
    package static let commit = FrameFlags(rawValue: 1 << 1)
    /// On a put: the object is pinned, a root of its own that is never collected.
    package static let pinned = FrameFlags(rawValue: 1 << 2)
    /// On a delete: the tombstone was written by the garbage collector, not by an explicit delete.
    package static let collected = FrameFlags(rawValue: 1 << 3)
    /// Every bit version 1 knows; any other bit set makes the frame invalid.
    package static let known: FrameFlags = [.compressed, .commit, .pinned, .collected]
}

/// The documented limits of a store.
public enum LogStoreLimits {
    /// The largest payload a record may have: 16 MiB.
    public static let maxPayloadSize = 16 << 20
    /// The most references one record may list: 65,536.
    public static let maxReferenceCount = 1 << 16
    /// The longest root name, in UTF-8 bytes: 1,024.
    public static let maxRootNameLength = 1024
    /// The largest segment size option: 2 GiB (offsets in the index are 32-bit).
    public static let maxSegmentSize = 1 << 31
    /// The smallest segment size option: 64 KiB.
    public static let minSegmentSize = 1 << 16
    /// The largest object id: 2^63 − 1 (ids are 1 … `maxObjectID`). A put, root, import or
    /// ``Store/reserveIDs(through:)`` of a larger id is refused with `idOutOfRange`; a frame on disk
    /// that names one is corruption.
    public static let maxObjectID = ObjectID(LogFormat.maxObjectID)
    /// The largest id ``Store/reserveIDs(through:)`` moves the id allocator to (and so the largest new id
    /// an import may bring): 2^62. Reserving a larger id that is not reserved already (not below the next
    /// id to hand out) is refused with `idOutOfRange`, so an id brought in from outside always leaves at
    /// least 2^62 − 1 ids for ``Store/newID()`` to hand out, and never pushes the allocator to the end of
    /// the id space, after which every write of a new object would fail with `exhausted`.
    public static let maxReservableID = ObjectID(1 << 62)
    /// The largest batch sequence number: 2^63 − 1. A frame on disk with a larger one is corruption.
    public static let maxSequence = LogFormat.maxSequence
}
