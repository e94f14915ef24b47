/// A hint file: the frames of one sealed segment without their payloads, so open can rebuild the
/// index without reading the segment (Bitcask's idea). Specified in `Documentation/Format.md`, section 8.
///
/// ```
/// hint    := header entry* checksum
/// header  := "LOGSTHNT" u16 version, u16 header_size (48), u32 reserved, u64 segment_number,
///            u64 segment_size, u64 entry_count, u64 reserved
/// entry   := u8 kind, u8 flags, u16 reserved, u32 reference_count, u64 sequence, u64 id,
///            u32 type_tag, u32 offset, u32 length, u32 name_length, u64 reference*, u8 name*
/// checksum:= u64 XXH3-64 of every byte before it
/// ```
///
/// Version 2 (the hints of version-2 segments, section 11.3) keeps the header and the checksum and
/// writes each entry in varints, leaving out what the order of the frames implies:
/// ```
/// entry   := head sequence_delta id_delta type_tag length [offset] reference_count reference*
///            [name_length name]
/// head    := u8: bits 0–2 kind, bits 3–6 the frame's flags, bit 7 "offset follows"
/// sequence_delta, id_delta := varint zigzag(value − the previous entry's value; 0 before the first)
/// offset  := varint, only with bit 7; else the frame starts where the previous one ended (48 first)
/// reference := as in the frame: varint zigzag(reference − previous), the first from the id
/// name_length name := root frames only: varint, then the UTF-8 name
/// ```
///
/// The constants of the format. ``HintWriter`` is the one encoder, ``HintReader`` the one decoder.
package enum HintFile {
    /// One entry as values: the fields of one committed frame, its references and its root name.
    package struct Entry: Equatable, Sendable {
        package var kind: FrameKind
        package var flags: FrameFlags
        package var sequence: UInt64
        package var id: UInt64
        package var typeTag: UInt32
        package var offset: UInt32
        package var length: UInt32
        package var references: [ObjectID]
        /// The root name of `setRoot` / `removeRoot` frames.
        package var name: [UInt8]

        package init(
            kind: FrameKind, flags: FrameFlags, sequence: UInt64, id: UInt64, typeTag: UInt32, offset: UInt32,
            length: UInt32, references: [ObjectID], name: [UInt8]
        ) {
            self.kind = kind
            self.flags = flags
            self.sequence = sequence
            self.id = id
            self.typeTag = typeTag
            self.offset = offset
            self.length = length
            self.references = references
            self.name = name
        }
    }

    package static let magic: [UInt8] = Array("LOGSTHNT".utf8)
    /// The version of hints in the layout of version 1 (of version-1 segments).
    package static let version: UInt16 = 1
    /// The version of hints in the compact layout (of version-2 segments).
    package static let compactVersion: UInt16 = 2
    /// The smallest compact entry: the head and five one-byte varints.
    package static let compactMinimumEntrySize = 6
    package static let headerSize = 48
    /// Size of an entry's fixed part, before its references and name.
    package static let entrySize = 40
    package static let fileExtension = "hint"

    /// The smallest frame of a segment with hints of this layout.
    package static func minimumFrameSize(_ isCompact: Bool) -> Int {
        isCompact ? CompactFrame.minimumSize : LogFormat.minimumFrameSize
    }

    /// File name of the hint of segment `number` (`0000000001.hint`).
    package static func fileName(_ number: UInt32) -> String {
        String(LogFormat.segmentFileName(number).dropLast(LogFormat.segmentExtension.count)) + fileExtension
    }
}
