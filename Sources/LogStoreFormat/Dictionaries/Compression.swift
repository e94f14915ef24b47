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

    /// A working LZ4 stream for compressing against a dictionary: 16 KiB, made per batch or per
    /// compaction pass and used by one thread at a time (each compression resets it cheaply).
    package final class WorkStream {
        let stream: UnsafeMutablePointer<LZ4_stream_t>

        /// A new stream; nil when LZ4 cannot allocate it.
        package init?() {
            guard let stream = LZ4_createStream() else { return nil }
            self.stream = stream
        }

        deinit { LZ4_freeStream(stream) }
    }

    /// How a payload is compressed when it is stored.
    package enum Method {
        /// Stored as it is.
        case none
        /// LZ4 alone.
        case plain
        /// LZ4 against a shared dictionary, using a working stream.
        case dictionary(CompressionDictionary, WorkStream)
    }

    /// Writes `payload` at `destination` (room for `capacity` bytes), compressed with `method` when that
    /// makes it smaller, else as it is.
    /// - returns: the stored length, whether it is compressed, and the dictionary it was compressed against
    ///   (0: none).
    package static func store(
        _ payload: UnsafeRawBufferPointer, method: Method, into destination: UnsafeMutableRawPointer, capacity: Int
    ) -> (length: Int, compressed: Bool, dictionary: UInt32) {
        switch method {
        case .none: break
        case .plain:
            if let compressed = compress(payload, into: destination, capacity: capacity) {
                return (compressed, true, 0)
            }
        case .dictionary(let dictionary, let work):
            if let compressed = dictionary.compress(payload, into: destination, capacity: capacity, work: work) {
                return (compressed, true, dictionary.id)
            }
        }
        if payload.count > 0, let source = payload.baseAddress {
            destination.copyMemory(from: source, byteCount: payload.count)
        }
        return (payload.count, false, 0)
    }

    /// Decompresses an LZ4 block that must expand to exactly `originalLength` bytes.
    ///
    /// `LZ4_decompress_safe` never reads or writes outside the given buffers, whatever the input.
    /// - returns: the bytes, or nil when the block is malformed or has another length.
    package static func decompress(_ source: UnsafeRawBufferPointer, originalLength: Int) -> [UInt8]? {
        expand(source, originalLength: originalLength) { block, target in
            LZ4_decompress_safe(block, target, Int32(source.count), Int32(originalLength))
        }
    }

    /// Decompresses into `buffer` (its storage reused when nothing else holds it): false when the block is
    /// malformed or does not expand to exactly `originalLength` bytes (`buffer` then holds no payload).
    package static func decompress(
        _ source: UnsafeRawBufferPointer, originalLength: Int, into buffer: inout [UInt8]
    ) -> Bool {
        expand(source, originalLength: originalLength, into: &buffer) { block, target in
            LZ4_decompress_safe(block, target, Int32(source.count), Int32(originalLength))
        }
    }

    /// ``expand(_:originalLength:_:)`` into `buffer`, resized to `originalLength` (its storage reused when
    /// nothing else holds it: no allocation per payload); false when `decode` does not produce exactly
    /// that many bytes.
    static func expand(
        _ source: UnsafeRawBufferPointer, originalLength: Int, into buffer: inout [UInt8],
        _ decode: (UnsafePointer<CChar>, UnsafeMutablePointer<CChar>) -> Int32
    ) -> Bool {
        guard let base = source.baseAddress, originalLength > 0 else { return false }
        if buffer.count > originalLength {
            buffer.removeLast(buffer.count - originalLength)
        } else if buffer.count < originalLength {
            buffer.append(contentsOf: repeatElement(0, count: originalLength - buffer.count))
        }
        let produced = buffer.withUnsafeMutableBytes { target -> Int32 in
            guard let start = target.baseAddress else { return -1 }
            return decode(base.assumingMemoryBound(to: CChar.self), start.assumingMemoryBound(to: CChar.self))
        }
        return produced == Int32(originalLength)
    }

    /// The `originalLength` bytes `decode` writes from the block `source` into a new array (`decode` gets
    /// the block and the array's storage, returns how many bytes it produced or a negative error); nil
    /// when the block is empty or `decode` does not produce exactly that many.
    static func expand(
        _ source: UnsafeRawBufferPointer, originalLength: Int,
        _ decode: (UnsafePointer<CChar>, UnsafeMutablePointer<CChar>) -> Int32
    ) -> [UInt8]? {
        guard let base = source.baseAddress, originalLength > 0 else { return nil }
        // Zeroed first, then written, and built from a collection: `Array(unsafeUninitializedCapacity:)` and
        // `Array(repeating:count:)` call an unspecialized runtime function that looks up the array's generic
        // metadata on every call (a few percent of a get); the collection copy is specialized here. Unoptimized
        // (debug) builds do not specialize it and copy element by element, a hundred times slower than the
        // runtime call: they take the runtime call.
        #if DEBUG
            var result = [UInt8](repeating: 0, count: originalLength)
        #else
            var result = [UInt8](repeatElement(0, count: originalLength))
        #endif
        let produced = result.withUnsafeMutableBytes { target -> Int32 in
            guard let start = target.baseAddress else { return -1 }
            return decode(base.assumingMemoryBound(to: CChar.self), start.assumingMemoryBound(to: CChar.self))
        }
        return produced == Int32(originalLength) ? result : nil
    }
}
