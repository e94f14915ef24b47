import LogStore
import LogStoreExamples

/// A second, independent generator of small JSON-like records, for space figures: four schemas (users,
/// orders, log events, drawing shapes), one per type tag 1…4, of about 110–290 bytes (mean ≈ 180), with
/// numbers, hex strings and free text drawn at random. Unlike ``PayloadGenerator``'s single schema, its
/// types differ, so a shared dictionary must serve them all.
public struct FourSchemaGenerator: Sendable {
    private var random: SplitMix64
    private var serial = 0

    public init(seed: UInt64 = 0x4F0E_5C4E_3A00_0001) { random = SplitMix64(seed: seed) }

    static let words = [
        "alpha", "bravo", "charlie", "delta", "echo", "foxtrot", "golf", "hotel", "india", "juliet", "kilo", "lima",
        "mike", "november", "oscar", "papa", "quebec", "romeo", "sierra", "tango", "uniform", "victor", "whiskey",
        "xray", "yankee", "zulu", "report", "meeting", "invoice", "shipping", "delayed", "payment", "received",
    ]

    private mutating func pick(_ items: [String]) -> String { items[random.below(items.count)] }
    private mutating func text(_ count: Int) -> String { (0..<count).map { _ in pick(Self.words) }.joined(separator: " ") }
    private mutating func hex(_ digits: Int) -> String {
        let value = String(random.next(), radix: 16)
        return String(String(repeating: "0", count: max(0, 16 - value.count)) + value).suffix(digits).description
    }

    /// The next record's type tag (1…4) and payload.
    public mutating func next() -> (typeTag: UInt32, payload: [UInt8]) {
        serial += 1
        let kind = random.below(4)
        let text: String
        switch kind {
        case 0:
            text =
                "{\"uid\":\(serial),\"login\":\"\(pick(Self.words))\(random.below(1000))\",\"roles\":[\"\(pick(["admin", "editor", "viewer"]))\"],"
                + "\"created\":\"2026-\(10 + random.below(3))-\(10 + random.below(18))T\(10 + random.below(14)):\(10 + random.below(50)):00Z\","
                + "\"prefs\":{\"theme\":\"\(pick(["dark", "light"]))\",\"lang\":\"\(pick(["en", "de", "fr", "ja"]))\"},"
                + "\"about\":\"\(self.text(3 + random.below(17)))\"}"
        case 1:
            let items = (0..<(1 + random.below(4))).map { _ in
                "{\"sku\":\"SKU-\(10000 + random.below(90000))\",\"qty\":\(1 + random.below(8)),\"price\":\(1 + random.below(499)).\(10 + random.below(90))}"
            }
            text =
                "{\"order\":\(serial),\"customer\":\(random.below(100_000)),\"status\":\"\(pick(["open", "paid", "shipped", "cancelled"]))\","
                + "\"items\":[\(items.joined(separator: ","))],\"total\":\(random.below(2000)).\(10 + random.below(90))}"
        case 2:
            text =
                "{\"ts\":\(1_790_000_000_000 + serial * 37),\"level\":\"\(pick(["debug", "info", "warn", "error"]))\","
                + "\"source\":\"\(pick(["api", "db", "worker", "auth"]))\",\"message\":\"\(self.text(4 + random.below(21)))\","
                + "\"trace\":\"\(hex(16))\"}"
        default:
            text =
                "{\"kind\":\"\(pick(["rect", "oval", "line", "text"]))\",\"frame\":{\"x\":\(random.below(2000)).\(random.below(10)),"
                + "\"y\":\(random.below(2000)).\(random.below(10)),\"width\":\(1 + random.below(500)).\(random.below(10)),"
                + "\"height\":\(1 + random.below(500)).\(random.below(10))},\"stroke\":\"#\(hex(6))\",\"fill\":\"#\(hex(6))\","
                + "\"lineWidth\":\(1 + random.below(5)),\"label\":\"\(self.text(random.below(6)))\"}"
        }
        return (UInt32(kind + 1), Array(text.utf8))
    }
}

/// Writes `count` records of ``FourSchemaGenerator`` in batches of 1,000; returns their payload bytes.
public func fillStoreWithFourSchemas(_ store: Store, count: Int) throws -> Int {
    var generator = FourSchemaGenerator()
    var written = 0
    var payloadBytes = 0
    while written < count {
        var batch = WriteBatch()
        for _ in 0..<min(1000, count - written) {
            let record = generator.next()
            batch.put(store.newID(), typeTag: record.typeTag, payload: record.payload)
            payloadBytes += record.payload.count
            written += 1
        }
        try store.write(batch)
    }
    return payloadBytes
}
