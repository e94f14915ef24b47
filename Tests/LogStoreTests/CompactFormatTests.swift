import CCRC32C
import TestSupport
import Testing

@_spi(Engine) @testable import LogStoreFormat

/// The codecs of format version 2: varints, CRC-32C, compact frames and compact hints. Round trips
/// against a model, every truncation and byte change, and random bytes fed to every decoder.
@Suite struct CompactFormatTests {
    // MARK: - Varints

    @Test func varintsRoundTripAndTakeTheirSize() {
        var random = SplitMix64(seed: testSeed("varints", default: 0x7A11))
        var values: [UInt64] = [0, 1, 127, 128, 16_383, 16_384, 1 << 63, (1 << 63) - 1, .max]
        for _ in 0..<20_000 { values.append(random.next() >> (random.next() % 64)) }
        var buffer = [UInt8](repeating: 0, count: VarInt.maximumSize + 4)
        for value in values {
            let written = buffer.withUnsafeMutableBytes { VarInt.write(value, to: $0.baseAddress!) }
            #expect(written == VarInt.size(of: value))
            let read = buffer.withUnsafeBytes { raw -> (UInt64?, Int) in
                var cursor = 0
                let value = VarInt.read(raw.baseAddress!, at: &cursor, end: written)
                return (value, cursor)
            }
            #expect(read.0 == value && read.1 == written, "value \(value)")
            // Cut anywhere inside, it does not read.
            for end in 0..<written {
                let cut = buffer.withUnsafeBytes { raw -> UInt64? in
                    var cursor = 0
                    return VarInt.read(raw.baseAddress!, at: &cursor, end: end)
                }
                #expect(cut == nil)
            }
        }
        #expect(VarInt.size(of: 127) == 1 && VarInt.size(of: 128) == 2 && VarInt.size(of: .max) == 10)
    }

    @Test func onlyTheShortestEncodingOfA64BitValueIsRead() {
        func read(_ bytes: [UInt8]) -> UInt64? {
            bytes.withUnsafeBytes { raw in
                var cursor = 0
                return VarInt.read(raw.baseAddress!, at: &cursor, end: raw.count)
            }
        }
        #expect(read([0x80, 0x00]) == nil)  // 0 in two bytes
        #expect(read([0xFF, 0x80, 0x00]) == nil)
        #expect(read([0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0x02]) == nil)  // 65 bits
        #expect(read([0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0x01]) == .max)
        #expect(read([0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0x81, 0x00]) == nil)  // 11 bytes
        #expect(read([0x7F]) == 127)
    }

    @Test func zigzagDeltasRoundTrip() {
        var random = SplitMix64(seed: testSeed("zigzag", default: 0x2162))
        #expect(VarInt.zigzag(0) == 0 && VarInt.zigzag(-1) == 1 && VarInt.zigzag(1) == 2 && VarInt.zigzag(-2) == 3)
        for _ in 0..<20_000 {
            let (value, base) = (random.next() >> (random.next() % 64), random.next() >> (random.next() % 64))
            #expect(VarInt.applying(VarInt.delta(value, from: base), to: base) == value)
            let signed = Int64(bitPattern: random.next())
            #expect(VarInt.unzigzag(VarInt.zigzag(signed)) == signed)
        }
        #expect(VarInt.delta(1005, from: 1000) == 10 && VarInt.delta(995, from: 1000) == 9)
    }

    // MARK: - CRC-32C

    @Test func crc32cMatchesTheStandardCheckValueOnEveryPath() {
        let check = Array("123456789".utf8)
        check.withUnsafeBytes { raw in
            #expect(Checksum.crc32c(raw.baseAddress!, count: raw.count) == 0xE306_9283)
            #expect(logstore_crc32c_portable(0, raw.baseAddress, raw.count) == 0xE306_9283)
        }
        var random = SplitMix64(seed: testSeed("crc32c", default: 0xC3C))
        for _ in 0..<2_000 {
            let bytes = (0..<Int(random.next() % 300)).map { _ in UInt8.random(in: 0...255, using: &random) }
            let offset = bytes.isEmpty ? 0 : Int(random.next() % UInt64(bytes.count))
            bytes.withUnsafeBytes { raw in
                let part = raw.baseAddress! + offset
                let count = raw.count - offset
                #expect(logstore_crc32c(0, part, count) == logstore_crc32c_portable(0, part, count))
                // Continuing from a prefix gives the checksum of the whole.
                let split = count / 2
                let first = logstore_crc32c(0, part, split)
                #expect(logstore_crc32c(first, part + split, count - split) == logstore_crc32c(0, part, count))
            }
        }
    }

