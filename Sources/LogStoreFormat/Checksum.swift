import CXXHash

/// XXH3-64, the checksum of frames and segment headers.
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
}
