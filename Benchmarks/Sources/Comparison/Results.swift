import Foundation

/// An error of the comparison program itself.
struct ComparisonError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}

/// The samples of one figure for one store: one per repetition.
struct Samples: Codable, Sendable {
    var values: [Double] = []

    var median: Double {
        let sorted = values.sorted()
        guard !sorted.isEmpty else { return .nan }
        return sorted.count % 2 == 1
            ? sorted[sorted.count / 2] : (sorted[sorted.count / 2 - 1] + sorted[sorted.count / 2]) / 2
    }
    var minimum: Double { values.min() ?? .nan }
    var maximum: Double { values.max() ?? .nan }
}

/// One row of the report: a workload's figure for every store that ran it.
struct Figure: Codable, Sendable {
    /// Stable identifier, for the JSON and the floors.
    var key: String
    var title: String
    var unit: String
    var higherIsBetter: Bool
    /// Store name → samples.
    var samples: [String: Samples] = [:]
    /// Extra detail per store (latency percentiles), shown under the table.
    var notes: [String: String] = [:]

    func median(_ peer: String) -> Double? { samples[peer].map(\.median) }

    /// The best store other than LogStore, and its median.
    var bestPeer: (name: String, value: Double)? {
        samples.filter { $0.key != PeerKind.logStore.rawValue }
            .map { (name: $0.key, value: $0.value.median) }
            .min { higherIsBetter ? $0.value > $1.value : $0.value < $1.value }
    }

    /// LogStore's median ÷ the best peer's.
    var ratio: Double? {
        guard let ours = median(PeerKind.logStore.rawValue), let best = bestPeer, best.value != 0 else { return nil }
        return ours / best.value
    }

    /// Whether LogStore is at least as good as every peer.
    var logStoreWins: Bool? {
        guard let ratio else { return nil }
        return higherIsBetter ? ratio >= 1 : ratio <= 1
    }
}

/// The machine a run was made on.
struct MachineInfo: Codable, Sendable {
    var date: String
    var cores: Int
    var memory: String
    var cpu: String
    var kernel: String
    var disk: String
    var sqliteVersion: String
    var lmdbVersion: String
    var commit: String
}

/// Everything a run produced, as written to `comparison.json`.
struct ComparisonReport: Codable, Sendable {
    var machine: MachineInfo
    var command: String
    var parameters: [String: String]
    var durability: [String: String]
    var setup: [String: String]
    var figures: [Figure]
    var floors: [FloorCheck]
}

/// A floor the report checks: LogStore ÷ a named store (or an absolute figure) against a bound.
struct FloorCheck: Codable, Sendable {
    var description: String
    var measured: String
    var met: Bool
}
