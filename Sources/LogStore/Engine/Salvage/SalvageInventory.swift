@_spi(Engine) import LogStoreFormat
@_spi(Engine) import LogStoreSystem

/// A frame that damage kept out of a salvaged copy, known from its segment's hint file or read intact
/// from the damaged bytes (a frame whose batch lost other frames).
struct LostFrame: Sendable {
    var kind: FrameKind
    var id: UInt64
    var sequence: UInt64
    var typeTag: UInt32
    /// The root name of a `setRoot` or `removeRoot` frame.
    var name: String?
    var file: String
    var offset: UInt64
}

/// What the damaged bytes of a store held: every range of a segment that no committed frame accounts for
/// (``SegmentCoverage``), and the frames known to have been there.
///
/// A segment's hint file, when it is intact and names the segment, lists every frame the segment held
/// when it was sealed, so every frame of a gap is known. Without one, the gap is read frame by frame: an
/// intact frame (its checksum holds) is known; bytes where none can be read are reported as unknown.
struct SalvageInventory {
    var ranges: [SalvageReport.DamagedRange] = []
    var frames: [LostFrame] = []
    var notes: [String] = []

    /// - parameter loaded: a verifying load of `directory` (``StoreLoader/Mode/verify``).
    init(directory: String, loaded: StoreLoader.Loaded, io: SystemIO) {
        var present: [UInt32] = []
        if let names = try? io.listDirectory(directory) {
            present = names.compactMap(LogFormat.segmentNumber(fromFileName:)).sorted()
        } else {
            present = loaded.segmentNumbers
        }
        for number in present {
            let path = directory + "/" + LogFormat.segmentFileName(number)
            let coverage = loaded.coverage[number]
            if let coverage, let from = coverage.uncommittedFrom, from < coverage.end {
                notes.append(
                    "\(path): \(coverage.end - from) bytes from offset \(from) were never committed (a crash left "
                        + "them); not copied")
            }
            if let coverage, coverage.gaps().isEmpty, !coverage.isCutShort, loaded.expectedSizes[number] == nil,
                !Self.hintDescribesMore(number, directory: directory, io: io, than: coverage.end)
            {
                continue
            }
            let bytes: [UInt8]
            do {
                bytes = try io.readWholeFile(path, limit: UInt64(UInt32.max))
            } catch {
                let hint = Self.hintEntries(number, directory: directory, io: io, atLeast: 0)
                addMissing(path, hint: hint, reason: "cannot read the segment: \(error)", loaded: loaded)
                continue
            }
            let size = UInt64(bytes.count)
            let gaps = coverage?.gaps() ?? (bytes.isEmpty ? [] : [0..<size])
            let hint = Self.hintEntries(number, directory: directory, io: io, atLeast: size)
            for gap in gaps {
                add(gap, of: bytes, path: path, hint: hint, loaded: loaded)
            }
            addCut(path, size: size, hint: hint, coverage: coverage, expected: loaded.expectedSizes[number])
        }
        for number in loaded.missingSegments {
            let path = directory + "/" + LogFormat.segmentFileName(number)
            let hint = Self.hintEntries(number, directory: directory, io: io, atLeast: 0)
            addMissing(
                path, hint: hint, reason: "the segment manifest lists this segment, which is missing", loaded: loaded)
        }
    }

    /// A segment that cannot be read at all: its frames from its hint when there is one.
    private mutating func addMissing(
        _ path: String, hint: (entries: [HintFile.Entry], size: UInt64)?, reason: String, loaded: StoreLoader.Loaded
    ) {
        for entry in hint?.entries ?? [] { append(entry, file: path) }
        ranges.append(
            .init(file: path, start: 0, end: hint?.size ?? 0, isIdentified: hint != nil, reason: reason))
    }

