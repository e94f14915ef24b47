import Foundation
import TestSupport
import Testing

@_spi(Engine) @testable import LogStoreFormat

/// Seeded mutation fuzzing of the parsers of the files a store reads (segments with their frames and
/// payloads, hint files, dictionary files), from the committed corpus `Tests/Fixtures/FuzzCorpus`: no
/// input may crash, hang or read outside its bytes. 20,000 inputs per target in the suite;
/// `LOGSTORE_FUZZ_EXECUTIONS` sets the count (`scripts/reliability.sh` runs 10 million).
///
/// Checksums stop most random changes at the first check, so half the inputs get their checksums made
/// right again after mutation (`fixingChecksums`): those reach the field decoders behind the checks.
@Suite struct FuzzTests {
    static func fuzz(
        _ name: String, suffix: String, seed: UInt64, fixingChecksums fix: ([UInt8]) -> [UInt8],
        _ target: ([UInt8]) -> Void
    ) throws {
        let corpus = try MutationFuzzer.corpus(in: MutationFuzzer.corpusDirectory, suffix: suffix)
        #expect(!corpus.isEmpty, "no \(suffix) files in the corpus")
        var fuzzer = MutationFuzzer(corpus: corpus, seed: seed)
        let executions = MutationFuzzer.executions(default: 20_000)
        let started = ContinuousClock.now
        for corpusInput in corpus { target(corpusInput) }
        for execution in 0..<executions {
            let input = fuzzer.next()
            target(execution % 2 == 0 ? input : fix(input))
        }
        print("fuzz \(name): \(executions) executions (seed \(seed)) in \(ContinuousClock.now - started), 0 crashes")
    }

    /// A dictionary table with the corpus's dictionary, so frames that name it decompress against it.
    static let dictionaries: CompressionDictionaries = {
        var table = CompressionDictionaries()
        let files = (try? MutationFuzzer.corpus(in: MutationFuzzer.corpusDirectory, suffix: ".dict")) ?? []
        for file in files {
            let decoded = file.withUnsafeBytes { DictionaryFile.decode($0) }
            guard case .success(let file) = decoded,
                let dictionary = CompressionDictionary(id: file.id, content: file.content)
            else { continue }
            table.add(dictionary)
        }
        return table
    }()

    /// Everything a reader does with a segment's bytes: header, scan to the end (past damage), and for each
    /// frame its references and payload.
    static func parseSegment(_ input: [UInt8], verifyChecksums: Bool) {
        input.withUnsafeBytes { bytes in
            guard case .success = SegmentHeader.decode(bytes) else { return }
            var scanner = SegmentScanner(bytes: bytes)
            scanner.verifyChecksums = verifyChecksums
            // Past damage only when checking checksums (as verify does): without, every byte offset after
            // damage is a candidate frame, and the search for the next one dominates.
            _ = scanner.scan(continueAfterDamage: { _, _ in verifyChecksums }) { frame in
                _ = FrameDecoder.references(of: frame, in: bytes)
                _ = FrameDecoder.payload(of: frame, in: bytes, dictionaries: dictionaries)
            }
        }
    }

    @Test func segments() throws {
        // Segment frames carry CRC-32C and batch checksums: reading without checking them lets the decoders
        // behind see every mutation.
        try Self.fuzz("segments", suffix: ".seg", seed: testSeed("FuzzTests.segments", default: 0x5E6)) {
            $0
        } _: {
            input in
            // About half the inputs as verify reads them, the others as if every checksum held.
            Self.parseSegment(input, verifyChecksums: input.count % 2 == 0)
        }
    }

    /// The hint's XXH3 over all but its last 8 bytes, written again.
    static func fixHintChecksum(_ input: [UInt8]) -> [UInt8] {
        guard input.count >= 8 + 8 else { return input }
        var bytes = input
        let checked = bytes.count - 8
        let checksum = bytes.withUnsafeBytes { Checksum.xxh3($0.baseAddress!, count: checked) }
        withUnsafeBytes(of: checksum.littleEndian) { for index in 0..<8 { bytes[checked + index] = $0[index] } }
        return bytes
    }

    @Test func hints() throws {
        try Self.fuzz(
            "hints", suffix: ".hint", seed: testSeed("FuzzTests.hints", default: 0x41A7),
            fixingChecksums: Self.fixHintChecksum
        ) { input in
            input.withUnsafeBytes { bytes in
                guard case .success(let reader) = HintReader.open(bytes) else { return }
                reader.forEachEntry { entry in
                    _ = entry.entry
                    _ = entry.name
                    entry.forEachReference { _ in }
                }
            }
        }
    }

    @Test func dictionaries() throws {
        try Self.fuzz(
            "dictionaries", suffix: ".dict", seed: testSeed("FuzzTests.dictionaries", default: 0xD1C7),
            fixingChecksums: Self.fixHintChecksum
        ) { input in
            let decoded = input.withUnsafeBytes { DictionaryFile.decode($0) }
            guard case .success(let file) = decoded,
                let dictionary = CompressionDictionary(id: file.id, content: file.content)
            else { return }
            let sample = Array(file.content.prefix(200))
            _ = sample.withUnsafeBytes { dictionary.decompress($0, originalLength: 400) }
        }
    }
}