    // MARK: - Compact frames

    /// One frame of the model: what the encoder is given and the decoder must give back.
    struct ModelFrame: Equatable {
        var kind: FrameKind
        var flags: FrameFlags
        var id: UInt64
        var typeTag: UInt32
        var references: [UInt64]
        var payload: [UInt8]
        var sequence: UInt64
    }

    /// A version-2 segment built in memory from batches of model frames, ending with a seal.
    static func segment(
        _ batches: [[ModelFrame]], compressionMinimumSize: Int = 64, sealed: Bool = true, baseSequence: UInt64? = nil
    ) -> (bytes: [UInt8], offsets: [Int]) {
        let buffer = WriteBuffer()
        let base = baseSequence ?? batches.first?.first?.sequence ?? 0
        let header = SegmentHeader(formatVersion: 2, segmentNumber: 3, createdAtMilliseconds: 1, baseSequence: base)
            .encoded()
        header.withUnsafeBytes { raw in
            buffer.reserve(raw.count).copyMemory(from: raw.baseAddress!, byteCount: raw.count)
        }
        buffer.commit(header.count)
        let encoder = CompactFrameEncoder(compressionMinimumSize: compressionMinimumSize)
        var offsets: [Int] = []
        for batch in batches {
            let batchStart = buffer.count
            for (index, frame) in batch.enumerated() {
                offsets.append(buffer.count)
                _ = frame.payload.withUnsafeBytes { payload in
                    encoder.append(
                        kind: frame.kind, flags: frame.flags, sequence: frame.sequence, baseSequence: base,
                        id: frame.id,
                        typeTag: frame.typeTag, references: .ids(frame.references.map { ObjectID($0) }),
                        payload: .raw(payload), batchStart: index == batch.count - 1 ? batchStart : nil, to: buffer)
                }
            }
        }
        if sealed {
            let last = batches.last?.last?.sequence ?? 0
            encoder.append(
                kind: .seal, flags: [], sequence: last, baseSequence: base, id: UInt64(buffer.count), typeTag: 0,
                references: .ids([]), payload: .raw(UnsafeRawBufferPointer(start: nil, count: 0)),
                batchStart: buffer.count, to: buffer)
        }
        return (Array(buffer.bytes), offsets)
    }

    /// - parameter small: payloads of at most 160 bytes (for tests that scan a segment once per byte).
    static func randomBatches(_ random: inout SplitMix64, count: Int, small: Bool = false) -> [[ModelFrame]] {
        var sequence: UInt64 = UInt64(random.next() % 1_000)
        var nextID: UInt64 = 1 + random.next() % 100_000
        var batches: [[ModelFrame]] = []
        for _ in 0..<count {
            sequence += 1
            var batch: [ModelFrame] = []
            for _ in 0..<(1 + Int(random.next() % 5)) {
                let kind = [FrameKind.put, .put, .put, .delete, .setRoot, .removeRoot, .reserveIDs][
                    Int(random.next() % 7)]
                let id = random.next() % 4 == 0 ? 1 + random.next() % LogFormat.maxObjectID : nextID
                nextID += 1
                var references: [UInt64] = []
                var payload: [UInt8] = []
                var flags: FrameFlags = []
                switch kind {
                case .put:
                    references = (0..<Int(random.next() % 6)).map { _ in
                        random.next() % 3 == 0
                            ? 1 + random.next() % LogFormat.maxObjectID : id - min(id - 1, random.next() % 50)
                    }
                    let size = [0, 1, 100, 159, 300, 700, 5_000][Int(random.next() % (small ? 4 : 7))]
                    let compressible = random.next() % 2 == 0
                    payload = (0..<size).map { index in
                        compressible ? UInt8(truncatingIfNeeded: index / 7) : UInt8.random(in: 0...255, using: &random)
                    }
                    if random.next() % 5 == 0 { flags.insert(.pinned) }
                case .delete: if random.next() % 2 == 0 { flags.insert(.collected) }
                case .setRoot, .removeRoot: payload = Array("root-\(random.next() % 9)".utf8)
                default: break
                }
                batch.append(
                    ModelFrame(
                        kind: kind, flags: flags, id: kind == .removeRoot ? 0 : id,
                        typeTag: kind == .put ? UInt32(truncatingIfNeeded: random.next() % 70_000) : 0,
                        references: references, payload: payload, sequence: sequence))
            }
            batches.append(batch)
        }
        return batches
    }

