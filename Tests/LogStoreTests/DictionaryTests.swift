import Foundation
@_spi(Engine) import LogStoreFormat
import TestSupport
import Testing

@testable @_spi(Testing) import LogStore

/// Shared compression dictionaries: the file codec, compression against a dictionary, frames naming one,
/// and a store building, using, recompressing with and retiring them.
@Suite struct DictionaryTests {
    /// A JSON-like record of about 100–300 bytes, as the benchmarks write.
    static func document(_ serial: Int, _ random: inout SplitMix64) -> [UInt8] {
        let names = ["Ada", "Alan", "Grace", "Linus", "Barbara", "Edsger", "Margaret", "Dennis"]
        let words = ["quiet", "river", "paper", "lantern", "orbit", "maple", "signal", "harbor", "cobalt", "meadow"]
        let name = names[Int(random.next() % UInt64(names.count))]
        var bio: [String] = []
        for _ in 0..<(5 + Int(random.next() % 30)) { bio.append(words[Int(random.next() % UInt64(words.count))]) }
        let text =
            "{\"id\":\(serial),\"name\":\"\(name)\",\"email\":\"\(name.lowercased())@mail.example\","
            + "\"age\":\(18 + random.next() % 70),\"active\":\(random.next() % 2 == 0),\"bio\":\"\(bio.joined(separator: " "))\"}"
        return Array(text.utf8)
    }

    /// Options that build a dictionary early (small segments, no background compaction).
    static var options: StoreOptions {
        var options = StoreOptions(segmentSize: 1 << 20)
        options.compaction.background = false
        return options
    }

    /// Writes `count` documents in batches of 100 and returns them by id.
    static func fill(_ store: Store, count: Int, seed: UInt64) throws -> [ObjectID: [UInt8]] {
        var random = SplitMix64(seed: seed)
        var written: [ObjectID: [UInt8]] = [:]
        var serial = 0
        while serial < count {
            var batch = WriteBatch()
            for _ in 0..<min(100, count - serial) {
                serial += 1
                let id = store.newID()
                let payload = document(serial, &random)
                batch.put(id, typeTag: 1, payload: payload)
                written[id] = payload
            }
            try store.write(batch)
        }
        return written
    }

    // MARK: - The file

    @Test func aDictionaryFileRoundTrips() throws {
        let content = (0..<1000).map { UInt8(truncatingIfNeeded: $0 * 7) }
        let bytes = DictionaryFile.encode(id: 3, content: content)
        #expect(bytes.count == DictionaryFile.headerSize + content.count + DictionaryFile.checksumSize)
        let decoded = try bytes.withUnsafeBytes { try DictionaryFile.decode($0).get() }
        #expect(decoded.id == 3)
        #expect(decoded.content == content)
        #expect(DictionaryFile.fileName(3) == "0000000003.dict")
        #expect(DictionaryFile.id(fromFileName: "0000000003.dict") == 3)
        #expect(DictionaryFile.id(fromFileName: "3.dict") == nil)
        #expect(DictionaryFile.id(fromFileName: "0000000003.seg") == nil)
    }

    @Test func everyChangedByteAndEveryTruncationOfADictionaryFileIsRefused() {
        let content = Array("{\"name\":\"Ada\",\"bio\":\"river paper\"}".utf8)
        let bytes = DictionaryFile.encode(id: 1, content: content)
        for offset in bytes.indices {
            for change: UInt8 in [0x01, 0x80, 0xFF] {
                var damaged = bytes
                damaged[offset] ^= change
                let result = damaged.withUnsafeBytes { DictionaryFile.decode($0) }
                guard case .failure = result else {
                    Issue.record("a change of byte \(offset) by \(change) was accepted")
                    return
                }
            }
        }
        for length in 0..<bytes.count {
            let result = Array(bytes.prefix(length)).withUnsafeBytes { DictionaryFile.decode($0) }
            guard case .failure = result else {
                Issue.record("a truncation to \(length) bytes was accepted")
                return
            }
        }
    }

