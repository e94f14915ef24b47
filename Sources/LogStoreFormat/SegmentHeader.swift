/// The 48-byte header at the start of every segment file.
package struct SegmentHeader: Equatable, Sendable {
    package var formatVersion: UInt16 = LogFormat.formatVersion
    package var segmentNumber: UInt32
    /// Creation time, milliseconds since 1970.
    package var createdAtMilliseconds: UInt64
    /// Header flags (``LogFormat/compactedSegmentFlag``).
    package var flags: UInt32 = 0
    /// Version 2: the sequence number the frames' sequence numbers are deltas from (0 in version 1).
    package var baseSequence: UInt64 = 0

    package init(
        formatVersion: UInt16 = LogFormat.formatVersion, segmentNumber: UInt32, createdAtMilliseconds: UInt64,
        flags: UInt32 = 0, baseSequence: UInt64 = 0
    ) {
        self.formatVersion = formatVersion
        self.segmentNumber = segmentNumber
        self.createdAtMilliseconds = createdAtMilliseconds
        self.flags = flags
        self.baseSequence = formatVersion >= 2 ? baseSequence : 0
    }

    /// Whether the compactor wrote this segment (complete before it was named; never appended to).
    package var isCompactionOutput: Bool { flags & LogFormat.compactedSegmentFlag != 0 }

    /// Whether the segment's batches are encrypted (the sealed frame layout).
    package var isEncrypted: Bool { flags & LogFormat.encryptedSegmentFlag != 0 }

    /// The header's bytes.
    package func encoded() -> [UInt8] {
        var bytes = [UInt8](repeating: 0, count: LogFormat.segmentHeaderSize)
        bytes.withUnsafeMutableBytes { raw in
            guard let base = raw.baseAddress else { return }
            for (index, byte) in LogFormat.segmentMagic.enumerated() { raw[index] = byte }
            base.writeLE(formatVersion, at: 8)
            base.writeLE(UInt16(LogFormat.segmentHeaderSize), at: 10)
            base.writeLE(flags, at: 12)
            base.writeLE(UInt64(segmentNumber), at: 16)
            base.writeLE(createdAtMilliseconds, at: 24)
            base.writeLE(baseSequence, at: 32)
            base.writeLE(Checksum.xxh3(UnsafeRawPointer(base), count: 40), at: 40)
        }
        return bytes
    }

    /// Why a header is not valid.
    package enum Problem: Error, Equatable {
        case truncated(Int)
        case badMagic
        case badChecksum
        case unsupportedVersion(UInt16)
        case invalidField(String)

        package var reason: String {
            switch self {
            case .truncated(let size): return "segment header truncated (\(size) of 48 bytes)"
            case .badMagic: return "not a LogStore segment (wrong magic)"
            case .badChecksum: return "segment header checksum mismatch"
            case .unsupportedVersion(let version): return "unsupported segment format version \(version)"
            case .invalidField(let what): return what
            }
        }
    }

    /// Decodes and checks a header from the first bytes of a segment.
    package static func decode(_ bytes: UnsafeRawBufferPointer) -> Result<SegmentHeader, Problem> {
        guard let base = bytes.baseAddress, bytes.count >= LogFormat.segmentHeaderSize else {
            return .failure(.truncated(bytes.count))
        }
        guard bytes.prefix(8).elementsEqual(LogFormat.segmentMagic) else { return .failure(.badMagic) }
        let stored = base.readLE(UInt64.self, at: 40)
        guard stored == Checksum.xxh3(base, count: 40) else { return .failure(.badChecksum) }
        let version = base.readLE(UInt16.self, at: 8)
        guard version >= 1, version <= LogFormat.formatVersion else {
            return .failure(.unsupportedVersion(version))
        }
        let headerSize = base.readLE(UInt16.self, at: 10)
        guard Int(headerSize) == LogFormat.segmentHeaderSize else {
            return .failure(.invalidField("header size \(headerSize)"))
        }
        let number = base.readLE(UInt64.self, at: 16)
        guard number > 0, number <= UInt64(UInt32.max) else {
            return .failure(.invalidField("segment number \(number)"))
        }
        let flags = base.readLE(UInt32.self, at: 12)
        guard flags & ~LogFormat.knownSegmentFlags == 0 else {
            return .failure(.invalidField("unknown header flags 0x\(String(flags, radix: 16))"))
        }
        guard flags & LogFormat.encryptedSegmentFlag == 0 || version >= 2 else {
            return .failure(.invalidField("an encrypted version-1 segment"))
        }
        return .success(
            SegmentHeader(
                formatVersion: version,
                segmentNumber: UInt32(number),
                createdAtMilliseconds: base.readLE(UInt64.self, at: 24),
                flags: flags,
                baseSequence: base.readLE(UInt64.self, at: 32)
            ))
    }
}
