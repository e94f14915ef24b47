@_spi(Engine) import LogStoreFormat

/// Gathers put payloads until there are enough to build a store's shared compression dictionary, then
/// builds its content: payloads taken evenly across what was gathered, up to 64 KiB.
///
/// One dictionary per store rather than one per type tag: measured on 200,000 JSON-like records of 100–300
/// bytes in four schemas, one 64 KiB dictionary sampled across all types stored them in 39.8% of their
/// size, four 16 KiB per-type dictionaries (the same memory) in 39.1%, four 64 KiB ones in 38.0% — a few
/// percent for four times the memory and a dictionary choice per frame
/// (`Benchmarks/Experiments/lz4-dictionary`).
struct DictionarySampler: Sendable {
    /// Bytes of payloads gathered before the dictionary is built: four times its size, so it is a sample
    /// of them rather than the first ones alone.
    static let gatherTarget = 4 * DictionaryFile.maximumContentSize
    /// Longer payloads are not sampled (they compress well alone, and one would fill the dictionary).
    static let maximumSampledPayload = 4_096

    private var payloads: [[UInt8]] = []
    private var gathered = 0

    /// Offers one put payload.
    mutating func offer(_ payload: [UInt8]) {
        guard payload.count >= CompactFrameEncoder.dictionaryMinimumSize, payload.count <= Self.maximumSampledPayload,
            gathered < Self.gatherTarget
        else { return }
        payloads.append(payload)
        gathered += payload.count
    }

    /// Whether enough was gathered.
    var isReady: Bool { gathered >= Self.gatherTarget }

    /// The dictionary content: every n-th payload gathered (n such that they fill about 64 KiB), in the order
    /// written, cut at 64 KiB; empty when nothing was gathered.
    func content() -> [UInt8] { Self.content(of: payloads, total: gathered) }

    /// The dictionary content of a sample of `payloads` (of `total` bytes in all).
    static func content(of payloads: [[UInt8]], total: Int) -> [UInt8] {
        let limit = DictionaryFile.maximumContentSize
        let stride = max(1, total / limit)
        var content: [UInt8] = []
        content.reserveCapacity(limit)
        var index = 0
        while index < payloads.count, content.count < limit {
            content += payloads[index].prefix(limit - content.count)
            index += stride
        }
        return content
    }

    /// Forgets what was gathered (after the dictionary was built, or could not be written).
    mutating func reset() {
        payloads = []
        gathered = 0
    }
}
