import Foundation

// The seeded generator of the tests (and of the demo, the crash harness and the benchmarks).
@_exported import struct LogStoreExamples.SplitMix64

/// The seed a randomized test runs with, printed so that a failing run can be replayed: `LOGSTORE_SEED`
/// from the environment when it is set, else `fallback` (a fixed seed, or a random one).
///
/// For example:
/// ```swift
/// var random = SplitMix64(seed: testSeed("PropertyTests", default: 0xC0FFEE))
/// ```
package func testSeed(_ label: String, default fallback: @autoclosure () -> UInt64) -> UInt64 {
    let seed = ProcessInfo.processInfo.environment["LOGSTORE_SEED"].flatMap { UInt64($0) } ?? fallback()
    print("\(label) seed \(seed) (replay with LOGSTORE_SEED=\(seed))")
    return seed
}