    /// The model frames a scan of `bytes` hands out.
    static func scanned(_ bytes: [UInt8]) -> (frames: [ModelFrame], outcome: SegmentScanner.Outcome) {
        var frames: [ModelFrame] = []
        let outcome = bytes.withUnsafeBytes { raw in
            SegmentScanner(bytes: raw).scan { frame in
                var flags = frame.flags
                flags.remove([.commit, .compressed])
                frames.append(
                    ModelFrame(
                        kind: frame.kind, flags: flags, id: frame.id, typeTag: frame.typeTag,
                        references: FrameDecoder.references(of: frame, in: raw).map(\.rawValue),
                        payload: FrameDecoder.payload(of: frame, in: raw) ?? [0xDE, 0xAD], sequence: frame.sequence))
            }
        }
        return (frames, outcome)
    }

    @Test func framesRoundTripThroughTheScanner() {
        var random = SplitMix64(seed: testSeed("compact frames", default: 0xF2A3E))
        for round in 0..<40 {
            let batches = Self.randomBatches(&random, count: 1 + Int(random.next() % 40))
            let minimum = [0, 1, 64, 512][round % 4]
            let (bytes, _) = Self.segment(batches, compressionMinimumSize: minimum)
            let (frames, outcome) = Self.scanned(bytes)
            #expect(outcome.damages.isEmpty, "round \(round): \(outcome.damages)")
            #expect(outcome.sealedAt != nil)
            #expect(frames == batches.flatMap { $0 }, "round \(round)")
            #expect(outcome.committedEnd == bytes.count)
        }
    }

    @Test func aFrameStandsAloneButForItsSegmentsBaseSequence() throws {
        let batch = [
            ModelFrame(kind: .put, flags: [], id: 10, typeTag: 2, references: [9, 11], payload: [1, 2], sequence: 7),
            ModelFrame(kind: .put, flags: .pinned, id: 11, typeTag: 2, references: [], payload: [3], sequence: 7),
        ]
        let (bytes, offsets) = Self.segment([batch], sealed: false, baseSequence: 5)
        try bytes.withUnsafeBytes { raw in
            let first = try CompactFrameDecoder.decode(raw, at: offsets[0], baseSequence: 5).get()
            #expect(first.id == 10 && first.sequence == 7 && first.batchChecksumOffset == nil)
            #expect(FrameDecoder.references(of: first, in: raw) == [ObjectID(9), ObjectID(11)])
            #expect(FrameDecoder.payload(of: first, in: raw) == [1, 2])
            let second = try CompactFrameDecoder.decode(raw, at: offsets[1], baseSequence: 5).get()
            #expect(second.sequence == 7 && second.flags.contains(.pinned) && second.batchChecksumOffset != nil)
            // Read against another base, the same bytes name another sequence number.
            #expect(try CompactFrameDecoder.decode(raw, at: offsets[1], baseSequence: 6).get().sequence == 8)
            #expect(CompactFrameDecoder.batchChecksumMatches(second, batchStart: offsets[0], in: raw))
            #expect(!CompactFrameDecoder.batchChecksumMatches(second, batchStart: offsets[1], in: raw))
            #expect(FrameDecoder.checksumMatches(second, in: raw))
        }
    }