    @Test func randomBytesNeverDecodeAsADictionaryFile() {
        var random = SplitMix64(seed: testSeed("DictionaryTests.random", default: 0xD1C7))
        for round in 0..<2_000 {
            var bytes = (0..<Int(random.next() % 200)).map { _ in UInt8(truncatingIfNeeded: random.next()) }
            if round % 2 == 0 { bytes = DictionaryFile.magic + bytes }  // past the magic, into the fields
            let result = bytes.withUnsafeBytes { DictionaryFile.decode($0) }
            if case .success = result { Issue.record("round \(round): random bytes decoded") }
        }
    }

    // MARK: - Compression

    @Test func payloadsRoundTripThroughADictionaryAndShrink() throws {
        var random = SplitMix64(seed: testSeed("DictionaryTests.compress", default: 0xC0DE))
        let samples = (0..<1_000).map { Self.document($0, &random) }
        let content = DictionarySampler.content(of: samples, total: samples.reduce(0) { $0 + $1.count })
        let dictionary = try #require(CompressionDictionary(id: 1, content: content))
        let work = try #require(Compression.WorkStream())
        var raw = 0
        var stored = 0
        for serial in 1_000..<2_000 {
            let payload = Self.document(serial, &random)
            var output = [UInt8](repeating: 0, count: Compression.bound(payload.count))
            let length = try #require(
                payload.withUnsafeBytes { source in
                    output.withUnsafeMutableBytes { target in
                        dictionary.compress(source, into: target.baseAddress!, capacity: target.count, work: work)
                    }
                })
            let back = output.prefix(length).withUnsafeBytes {
                dictionary.decompress($0, originalLength: payload.count)
            }
            #expect(back == payload)
            raw += payload.count
            stored += length
        }
        #expect(Double(stored) / Double(raw) < 0.6, "compressed to \(stored) of \(raw) bytes")
    }

    @Test func malformedBlocksNeverDecompressAgainstADictionary() throws {
        var random = SplitMix64(seed: testSeed("DictionaryTests.malformed", default: 0xBAD))
        let content = (0..<4_096).map { _ in UInt8(truncatingIfNeeded: random.next() % 64 + 32) }
        let dictionary = try #require(CompressionDictionary(id: 1, content: content))
        for _ in 0..<5_000 {
            let bytes = (0..<Int(1 + random.next() % 64)).map { _ in UInt8(truncatingIfNeeded: random.next()) }
            let length = Int(1 + random.next() % 512)
            // LZ4 never reads or writes outside the buffers: the result is nil or exactly `length` bytes.
            let out = bytes.withUnsafeBytes { dictionary.decompress($0, originalLength: length) }
            if let out { #expect(out.count == length) }
            // Into a buffer, the same verdict, and the same bytes when it succeeds.
            var buffer = [UInt8](repeating: 7, count: Int(random.next() % 600))
            let succeeded = bytes.withUnsafeBytes { dictionary.decompress($0, originalLength: length, into: &buffer) }
            #expect(succeeded == (out != nil))
            if let out { #expect(buffer == out) }
            let plainOut = bytes.withUnsafeBytes { Compression.decompress($0, originalLength: length) }
            let plainSucceeded = bytes.withUnsafeBytes {
                Compression.decompress($0, originalLength: length, into: &buffer)
            }
            #expect(plainSucceeded == (plainOut != nil))
            if let plainOut { #expect(buffer == plainOut) }
        }
    }

    @Test func aFrameNamingADictionaryDecodesOnlyWithIt() throws {
        var random = SplitMix64(seed: 7)
        let samples = (0..<500).map { Self.document($0, &random) }
        let content = DictionarySampler.content(of: samples, total: samples.reduce(0) { $0 + $1.count })
        let dictionary = try #require(CompressionDictionary(id: 4, content: content))
        let work = try #require(Compression.WorkStream())
        var encoder = CompactFrameEncoder(compressionMinimumSize: 512)
        encoder.dictionary = (dictionary, work)
        let payload = Self.document(999, &random)
        let buffer = WriteBuffer(capacity: 1 << 12)
        let length = payload.withUnsafeBytes { bytes in
            encoder.append(
                kind: .put, flags: [], sequence: 10, baseSequence: 9, id: 77, typeTag: 2,
                references: .ids([ObjectID(70)]),
                payload: .raw(bytes), batchStart: 0, to: buffer)
        }
        #expect(length < payload.count)
        let frame = try FrameDecoder.decode(buffer.bytes, at: 0, format: .v2(baseSequence: 9)).get()
        #expect(frame.dictionary == 4)
        #expect(frame.originalLength == payload.count)
        var dictionaries = CompressionDictionaries()
        let missing = FrameDecoder.payload(of: frame, in: buffer.bytes, dictionaries: dictionaries)
        #expect(missing == .failure(.missingDictionary(4)))
        #expect(FrameDecoder.payload(of: frame, in: buffer.bytes) == nil)
        dictionaries.add(dictionary)
        let found = FrameDecoder.payload(of: frame, in: buffer.bytes, dictionaries: dictionaries)
        #expect(found == .success(payload))
    }

    // MARK: - A store

    @Test func aStoreBuildsADictionaryAndItsSmallRecordsShrink() throws {
        let directory = TemporaryStore("dictionary-build")
        let store = try directory.open(options: Self.options)
        let written = try Self.fill(store, count: 6_000, seed: 11)
        #expect(directory.fileNames().contains("0000000001.dict"))
        for (id, payload) in written { #expect(try store.get(id)?.payload == payload) }
        let byDictionary = try store.snapshot().spaceByDictionary()
        let compressed = try #require(byDictionary[1])
        #expect(compressed.ratio < 0.6, "records against the dictionary take \(compressed.ratio) of their size")
        // Records written before the dictionary existed are stored as they are.
        #expect((byDictionary[0]?.records ?? 0) > 0)
        try store.close()

        let reopened = try directory.open(options: Self.options)
        for (id, payload) in written { #expect(try reopened.get(id)?.payload == payload) }
        #expect(try reopened.snapshot().dictionaries().map(\.id) == [1])
        try reopened.close()
        let report = try Store.verify(at: directory.path)
        #expect(report.isSound, "\(report.problems)")
        #expect(report.dictionaries == 1)
    }

    /// A read into a reused payload buffer gives the same records as a plain read: payloads compressed
    /// against the dictionary, compressed without one (written before it), stored as they are (too small
    /// or incompressible), and empty; records kept from earlier reads keep their payloads while the buffer
    /// is written again.
    @Test func readsIntoAReusedPayloadBufferGiveTheSameRecords() throws {
        let directory = TemporaryStore("dictionary-payload-buffer", unverifiedBecause: "its dictionary is deleted")
        let store = try directory.open(options: Self.options)
        // Before the dictionary exists: random payloads (stored as they are) and repetitive ones (LZ4
        // without a dictionary).
        var random = SplitMix64(seed: 22)
        var written: [ObjectID: [UInt8]] = [:]
        var batch = WriteBatch()
        for length in [0, 1, 7, 5_000, 70_000] {
            let id = store.newID()
            let payload = (0..<length).map { _ in UInt8(truncatingIfNeeded: random.next()) }
            batch.put(id, typeTag: 2, payload: payload)
            written[id] = payload
        }
        for length in [4_000, 70_000] {
            let id = store.newID()
            let payload = (0..<length).map { UInt8(truncatingIfNeeded: $0 % 17) }
            batch.put(id, typeTag: 2, payload: payload)
            written[id] = payload
        }
        try store.write(batch)
        written.merge(try Self.fill(store, count: 6_000, seed: 21)) { $1 }
        let snapshot = try store.snapshot()
        let space = snapshot.spaceByDictionary()
        #expect(space.count == 2, "records with and without the dictionary")
        let plain = try #require(space[0])
        #expect(plain.frameBytes < plain.payloadBytes, "the repetitive payloads are stored compressed")
        var buffer: [UInt8] = []
        var kept: [(ObjectID, [UInt8])] = []
        for (index, id) in written.keys.shuffled(using: &random).enumerated() {
            let plain = try #require(try snapshot.versionedGet(id))
            let reused = try #require(try snapshot.versionedGet(id, payloadBuffer: &buffer))
            #expect(reused.record == plain.record && reused.version == plain.version, "object \(id)")
            if index % 7 == 0 { kept.append((id, reused.record.payload)) }
        }
        for (id, payload) in kept { #expect(payload == written[id], "kept record of object \(id)") }
        #expect(try snapshot.versionedGet(ObjectID(1 << 50), payloadBuffer: &buffer) == nil)
        try store.close()

        // Damage is the same typed error, naming the segment and the offset.
        try FileManager.default.removeItem(atPath: directory.path + "/0000000001.dict")
        let reopened = try directory.open(options: Self.options)
        let view = try reopened.snapshot()
        let compressed = try #require(written.keys.sorted().last { (try? view.versionedGet($0)) == nil })
        #expect {
            _ = try view.versionedGet(compressed, payloadBuffer: &buffer)
        } throws: { error in
            guard let error = error as? LogStoreError else { return false }
            return error.code == .missingDictionary && error.file?.hasSuffix(".seg") == true && error.offset != nil
        }
        try reopened.close()
    }

    /// Batches compressed on two threads (``BatchPrecompression``) give the same frames, byte for byte,
    /// as the writing thread alone: documents, incompressible payloads, payloads below the dictionary's
    /// minimum and above the plain-compression minimum, deletes and roots in the same batches.
    @Test func batchesCompressedOnTwoThreadsAreTheSameBytes() throws {
        func write(parallel: Bool) throws -> (TemporaryStore, [ObjectID: [UInt8]]) {
            let directory = TemporaryStore("dictionary-parallel-\(parallel)")
            var options = Self.options
            options.tuning.parallelCompressionMinimumPuts = parallel ? 1 : .max
            let store = try directory.open(options: options)
            var written = try Self.fill(store, count: 3_000, seed: 5)
            var random = SplitMix64(seed: 99)
            for round in 0..<20 {
                var batch = WriteBatch()
                for index in 0..<150 {
                    let id = store.newID()
                    let payload: [UInt8]
                    switch index % 5 {
                    case 0: payload = payloadBytes(200, seed: random.next())  // incompressible
                    case 1:  // around the dictionary's minimum (16 bytes)
                        payload = Array(repeating: UInt8(index), count: 10 + index % 9)
                    case 2:  // above LZ4's 4 KiB, where it copies the dictionary's state instead of attaching it
                        payload = payloadBytes(index % 2 == 0 ? 2_000 : 5_000, seed: random.next(), compressible: true)
                    default: payload = Self.document(round * 1_000 + index, &random)
                    }
                    batch.put(id, typeTag: UInt32(index % 3), payload: payload)
                    written[id] = payload
                }
                if let victim = written.keys.sorted().dropFirst(round * 7).first {
                    batch.delete(victim)
                    written[victim] = nil
                }
                if let newest = written.keys.max() { batch.setRoot("round", to: newest) }
                try store.write(batch)
            }
            for (id, payload) in written { #expect(try store.get(id)?.payload == payload) }
            try store.close()
            return (directory, written)
        }
        let (parallel, parallelWritten) = try write(parallel: true)
        let (serial, serialWritten) = try write(parallel: false)
        #expect(parallelWritten == serialWritten)
        #expect(parallel.fileNames().contains("0000000001.dict"))
        let segments = parallel.fileNames().filter { $0.hasSuffix(".seg") }
        #expect(segments == serial.fileNames().filter { $0.hasSuffix(".seg") })
        for name in segments {
            let mine = try Data(contentsOf: URL(fileURLWithPath: parallel.path + "/" + name))
            let theirs = try Data(contentsOf: URL(fileURLWithPath: serial.path + "/" + name))
            // The header carries the creation time; the frames after it must be equal.
            // (A Bool: a failing comparison of megabytes would make Swift Testing diff them element by element.)
            let same = mine.dropFirst(LogFormat.segmentHeaderSize) == theirs.dropFirst(LogFormat.segmentHeaderSize)
            #expect(same, "\(name) differs")
        }
        let report = try Store.verify(at: parallel.path)
        #expect(report.isSound, "\(report.problems)")
    }

    @Test func withoutTheOptionNoDictionaryIsBuilt() throws {
        let directory = TemporaryStore("dictionary-off")
        var options = Self.options
        options.sharedDictionary = false
        let store = try directory.open(options: options)
        _ = try Self.fill(store, count: 3_000, seed: 12)
        #expect(!directory.fileNames().contains { $0.hasSuffix(".dict") })
        #expect(try store.snapshot().spaceByDictionary().keys.sorted() == [0])
        try store.close()
    }

    @Test func compactionRecompressesWhatWasWrittenBeforeTheDictionary() throws {
        let directory = TemporaryStore("dictionary-compact")
        let store = try directory.open(options: Self.options)
        var written = try Self.fill(store, count: 6_000, seed: 13)
        let before = try #require(try store.snapshot().spaceByDictionary()[0]).records
        // Garbage in every segment so that compaction copies the rest.
        for id in written.keys.sorted().enumerated().filter({ $0.offset % 3 == 0 }).map(\.element) {
            try store.delete(id)
            written[id] = nil
        }
        try store.compact()
        let after = try store.snapshot().spaceByDictionary()
        #expect((after[0]?.records ?? 0) < before / 2, "\(after[0]?.records ?? 0) of \(before) still raw")
        for (id, payload) in written { #expect(try store.get(id)?.payload == payload) }
        try store.close()
        let reopened = try directory.open(options: Self.options)
        for (id, payload) in written { #expect(try reopened.get(id)?.payload == payload) }
        try reopened.close()
    }

    @Test func aFullRewriteBuildsANewDictionaryAndRetiresTheOld() throws {
        let directory = TemporaryStore("dictionary-rewrite")
        let store = try directory.open(options: Self.options)
        let written = try Self.fill(store, count: 6_000, seed: 14)
        let old = try store.snapshot()
        #expect(old.dictionaries().map(\.id) == [1])
        try store.rewriteAllSegments()
        let view = try store.snapshot()
        #expect(view.dictionaries().map(\.id) == [2])
        #expect(view.spaceByDictionary().keys.sorted() == [2])
        #expect(directory.fileNames().filter { $0.hasSuffix(".dict") } == ["0000000002.dict"])
        for (id, payload) in written {
            #expect(try store.get(id)?.payload == payload)
            // A snapshot of before the rewrite still reads the old frames against the old dictionary.
            #expect(try old.get(id)?.payload == payload)
        }
        try store.close()
        let reopened = try directory.open(options: Self.options)
        for (id, payload) in written { #expect(try reopened.get(id)?.payload == payload) }
        try reopened.close()
    }

    @Test func aDictionaryNamedByAnyFrameOnDiskIsKept() throws {
        let directory = TemporaryStore("dictionary-retire")
        let store = try directory.open(options: Self.options)
        let written = try Self.fill(store, count: 6_000, seed: 17)
        // A second dictionary, without a rewrite: the frames on disk still name the first.
        _ = try store.pipeline.installDictionary(Array(repeating: UInt8(ascii: "x"), count: 1_000))
        // Overwrites against the second leave the first named only by dead frames, which a crash of a
        // non-durable policy could make current again: it stays.
        for (id, payload) in written.prefix(100) { try store.put(id, typeTag: 1, payload: payload) }
        #expect(try store.removeUnusedDictionaries().isEmpty)
        #expect(directory.fileNames().filter { $0.hasSuffix(".dict") } == ["0000000001.dict", "0000000002.dict"])
        // A rewrite recompresses everything against a third, and then the first two are named by no frame.
        try store.rewriteAllSegments()
        #expect(directory.fileNames().filter { $0.hasSuffix(".dict") } == ["0000000003.dict"])
        for (id, payload) in written { #expect(try store.get(id)?.payload == payload) }
        try store.close()
        let reopened = try directory.open(options: Self.options)
        for (id, payload) in written { #expect(try reopened.get(id)?.payload == payload) }
        try reopened.close()
    }

    /// A full rewrite asked for while `close()` runs writes no dictionary: once the close has begun, the
    /// dictionary is refused with `closed`, so nothing is written beside the close or after it.
    @Test func aRewriteDuringCloseWritesNoDictionary() throws {
        let directory = TemporaryStore("dictionary-close-rewrite")
        let faults = FaultInjector()
        var options = Self.options
        options.faultInjector = faults
        let store = try directory.open(options: options)
        // Fewer payloads than the sampler gathers: no dictionary yet, a rewrite would build one.
        let written = try Self.fill(store, count: 300, seed: 23)
        #expect(directory.fileNames().filter { $0.hasSuffix(".dict") }.isEmpty)
        let outcome = Shared<String?>(nil)
        // Once close has refused new batches, it syncs the segment being written: just before, another
        // thread asks for a full rewrite, and the close goes on only when that call has returned.
        faults.perform(before: .sync, pathSuffix: "." + LogFormat.segmentExtension) { _ in
            let rewrite = ThreadGroup()
            rewrite.start(1) { _ in
                let result: String
                do throws(LogStoreError) {
                    _ = try store.rewriteAllSegments()
                    result = "rewritten"
                } catch {
                    result = "\(error.code)"
                }
                outcome.withLock { $0 = result }
            }
            rewrite.join()
        }
        try store.close()
        #expect(outcome.withLock { $0 } == "closed")
        #expect(directory.fileNames().filter { $0.hasSuffix(".dict") }.isEmpty, "\(directory.fileNames())")
        let reopened = try directory.open(options: Self.options)
        for (id, payload) in written { #expect(try reopened.get(id)?.payload == payload) }
        try reopened.close()
    }

    @Test func aMissingDictionaryIsATypedErrorWithFileAndOffset() throws {
        let directory = TemporaryStore("dictionary-missing", unverifiedBecause: "its dictionary is deleted")
        let store = try directory.open(options: Self.options)
        let written = try Self.fill(store, count: 6_000, seed: 15)
        try store.close()
        try FileManager.default.removeItem(atPath: directory.path + "/0000000001.dict")
        let reopened = try directory.open(options: Self.options)
        let compressed = try #require(
            written.keys.sorted().last { id in
                (try? reopened.snapshot().versionedGet(id)) == nil
            })
        #expect {
            _ = try reopened.get(compressed)
        } throws: { error in
            guard let error = error as? LogStoreError else { return false }
            return error.code == .missingDictionary && error.file?.hasSuffix(".seg") == true && error.offset != nil
        }
        try reopened.close()
        let report = try Store.verify(at: directory.path)
        #expect(report.problems.contains { $0.message.contains("dictionary 1") && $0.offset != nil })
    }

    @Test func aDamagedDictionaryFileRefusesOpenAndVerifyNamesIt() throws {
        let directory = TemporaryStore("dictionary-damaged", unverifiedBecause: "its dictionary is damaged")
        let store = try directory.open(options: Self.options)
        _ = try Self.fill(store, count: 6_000, seed: 16)
        try store.close()
        let path = directory.path + "/0000000001.dict"
        var bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: path)))
        bytes[100] ^= 0x20
        try Data(bytes).write(to: URL(fileURLWithPath: path))
        #expect {
            _ = try directory.open(options: Self.options)
        } throws: { error in
            (error as? LogStoreError)?.code == .corruptDictionary && (error as? LogStoreError)?.file == path
        }
        let report = try Store.verify(at: directory.path)
        #expect(report.problems.contains { $0.file == path && $0.message.contains("checksum") })
    }

    // MARK: - A dictionary tied to its store and content

    /// A closed store with dictionary 1 and records compressed against it; returns them by id.
    func storeWithADictionary(_ directory: TemporaryStore, seed: UInt64) throws -> [ObjectID: [UInt8]] {
        let store = try directory.open(options: Self.options)
        let written = try Self.fill(store, count: 6_000, seed: seed)
        try store.close()
        #expect(directory.fileNames().contains("0000000001.dict"))
        return written
    }

    /// The error an open throws, expected to be `corruptDictionary` naming `path`.
    func expectRefused(_ directory: TemporaryStore, path: String, readOnly: Bool = false) {
        var options = Self.options
        options.readOnly = readOnly
        #expect {
            _ = try Store.open(at: directory.path, options: options)
        } throws: { error in
            guard let error = error as? LogStoreError else { return false }
            return error.code == .corruptDictionary && error.file == path
                && error.message.contains("not the dictionary this store wrote")
        }
    }

    /// Another store's dictionary, a valid file of the same name, copied over the store's own: every
    /// record compressed against it would decode into other bytes. Open refuses it, naming it; `verify`
    /// reports it.
    @Test func anotherStoresDictionaryIsRefusedAndVerifyNamesIt() throws {
        let directory = TemporaryStore("dictionary-foreign", unverifiedBecause: "its dictionary is another store's")
        let other = TemporaryStore("dictionary-foreign-source")
        _ = try storeWithADictionary(directory, seed: 21)
        _ = try storeWithADictionary(other, seed: 22)
        let path = directory.path + "/0000000001.dict"
        try FileManager.default.removeItem(atPath: path)
        try FileManager.default.copyItem(atPath: other.path + "/0000000001.dict", toPath: path)

        expectRefused(directory, path: path)
        expectRefused(directory, path: path, readOnly: true)
        let report = try Store.verify(at: directory.path)
        #expect(
            report.problems.contains { $0.file == path && $0.message.contains("not the dictionary this store wrote") },
            "\(report.problems)")
    }

    /// The store's own dictionary with its content zeroed and its checksum computed anew: valid as a file,
    /// refused as the store's dictionary.
    @Test func aDictionaryAlteredWithItsChecksumFixedIsRefused() throws {
        let directory = TemporaryStore("dictionary-zeroed", unverifiedBecause: "its dictionary is altered")
        _ = try storeWithADictionary(directory, seed: 23)
        let path = directory.path + "/0000000001.dict"
        let bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: path)))
        let decoded = try bytes.withUnsafeBytes { try DictionaryFile.decode($0).get() }
        let zeroed = [UInt8](repeating: 0, count: decoded.content.count)
        try Data(DictionaryFile.encode(id: 1, content: zeroed)).write(to: URL(fileURLWithPath: path))

        expectRefused(directory, path: path)
        let report = try Store.verify(at: directory.path)
        #expect(report.problems.contains { $0.file == path }, "\(report.problems)")
    }

    /// A store whose manifest records no dictionary (written by a version that did not record them) opens
    /// as it did, read-only and for writing; the open for writing records its dictionary, and from then on
    /// another store's dictionary is refused.
    @Test func aManifestWithoutDictionaryRecordsGetsThemAtTheNextOpenForWriting() throws {
        let directory = TemporaryStore("dictionary-unrecorded-manifest")
        let other = TemporaryStore("dictionary-unrecorded-source")
        let written = try storeWithADictionary(directory, seed: 24)
        _ = try storeWithADictionary(other, seed: 25)
        let manifestPath = directory.path + "/" + SegmentManifest.fileName
        func manifestVersion() throws -> UInt16 {
            let bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: manifestPath)))
            return UInt16(bytes[8]) | UInt16(bytes[9]) << 8
        }
        #expect(try manifestVersion() == SegmentManifest.dictionaryVersion)
        let recorded = try [UInt8](Data(contentsOf: URL(fileURLWithPath: manifestPath))).withUnsafeBytes {
            try SegmentManifest.decode($0).get()
        }
        let older = SegmentManifest(
            segments: recorded.segments, reservedIDs: recorded.reservedIDs, cleanClose: recorded.cleanClose)
        try Data(older.encoded()).write(to: URL(fileURLWithPath: manifestPath))
        #expect(try manifestVersion() == SegmentManifest.version)

        var readOnly = Self.options
        readOnly.readOnly = true
        let reader = try Store.open(at: directory.path, options: readOnly)
        for (id, payload) in written { #expect(try reader.get(id)?.payload == payload) }
        try reader.close()
        #expect(try manifestVersion() == SegmentManifest.version)

        let store = try directory.open(options: Self.options)
        for (id, payload) in written { #expect(try store.get(id)?.payload == payload) }
        try store.close()
        #expect(try manifestVersion() == SegmentManifest.dictionaryVersion)

        let path = directory.path + "/0000000001.dict"
        let own = try Data(contentsOf: URL(fileURLWithPath: path))
        try FileManager.default.removeItem(atPath: path)
        try FileManager.default.copyItem(atPath: other.path + "/0000000001.dict", toPath: path)
        expectRefused(directory, path: path)
        try own.write(to: URL(fileURLWithPath: path))
    }

    /// A dictionary file the manifest does not record (its write was interrupted before the manifest
    /// recorded it) is not used, and the store opens.
    @Test func anUnrecordedDictionaryFileIsNotUsed() throws {
        let directory = TemporaryStore("dictionary-unrecorded-file")
        let written = try storeWithADictionary(directory, seed: 26)
        let stray = directory.path + "/0000000002.dict"
        try Data(DictionaryFile.encode(id: 2, content: Array(repeating: 7, count: 100))).write(
            to: URL(fileURLWithPath: stray))
        let store = try directory.open(options: Self.options)
        #expect(store.openNotes.contains { $0.contains(stray) }, "\(store.openNotes)")
        #expect(try store.snapshot().dictionaries().map(\.id) == [1])
        for (id, payload) in written { #expect(try store.get(id)?.payload == payload) }
        try store.close()
        try FileManager.default.removeItem(atPath: stray)
    }
}
