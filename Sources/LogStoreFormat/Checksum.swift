import CCRC32C
import CXXHash

/// The checksums of the format: XXH3-64 (version-1 frames, segment headers, hint files, version-2
/// batches) and CRC-32C (version-2 frames).
package enum Checksum {
    /// The XXH3-64 hash of `bytes`.
    @inline(__always)
    package static func xxh3(_ bytes: UnsafeRawBufferPointer) -> UInt64 {
        XXH3_64bits(bytes.baseAddress, bytes.count)
    }

    /// The XXH3-64 hash of `count` bytes at `start`.
    @inline(__always)
    package static func xxh3(_ start: UnsafeRawPointer, count: Int) -> UInt64 {
        XXH3_64bits(start, count)
    }

    /// The CRC-32C of `count` bytes at `start` (the CPU's instruction where there is one).
    @inline(__always)
    package static func crc32c(_ start: UnsafeRawPointer, count: Int) -> UInt32 {
        logstore_crc32c(0, start, count)
    }
}