    /// The overhead the format promises: at most 16 bytes of frame around a typical put's payload and
    /// references (id below 2^21, type tag below 128, payload below 16 KiB, sequence number within 2^13
    /// of its segment's base: a segment of batched puts), compressed or not.
    @Test func aTypicalPutCostsAtMostSixteenBytesAroundItsPayloadAndReferences() throws {
        var random = SplitMix64(seed: testSeed("frame overhead", default: 0x16))
        for _ in 0..<2_000 {
            let id = 1 + random.next() % (1 << 21)
            let references = (0..<Int(random.next() % 5)).map { _ in ObjectID(1 + random.next() % (1 << 21)) }
            let size = 100 + Int(random.next() % 201)
            let payload = (0..<size).map { UInt8(truncatingIfNeeded: $0 / Int(1 + random.next() % 9)) }
            let buffer = WriteBuffer()
            let base = random.next() % (1 << 40)
            let sequence = base + random.next() % (1 << 13)
            let length = payload.withUnsafeBytes { raw in
                CompactFrameEncoder(compressionMinimumSize: random.next() % 2 == 0 ? 64 : 0).append(
                    kind: .put, flags: [], sequence: sequence, baseSequence: base, id: id,
                    typeTag: UInt32(random.next() % 128), references: .ids(references), payload: .raw(raw),
                    batchStart: nil, to: buffer)
            }
            let frame = try buffer.bytes.withUnsafeBytes {
                try CompactFrameDecoder.decode($0, at: 0, baseSequence: base).get()
            }
            #expect(frame.sequence == sequence)
            #expect(length - frame.referencesLength - frame.storedLength <= 16)
        }
    }

    /// Every change of one byte of a frame is found: by the frame's CRC-32C (every error in 32 bits or
    /// fewer), or, where the byte is a length and moves the frame's end, by the checksum landing on other
    /// bytes and by the batch checksum.
    @Test func everySingleByteChangeOfASegmentIsFound() {
        var random = SplitMix64(seed: testSeed("byte changes", default: 0xB17E))
        let batches = Self.randomBatches(&random, count: 8, small: true)
        let (bytes, _) = Self.segment(batches)
        let expected = batches.flatMap { $0 }
        for position in LogFormat.segmentHeaderSize..<bytes.count {
            for change: UInt8 in [0x01, 0x80, 0xFF, UInt8.random(in: 1...255, using: &random)] {
                var damaged = bytes
                damaged[position] ^= change
                let (frames, outcome) = Self.scanned(damaged)
                #expect(!outcome.damages.isEmpty, "byte \(position) ^ \(change) not found")
                // What was handed out before the damage is what was written.
                #expect(Array(expected.prefix(frames.count)) == frames)
            }
        }
    }

    @Test func everyTruncationEndsAtTheLastWholeBatch() {
        var random = SplitMix64(seed: testSeed("truncations", default: 0x7C))
        let batches = Self.randomBatches(&random, count: 10, small: true)
        let (bytes, _) = Self.segment(batches, sealed: false)
        var wholeBatches: Set<Int> = [0]  // frame counts at batch ends
        var total = 0
        for batch in batches {
            total += batch.count
            wholeBatches.insert(total)
        }
        let expected = batches.flatMap { $0 }
        for length in LogFormat.segmentHeaderSize...bytes.count {
            let (frames, outcome) = Self.scanned(Array(bytes.prefix(length)))
            #expect(outcome.committedEnd <= length)
            #expect(wholeBatches.contains(frames.count), "cut at \(length)")
            #expect(Array(expected.prefix(frames.count)) == frames)
            #expect(outcome.committedEnd == length || !outcome.damages.isEmpty, "cut at \(length)")
        }
    }

