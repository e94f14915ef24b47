import BenchmarkSupport
import LogStoreExamples

/// One record of the key-value workloads: the same bytes go to every store.
struct ComparisonRecord: Sendable {
    var typeTag: UInt32
    var payload: [UInt8]

    /// The type's name, for SQLite's `type TEXT` column.
    var typeName: String { ComparisonRecord.typeNames[Int(typeTag) % ComparisonRecord.typeNames.count] }
    static let typeNames = ["shape", "user", "order", "event", "note"]
}

/// The deterministic data of a comparison run: `count` records to write first, a second set to
/// overwrite them with, and the random key sequences every store reads and overwrites in the same order.
struct DataSet: Sendable {
    let records: [ComparisonRecord]
    let replacements: [ComparisonRecord]
    /// Keys for the gets (uniform over `0..<count`).
    let readKeys: [Int]
    /// Keys for single-record commits and the mixed workload.
    let writeKeys: [Int]
    /// The payload bytes of `records`.
    let payloadBytes: Int

    var count: Int { records.count }

    /// `count` JSON-like records of `lengths` bytes (uniform) from ``PayloadGenerator``.
    init(count: Int, lengths: ClosedRange<Int>, reads: Int) {
        var generator = PayloadGenerator(lengthRange: lengths)
        records = (0..<count).map { _ in
            let object = generator.next(earlierCount: 0)
            return ComparisonRecord(typeTag: object.typeTag, payload: object.payload)
        }
        replacements = (0..<count).map { _ in
            let object = generator.next(earlierCount: 0)
            return ComparisonRecord(typeTag: object.typeTag, payload: object.payload)
        }
        var random = SplitMix64(seed: 0xC0FF_EE00_1234)
        readKeys = (0..<reads).map { _ in random.below(count) }
        writeKeys = (0..<reads).map { _ in random.below(count) }
        payloadBytes = records.reduce(0) { $0 + $1.payload.count }
    }

    /// The keys `0..<count` in a random order of its own for each `round`.
    func shuffledKeys(round: Int) -> [Int] {
        var keys = Array(0..<count)
        var random = SplitMix64(seed: 0x5487_0000 &+ UInt64(round))
        for index in stride(from: keys.count - 1, to: 0, by: -1) {
            keys.swapAt(index, random.below(index + 1))
        }
        return keys
    }

    /// The record key `key` holds after overwrite round `round` (rounds alternate between the two sets,
    /// shifted, so every round changes every record).
    func record(forKey key: Int, round: Int) -> ComparisonRecord {
        let shifted = (key &+ round &* 7_919) % count
        return round % 2 == 0 ? replacements[shifted] : records[shifted]
    }
}
