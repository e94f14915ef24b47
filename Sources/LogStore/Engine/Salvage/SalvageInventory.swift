@_spi(Engine) import LogStoreFormat
@_spi(Engine) import LogStoreSystem

/// A frame that damage kept out of a salvaged copy, known from its segment's hint file or read intact
/// from the damaged bytes (a frame whose batch lost other frames).
struct LostFrame: Sendable {
    var kind: FrameKind
    var id: UInt64
    /// Its sequence number; nil when it cannot be trusted (read from a segment whose header is damaged:
    /// format 2 writes sequence numbers against the header's base).
    var sequence: UInt64?
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
/// intact frame (its checksum holds) is known; bytes where none can be read are reported as unknown. A
/// segment the load could not read at all (its header damaged, empty, unopenable, missing) is unknown
/// unless its hint describes it.
struct SalvageInventory {
    typealias Hint = (entries: [HintFile.Entry], size: UInt64)

    var ranges: [SalvageReport.DamagedRange] = []
    var frames: [LostFrame] = []
    /// Frames of format-1 segments copied although their batch lost frames before them (format 1 has no
    /// batch checksum, so a scan that goes on after damage commits the rest of the batch).
    var splitBatchFrames: [LostFrame] = []
    var notes: [String] = []
    /// The highest object id a lost frame names or reserves.
    var highestID: UInt64 = 0

    /// - parameter loaded: a verifying load of `directory` (``StoreLoader/Mode/verify``).
    init(directory: String, loaded: StoreLoader.Loaded, io: SystemIO) {
        let names = (try? io.listDirectory(directory)) ?? []
        let present = Set(names.compactMap(LogFormat.segmentNumber(fromFileName:))).union(loaded.segmentNumbers)
        for number in present.sorted() {
            let path = directory + "/" + LogFormat.segmentFileName(number)
            let coverage = loaded.coverage[number]
            if let coverage, let from = coverage.uncommittedFrom, from < coverage.end {
                notes.append(
                    "\(path): \(coverage.end - from) bytes from offset \(from) were never committed (a crash left "
                        + "them); not copied")
            }
            let expected = loaded.expectedSizes[number]
            // The segment's hint, read once; it is used only where it describes at least the bytes there are.
            let anyHint = Self.hintEntries(number, directory: directory, io: io, atLeast: 0)
            if let coverage, coverage.gaps().isEmpty, !coverage.isCutShort, expected == nil,
                (anyHint?.size ?? 0) <= coverage.end
            {
                continue
            }
            let bytes: [UInt8]
            if let file = loaded.state.segments.file(number), let coverage {
                // The load's own mapping: the bytes it judged (no writer can cut the file meanwhile: salvage
                // holds the store's lock shared).
                bytes = Array(file.bytes(count: Int(coverage.end)))
            } else {
                do {
                    bytes = try io.readWholeFile(path, limit: UInt64(UInt32.max))
                } catch {
                    addUnread(path, hint: anyHint, expected: expected, reason: "cannot read the segment: \(error)")
                    continue
                }
            }
            let size = UInt64(bytes.count)
            let hint = anyHint.flatMap { $0.size >= size ? $0 : nil }
            guard let coverage else {
                addUnread(
                    path, bytes: bytes, hint: hint, expected: expected,
                    reason: loaded.problems.first { $0.file == path }?.message ?? "the segment could not be read")
                continue
            }
            for gap in coverage.gaps() {
                add(gap, of: bytes, path: path, hint: hint, loaded: loaded)
            }
            addCut(path, size: size, hint: hint, coverage: coverage, expected: expected)
            if case .v1 = bytes.withUnsafeBytes({ FrameFormat(segment: $0) }) {
                findSplitBatches(after: coverage.gaps(), of: bytes, path: path)
            }
        }
        // Segments gone from the folder: those the manifest lists, and those whose hint file is left.
        let hinted = names.compactMap { name -> UInt32? in
            let suffix = "." + HintFile.fileExtension
            guard name.hasSuffix(suffix) else { return nil }
            return LogFormat.segmentNumber(fromFileName: name.dropLast(suffix.count) + "." + LogFormat.segmentExtension)
        }
        for number in Set(loaded.missingSegments).union(hinted).subtracting(present).sorted() {
            let path = directory + "/" + LogFormat.segmentFileName(number)
            let hint = Self.hintEntries(number, directory: directory, io: io, atLeast: 0)
            addUnread(path, hint: hint, expected: nil, reason: "the segment is missing")
        }
    }

    /// A segment the load could not read (damaged header, empty, unopenable, missing): its frames from its
    /// hint when there is one; else whatever intact frames its bytes hold, with untrusted sequence numbers,
    /// and the whole segment of unknown contents.
    private mutating func addUnread(
        _ path: String, bytes: [UInt8] = [], hint: Hint?, expected: UInt64?, reason: String
    ) {
        let end = max(UInt64(bytes.count), hint?.size ?? 0, expected ?? 0)
        if let hint {
            for entry in hint.entries { append(entry, file: path) }
            ranges.append(.init(file: path, start: 0, end: end, isIdentified: true, reason: reason))
            return
        }
        if !bytes.isEmpty {
            _ = walk(0..<UInt64(bytes.count), of: bytes, path: path, trustSequences: false)
        }
        ranges.append(.init(file: path, start: 0, end: end, isIdentified: false, reason: reason))
    }

