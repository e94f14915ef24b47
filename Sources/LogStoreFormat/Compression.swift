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

    /// Writes `payload` at `destination` (room for `capacity` bytes), compressed when `attempt` and that
    /// makes it smaller, else as it is.
    /// - returns: the stored length and whether it is compressed.
    package static func store(
        _ payload: UnsafeRawBufferPointer, attempt: Bool, into destination: UnsafeMutableRawPointer, capacity: Int
    ) -> (length: Int, compressed: Bool) {
        if attempt, let compressed = compress(payload, into: destination, capacity: capacity) {
            return (compressed, true)
        }
        if payload.count > 0, let source = payload.baseAddress {
            destination.copyMemory(from: source, byteCount: payload.count)
        }
        return (payload.count, false)
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