    @Test func randomBytesNeverCrashTheFrameDecoder() {
        var random = SplitMix64(seed: testSeed("frame fuzz", default: 0xF022))
        let (valid, offsets) = Self.segment(Self.randomBatches(&random, count: 6, small: true))
        for round in 0..<4_000 {
            var bytes: [UInt8]
            if round % 2 == 0 {
                bytes = (0..<Int(random.next() % 200)).map { _ in UInt8.random(in: 0...255, using: &random) }
            } else {
                // A valid segment with a few random bytes changed, cut somewhere.
                bytes = valid
                for _ in 0..<(1 + Int(random.next() % 4)) {
                    bytes[Int(random.next() % UInt64(bytes.count))] = UInt8.random(in: 0...255, using: &random)
                }
                bytes = Array(bytes.prefix(Int(random.next() % UInt64(bytes.count + 1))))
            }
            bytes.withUnsafeBytes { raw in
                let at = round % 2 == 0 || offsets.isEmpty ? 0 : offsets[Int(random.next() % UInt64(offsets.count))]
                if case .success(let frame) = CompactFrameDecoder.decode(raw, at: at, baseSequence: random.next()) {
                    #expect(frame.offset + frame.length <= raw.count)
                    #expect(frame.referencesOffset + frame.referencesLength <= frame.payloadOffset)
                    _ = FrameDecoder.references(of: frame, in: raw)
                    _ = FrameDecoder.payload(of: frame, in: raw)
                }
                _ = FrameDecoder.nextValidFrame(in: raw, after: 0, format: .v2(baseSequence: 0))
            }
            if round % 2 == 1 { _ = Self.scanned(bytes) }
        }
    }

    // MARK: - Compact hints

    @Test func aCompactHintDescribesItsSegmentAndReadsBack() throws {
        var random = SplitMix64(seed: testSeed("compact hints", default: 0x417))
        for _ in 0..<20 {
            let batches = Self.randomBatches(&random, count: 1 + Int(random.next() % 60))
            let (bytes, _) = Self.segment(batches)
            let hint = try #require(bytes.withUnsafeBytes { HintWriter.hint(segment: 3, bytes: $0) })
            var frames: [DecodedFrame] = []
            _ = bytes.withUnsafeBytes { raw in SegmentScanner(bytes: raw).scan { frames.append($0) } }
            try hint.withUnsafeBytes { raw in
                let reader = try HintReader.open(raw).get()
                // One entry per committed frame (the seal has none).
                #expect(reader.isCompact && reader.entryCount == frames.count)
                var index = 0
                bytes.withUnsafeBytes { segment in
                    reader.forEachEntry { entry in
                        defer { index += 1 }
                        guard index < frames.count else { return }
                        let frame = frames[index]
                        #expect(entry.kind == frame.kind && entry.flags == frame.flags && entry.id == frame.id)
                        #expect(entry.sequence == frame.sequence && entry.typeTag == frame.typeTag)
                        #expect(Int(entry.offset) == frame.offset && Int(entry.length) == frame.length)
                        var references: [ObjectID] = []
                        entry.forEachReference { references.append(ObjectID($0)) }
                        #expect(references == FrameDecoder.references(of: frame, in: segment))
                        if frame.kind == .setRoot || frame.kind == .removeRoot {
                            #expect(Array(entry.nameBytes) == FrameDecoder.payload(of: frame, in: segment))
                        }
                    }
                }
                #expect(index == frames.count)
            }
        }
    }