    /// What a segment cut short lost past its end: known from its hint, or up to the size its last clean
    /// close recorded (contents unknown), or else an empty range at the end (how much followed is unknown).
    private mutating func addCut(
        _ path: String, size: UInt64, hint: Hint?, coverage: SegmentCoverage, expected: UInt64?
    ) {
        let reason = "the segment is shorter than it was written (cut short)"
        if let hint, hint.size > size {
            for entry in hint.entries where UInt64(entry.offset) >= size { append(entry, file: path) }
            ranges.append(.init(file: path, start: size, end: hint.size, isIdentified: true, reason: reason))
        } else if let expected, expected > size {
            ranges.append(.init(file: path, start: size, end: expected, isIdentified: false, reason: reason))
        } else if coverage.isCutShort {
            ranges.append(
                .init(
                    file: path, start: size, end: size, isIdentified: false,
                    reason: "the segment ends without its seal frame: cut short, and how much followed is unknown"))
        }
    }

    /// The frames of damaged range `gap` of a segment (`bytes`).
    private mutating func add(
        _ gap: Range<UInt64>, of bytes: [UInt8], path: String, hint: Hint?, loaded: StoreLoader.Loaded
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
        let identified = walk(gap, of: bytes, path: path, trustSequences: true)
        ranges.append(
            .init(file: path, start: gap.lowerBound, end: gap.upperBound, isIdentified: identified, reason: reason))
    }

    /// Reads the frames in `range` of a segment (from after the header), adding each intact one; returns
    /// whether every byte of the range was an intact frame.
    private mutating func walk(_ range: Range<UInt64>, of bytes: [UInt8], path: String, trustSequences: Bool)
        -> Bool
    {
        var identified = true
        bytes.withUnsafeBytes { all in
            let format = FrameFormat(segment: all)
            let end = Int(min(range.upperBound, UInt64(all.count)))
            if range.upperBound > UInt64(all.count) { identified = false }
            let within = UnsafeRawBufferPointer(rebasing: all[..<end])
            var position = max(Int(range.lowerBound), LogFormat.segmentHeaderSize)
            while position < end {
                if case .success(let frame) = FrameDecoder.decode(within, at: position, format: format) {
                    if frame.kind == .reserveIDs { highestID = max(highestID, frame.id > 0 ? frame.id - 1 : 0) }
                    if frame.kind != .seal && frame.kind != .reserveIDs {
                        frames.append(lost(frame, in: within, path: path, trustSequence: trustSequences))
                    }
                    position += frame.length
                    continue
                }
                identified = false
                let next = FrameDecoder.nextValidFrame(in: within, after: position, format: format) ?? end
                position = max(next, position + 1)
            }
        }
        return identified
    }

    /// In a format-1 segment, the committed frames after each damaged range up to the next commit frame:
    /// the rest of a batch whose start the damage took, which the scan committed.
    private mutating func findSplitBatches(after gaps: [Range<UInt64>], of bytes: [UInt8], path: String) {
        bytes.withUnsafeBytes { all in
            let format = FrameFormat(segment: all)
            for gap in gaps where gap.upperBound < UInt64(all.count) {
                var position = Int(gap.upperBound)
                while position < all.count,
                    case .success(let frame) = FrameDecoder.decode(all, at: position, format: format),
                    frame.kind != .seal
                {
                    splitBatchFrames.append(lost(frame, in: all, path: path, trustSequence: true))
                    if frame.flags.contains(.commit) { break }
                    position += frame.length
                }
            }
        }
    }

    private func lost(_ frame: DecodedFrame, in bytes: UnsafeRawBufferPointer, path: String, trustSequence: Bool)
        -> LostFrame
    {
        let name =
            frame.kind == .setRoot || frame.kind == .removeRoot
            ? FrameDecoder.payload(of: frame, in: bytes).flatMap { String(validating: $0, as: UTF8.self) } : nil
        return LostFrame(
            kind: frame.kind, id: frame.id, sequence: trustSequence ? frame.sequence : nil, typeTag: frame.typeTag,
            name: name, file: path, offset: UInt64(frame.offset))
    }

    private mutating func append(_ entry: HintFile.Entry, file: String) {
        if entry.kind == .reserveIDs { highestID = max(highestID, entry.id > 0 ? entry.id - 1 : 0) }
        guard entry.kind != .seal, entry.kind != .reserveIDs else { return }
        frames.append(
            LostFrame(
                kind: entry.kind, id: entry.id, sequence: entry.sequence, typeTag: entry.typeTag,
                name: entry.kind == .setRoot || entry.kind == .removeRoot
                    ? String(validating: entry.name, as: UTF8.self) : nil,
                file: file, offset: UInt64(entry.offset)))
    }

    /// The entries of segment `number`'s hint file, when it is intact (its checksum holds), names that
    /// segment, and describes a segment at least `size` bytes long (a segment cut short keeps its hint,
    /// which then tells what the cut took).
    static func hintEntries(_ number: UInt32, directory: String, io: SystemIO, atLeast size: UInt64) -> Hint? {
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