    /// What a segment cut short lost past its end: known from its hint, or up to the size its last clean
    /// close recorded (contents unknown), or else an empty range at the end (how much followed is unknown).
    private mutating func addCut(
        _ path: String, size: UInt64, hint: (entries: [HintFile.Entry], size: UInt64)?, coverage: SegmentCoverage?,
        expected: UInt64?
    ) {
        let reason = "the segment is shorter than it was written (cut short)"
        if let hint, hint.size > size {
            for entry in hint.entries where UInt64(entry.offset) >= size { append(entry, file: path) }
            ranges.append(.init(file: path, start: size, end: hint.size, isIdentified: true, reason: reason))
        } else if let expected, expected > size {
            ranges.append(.init(file: path, start: size, end: expected, isIdentified: false, reason: reason))
        } else if coverage?.isCutShort ?? false {
            ranges.append(
                .init(
                    file: path, start: size, end: size, isIdentified: false,
                    reason: "the segment ends without its seal frame: cut short, and how much followed is unknown"))
        }
    }

    /// The frames of damaged range `gap` of a segment (`bytes`).
    private mutating func add(
        _ gap: Range<UInt64>, of bytes: [UInt8], path: String, hint: (entries: [HintFile.Entry], size: UInt64)?,
        loaded: StoreLoader.Loaded
    ) {
        let reason = loaded.problems.first { problem in
            problem.file == path && problem.offset.map { gap.contains($0) || $0 == gap.upperBound } ?? false
        }?.message
        if let hint {
            for entry in hint.entries where gap.contains(UInt64(entry.offset)) { append(entry, file: path) }
            ranges.append(
                .init(file: path, start: gap.lowerBound, end: gap.upperBound, isIdentified: true, reason: reason))
            return
        }
        var identified = true
        bytes.withUnsafeBytes { all in
            let format = FrameFormat(segment: all)
            let end = Int(gap.upperBound)
            let within = UnsafeRawBufferPointer(rebasing: all[..<end])
            var position = max(Int(gap.lowerBound), LogFormat.segmentHeaderSize)
            while position < end {
                if case .success(let frame) = FrameDecoder.decode(within, at: position, format: format) {
                    if frame.kind != .seal && frame.kind != .reserveIDs {
                        let name =
                            frame.kind == .setRoot || frame.kind == .removeRoot
                            ? FrameDecoder.payload(of: frame, in: within).flatMap {
                                String(validating: $0, as: UTF8.self)
                            }
                            : nil
                        frames.append(
                            LostFrame(
                                kind: frame.kind, id: frame.id, sequence: frame.sequence, typeTag: frame.typeTag,
                                name: name, file: path, offset: UInt64(position)))
                    }
                    position += frame.length
                    continue
                }
                identified = false
                let next = FrameDecoder.nextValidFrame(in: within, after: position, format: format) ?? end
                position = max(next, position + 1)
            }
        }
        ranges.append(
            .init(file: path, start: gap.lowerBound, end: gap.upperBound, isIdentified: identified, reason: reason))
    }

    private mutating func append(_ entry: HintFile.Entry, file: String) {
        guard entry.kind != .seal, entry.kind != .reserveIDs else { return }
        frames.append(
            LostFrame(
                kind: entry.kind, id: entry.id, sequence: entry.sequence, typeTag: entry.typeTag,
                name: entry.kind == .setRoot || entry.kind == .removeRoot
                    ? String(validating: entry.name, as: UTF8.self) : nil,
                file: file, offset: UInt64(entry.offset)))
    }

    /// Whether segment `number`'s hint file describes a segment longer than `size` bytes.
    static func hintDescribesMore(_ number: UInt32, directory: String, io: SystemIO, than size: UInt64) -> Bool {
        (hintEntries(number, directory: directory, io: io, atLeast: size)?.size ?? 0) > size
    }

    /// The entries of segment `number`'s hint file, when it is intact (its checksum holds), names that
    /// segment, and describes a segment at least `size` bytes long (a segment cut short keeps its hint,
    /// which then tells what the cut took).
    static func hintEntries(_ number: UInt32, directory: String, io: SystemIO, atLeast size: UInt64) -> (
        entries: [HintFile.Entry], size: UInt64
    )? {
        guard let bytes = try? io.readWholeFile(directory + "/" + HintFile.fileName(number), limit: UInt64(UInt32.max))
        else { return nil }
        return bytes.withUnsafeBytes { raw in
            guard case .success(let reader) = HintReader.open(raw), reader.segmentNumber == number,
                reader.segmentSize >= size
            else { return nil }
            return (reader.entries, reader.segmentSize)
        }
    }
}