    /// Hints of entries written by value (any offsets, in any order) read back as those values.
    @Test func compactHintEntriesRoundTripWithAnyOffsets() throws {
        var random = SplitMix64(seed: testSeed("compact hint entries", default: 0xE17))
        for _ in 0..<200 {
            var writer = HintWriter(segmentNumber: 9, segmentSize: 1 << 30, format: .v2(baseSequence: 0))
            var entries: [HintFile.Entry] = []
            var offset: UInt32 = 48
            for _ in 0..<Int(random.next() % 50) {
                let kind = [FrameKind.put, .delete, .setRoot, .removeRoot, .reserveIDs][Int(random.next() % 5)]
                let length = UInt32(9 + random.next() % 5_000)
                if random.next() % 4 == 0 { offset += UInt32(random.next() % 100) }
                let entry = HintFile.Entry(
                    kind: kind, flags: random.next() % 2 == 0 ? [.commit] : [.pinned, .compressed],
                    sequence: random.next() % LogFormat.maxSequence, id: 1 + random.next() % LogFormat.maxObjectID,
                    typeTag: UInt32(truncatingIfNeeded: random.next()), offset: offset, length: length,
                    references: kind == .put ? (0..<Int(random.next() % 5)).map { _ in ObjectID(random.next()) } : [],
                    name: kind == .setRoot || kind == .removeRoot ? Array("name\(random.next() % 99)".utf8) : [])
                offset += length
                entries.append(entry)
                writer.append(entry)
            }
            let bytes = writer.finish()
            let read = try bytes.withUnsafeBytes { try HintReader.open($0).get().entries }
            #expect(read == entries)
            // Every cut and every changed byte is refused.
            for cut in 0..<bytes.count where cut % 3 == 0 {
                #expect((try? Array(bytes.prefix(cut)).withUnsafeBytes { try HintReader.open($0).get() }) == nil)
            }
            var damaged = bytes
            damaged[Int(random.next() % UInt64(bytes.count))] ^= 0x10
            #expect((try? damaged.withUnsafeBytes { try HintReader.open($0).get() }) == nil)
        }
    }

    /// A typical put's entry: at most 12 bytes besides its references.
    @Test func aTypicalPutEntryTakesAtMostTwelveBytesBesidesItsReferences() throws {
        var random = SplitMix64(seed: testSeed("entry size", default: 0x12))
        var batches: [[ModelFrame]] = []
        var id: UInt64 = 1 << 20
        for sequence in 1...200 {
            batches.append(
                (0..<50).map { _ in
                    id += 1
                    let references = (0..<Int(random.next() % 5)).map { _ in id - 1 - random.next() % 1_000 }
                    return ModelFrame(
                        kind: .put, flags: [], id: id, typeTag: UInt32(random.next() % 100), references: references,
                        payload: (0..<(100 + Int(random.next() % 201))).map { UInt8(truncatingIfNeeded: $0) },
                        sequence: UInt64(sequence))
                })
        }
        let (bytes, _) = Self.segment(batches, compressionMinimumSize: 0)
        let hint = try #require(bytes.withUnsafeBytes { HintWriter.hint(segment: 3, bytes: $0) })
        try hint.withUnsafeBytes { raw in
            let reader = try HintReader.open(raw).get()
            reader.forEachEntry { entry in
                guard entry.kind == .put else { return }
                #expect(entry.size - entry.referencesLength <= 12)
            }
        }
    }

    /// Random bytes behind a valid compact hint header: refused or read, never a crash.
    @Test func randomBytesNeverCrashTheHintReader() {
        var random = SplitMix64(seed: testSeed("hint fuzz", default: 0x4F22))
        for _ in 0..<5_000 {
            let writer = HintWriter(segmentNumber: 1, segmentSize: 1 << 20, format: .v2(baseSequence: 0))
            let body = (0..<Int(random.next() % 120)).map { _ in UInt8.random(in: 0...255, using: &random) }
            _ = writer.entryCount
            var bytes = writer.finish().dropLast(8) + body
            // A claimed entry count, and a checksum that holds, so the entries themselves are checked.
            let count = random.next() % 20
            withUnsafeBytes(of: count.littleEndian) { raw in
                for index in 0..<8 { bytes[bytes.startIndex + 32 + index] = raw[index] }
            }
            var file = Array(bytes)
            let checksum = file.withUnsafeBytes { Checksum.xxh3($0) }
            withUnsafeBytes(of: checksum.littleEndian) { file.append(contentsOf: $0) }
            file.withUnsafeBytes { raw in
                if case .success(let reader) = HintReader.open(raw) {
                    reader.forEachEntry { entry in
                        entry.forEachReference { _ in }
                        _ = entry.name
                    }
                }
            }
        }
    }
}

