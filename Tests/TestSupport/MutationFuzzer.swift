import Foundation
import LogStoreExamples

/// A seeded mutation fuzzer: each input is a corpus entry changed by one to four random mutations (bit
/// flips, random and boundary bytes, inserted, deleted and duplicated ranges, truncation, a splice with
/// another entry, a random little-endian integer). The same seed gives the same inputs.
package struct MutationFuzzer {
    private let corpus: [[UInt8]]
    private var random: SplitMix64

    /// Reads every file under `directory` (its corpus) whose name ends with `suffix`.
    package static func corpus(in directory: String, suffix: String) throws -> [[UInt8]] {
        let names = try FileManager.default.contentsOfDirectory(atPath: directory).filter { $0.hasSuffix(suffix) }
        return try names.sorted().map { [UInt8](try Data(contentsOf: URL(fileURLWithPath: directory + "/" + $0))) }
    }

    /// The committed corpus: `Tests/Fixtures/FuzzCorpus`.
    package static let corpusDirectory = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("Fixtures/FuzzCorpus").path

    /// Executions per target: `LOGSTORE_FUZZ_EXECUTIONS`, or `default`.
    package static func executions(default count: Int) -> Int {
        ProcessInfo.processInfo.environment["LOGSTORE_FUZZ_EXECUTIONS"].flatMap { Int($0) } ?? count
    }

    package init(corpus: [[UInt8]], seed: UInt64) {
        self.corpus = corpus.isEmpty ? [[]] : corpus
        random = SplitMix64(seed: seed)
    }

    private mutating func below(_ bound: Int) -> Int { bound <= 0 ? 0 : Int(random.next() % UInt64(bound)) }

    /// The next input.
    package mutating func next() -> [UInt8] {
        var bytes = corpus[below(corpus.count)]
        for _ in 0...below(4) { mutate(&bytes) }
        return bytes
    }

    private mutating func mutate(_ bytes: inout [UInt8]) {
        let position = below(bytes.count)
        switch below(10) {
        case 0 where !bytes.isEmpty: bytes[position] ^= 1 << UInt8(below(8))
        case 1 where !bytes.isEmpty: bytes[position] = UInt8(truncatingIfNeeded: random.next())
        case 2 where !bytes.isEmpty: bytes[position] = [0, 1, 0x7F, 0x80, 0xFF][below(5)]
        case 3:
            let count = 1 + below(16)
            bytes.insert(contentsOf: (0..<count).map { _ in UInt8(truncatingIfNeeded: random.next()) }, at: position)
        case 4 where !bytes.isEmpty:
            bytes.removeSubrange(position..<min(bytes.count, position + 1 + below(32)))
        case 5 where !bytes.isEmpty:
            let start = below(bytes.count)
            let chunk = bytes[start..<min(bytes.count, start + 1 + below(64))]
            bytes.insert(contentsOf: chunk, at: position)
        case 6: bytes.removeSubrange(below(bytes.count + 1)...)
        case 7:
            let other = corpus[below(corpus.count)]
            let from = below(other.count)
            bytes = Array(bytes.prefix(position)) + other[from...]
        case 8 where bytes.count >= 8:
            let at = below(bytes.count - 7)
            let values: [UInt64] = [0, 1, UInt64.max, UInt64(UInt32.max), random.next() % 65_536]
            let value = values[below(values.count)]
            let width = 1 << below(4)
            for index in 0..<width where at + index < bytes.count {
                let shift = UInt64(8 * index)
                bytes[at + index] = UInt8(truncatingIfNeeded: value >> shift)
            }
        default:
            if !bytes.isEmpty { bytes[position] &+= UInt8(truncatingIfNeeded: below(5)) &- 2 }
        }
    }
}
