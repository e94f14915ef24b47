import CLZ4

/// LZ4 block compression of payloads.
package enum Compression {
    /// Upper bound of the compressed size of `count` bytes.
    package static func bound(_ count: Int) -> Int {
        Int(LZ4_compressBound(Int32(count)))
    }

    /// Compresses `source` into `destination` (at least ``bound(_:)`` bytes).
    ///
    /// - returns: the compressed size, or nil when compression failed or would not make the data
    ///   smaller (the caller then stores the bytes raw).
    package static func compress(
        _ source: UnsafeRawBufferPointer, into destination: UnsafeMutableRawPointer, capacity: Int
    )
        -> Int?
    {
        guard let base = source.baseAddress, source.count > 0 else { return nil }
        let written = LZ4_compress_default(
            base.assumingMemoryBound(to: CChar.self),
            destination.assumingMemoryBound(to: CChar.self),
            Int32(source.count),
            Int32(capacity)
        )
        guard written > 0, Int(written) < source.count else { return nil }
        return Int(written)
    }

    /// Decompresses an LZ4 block that must expand to exactly `originalLength` bytes.
    ///
    /// `LZ4_decompress_safe` never reads or writes outside the given buffers, whatever the input.
    /// - returns: the bytes, or nil when the block is malformed or has another length.
    package static func decompress(_ source: UnsafeRawBufferPointer, originalLength: Int) -> [UInt8]? {
        guard let base = source.baseAddress, originalLength > 0 else { return nil }
        var valid = false
        let result = [UInt8](unsafeUninitializedCapacity: originalLength) { buffer, initialized in
            guard let target = buffer.baseAddress else { return }
            let produced = LZ4_decompress_safe(
                base.assumingMemoryBound(to: CChar.self),
                UnsafeMutableRawPointer(target).assumingMemoryBound(to: CChar.self),
                Int32(source.count),
                Int32(originalLength)
            )
            valid = produced == Int32(originalLength)
            initialized = valid ? originalLength : 0
        }
        return valid ? result : nil
    }
}