extension CompactFormatTests {
    /// The worked example of Format.md section 11.6: a version-2 segment header and one batch of two puts;
    /// with `sealed`, in the layout of an encrypted segment before its batch is sealed (section 13.7).
    static func workedExample(sealed: Bool = false) -> [UInt8] {
        let buffer = WriteBuffer()
        let header = SegmentHeader(
            segmentNumber: 1, createdAtMilliseconds: 0, flags: sealed ? LogFormat.encryptedSegmentFlag : 0,
            baseSequence: 7
        ).encoded()
        header.withUnsafeBytes { buffer.reserve($0.count).copyMemory(from: $0.baseAddress!, byteCount: $0.count) }
        buffer.commit(header.count)
        let encoder = CompactFrameEncoder(compressionMinimumSize: 0, sealed: sealed)
        _ = Array("hello".utf8).withUnsafeBytes { payload in
            encoder.append(
                kind: .put, flags: .pinned, sequence: 7, baseSequence: 7, id: 2, typeTag: 1,
                references: .ids([ObjectID(1)]), payload: .raw(payload), batchStart: nil, to: buffer)
        }
        _ = Array("hi".utf8).withUnsafeBytes { payload in
            encoder.append(
                kind: .put, flags: [], sequence: 7, baseSequence: 7, id: 300, typeTag: 1, references: .ids([]),
                payload: .raw(payload), batchStart: 48, to: buffer)
        }
        return Array(buffer.bytes)
    }

    @Test func theWorkedExampleHasItsDocumentedBytes() throws {
        let bytes = Self.workedExample()
        let documented = """
            4c 4f 47 53 54 53 45 47 02 00 30 00 00 00 00 00 01 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 \
            07 00 00 00 00 00 00 00 9c f9 bc 2a 93 b6 ea 40 21 00 02 01 01 05 01 68 65 6c 6c 6f e6 b4 d0 fb \
            11 00 ac 02 01 00 02 68 69 0f 3b 66 f9 a1 db 5f f2 76 31 f7 3c
            """
        #expect(bytes == documented.split(separator: " ").compactMap { UInt8($0, radix: 16) })
        // And it reads back as the example says.
        var frames: [DecodedFrame] = []
        let outcome = bytes.withUnsafeBytes { raw in SegmentScanner(bytes: raw).scan { frames.append($0) } }
        #expect(outcome.damages.isEmpty && frames.map(\.id) == [2, 300] && frames.allSatisfy { $0.sequence == 7 })
        #expect(frames.map(\.offset) == [0x30, 0x40] && frames.map(\.length) == [16, 21])
        // Their hint entries.
        var writer = HintWriter(segmentNumber: 1, segmentSize: UInt64(bytes.count), format: .v2(baseSequence: 7))
        bytes.withUnsafeBytes { raw in for frame in frames { writer.append(frame, of: raw) } }
        let hint = writer.finish()
        let entries: [UInt8] = [0x21, 0x0e, 0x04, 0x01, 0x10, 0x01, 0x01, 0x11, 0x00, 0xd4, 0x04, 0x01, 0x15, 0x00]
        #expect(Array(hint.dropFirst(HintFile.headerSize).dropLast(8)) == entries)
    }
}

extension CompactFormatTests {
    /// After damage to the first frame of a large batch, the search for a valid frame finds the next
    /// whole batch (not a frame inside the damaged one, whose batch checksum names the lost bytes), or
    /// nothing when there is none.
    @Test func theSearchAfterDamageSkipsTheRestOfADamagedBatch() {
        let frames = (0..<2_000).map { index in
            ModelFrame(
                kind: .put, flags: [], id: UInt64(index + 1), typeTag: 1, references: [],
                payload: [UInt8(index & 0xFF)],
                sequence: 5)
        }
        let next = ModelFrame(kind: .put, flags: [], id: 9_999, typeTag: 1, references: [], payload: [9], sequence: 6)
        for followed in [false, true] {
            var (bytes, offsets) = Self.segment(followed ? [frames, [next]] : [frames], sealed: false)
            bytes[offsets[0] + 1] ^= 0x01
            let found = bytes.withUnsafeBytes { raw in
                FrameDecoder.nextValidFrame(in: raw, after: offsets[0], format: FrameFormat(segment: raw))
            }
            #expect(found == (followed ? offsets.last : nil), "followed: \(followed)")
        }
    }
}
