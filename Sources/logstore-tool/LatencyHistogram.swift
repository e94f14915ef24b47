/// Counts of durations in logarithmic buckets (16 per power of two: within 6.25% of the true value),
/// for percentiles of millions of operations in constant memory.
struct LatencyHistogram: Sendable {
    private var counts = [UInt64](repeating: 0, count: 64 * 16)
    private(set) var total: UInt64 = 0
    private(set) var maximum: UInt64 = 0

    /// Adds one duration in nanoseconds.
    mutating func record(_ nanoseconds: UInt64) {
        counts[Self.bucket(of: nanoseconds)] += 1
        total += 1
        maximum = max(maximum, nanoseconds)
    }

    /// Adds every count of `other`.
    mutating func merge(_ other: LatencyHistogram) {
        for index in counts.indices { counts[index] += other.counts[index] }
        total += other.total
        maximum = max(maximum, other.maximum)
    }

    /// The duration below which `fraction` (0...1) of the recorded ones fall (the bucket's upper bound),
    /// in nanoseconds; 0 when nothing was recorded.
    func percentile(_ fraction: Double) -> UInt64 {
        guard total > 0 else { return 0 }
        let rank = UInt64((Double(total) * fraction).rounded(.up))
        var seen: UInt64 = 0
        for (index, count) in counts.enumerated() {
            seen += count
            if seen >= max(rank, 1) { return min(Self.upperBound(of: index), maximum) }
        }
        return maximum
    }

    private static func bucket(of value: UInt64) -> Int {
        guard value >= 16 else { return Int(value) }
        let exponent = 63 - value.leadingZeroBitCount  // ≥ 4
        let sub = Int((value >> UInt64(exponent - 4)) & 15)
        return min((exponent - 3) * 16 + sub, 64 * 16 - 1)
    }

    private static func upperBound(of bucket: Int) -> UInt64 {
        guard bucket >= 16 else { return UInt64(bucket) }
        let exponent = bucket / 16 + 3
        let sub = UInt64(bucket % 16)
        return ((16 + sub + 1) << UInt64(exponent - 4)) - 1
    }
}
