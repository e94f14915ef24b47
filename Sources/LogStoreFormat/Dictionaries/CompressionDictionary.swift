import CLZ4

/// A shared LZ4 dictionary: bytes sampled from a store's own records, against which small payloads
/// compress to a fraction of their size (a 200-byte JSON-like record alone barely compresses; against
/// 64 KiB of its neighbours it shrinks to about 40%).
///
/// Compression attaches the dictionary's prepared stream (`LZ4_loadDict` once, here) to a working
/// stream (`LZ4_attach_dictionary`, ``Compression/WorkStream``). Measured on this
/// project's machine for 200-byte records: attaching ≈ 400 ns per record, copying a prepared 16 KiB
/// stream state per record ≈ 700 ns, `LZ4_loadDict` of 64 KiB per record ≈ 16,000 ns. The attach entry
/// points are in lz4.h's static-linking-only part, which Debian's shared liblz4 does not export: the
/// `CLZ4` module links the static archive. Decompression uses the exported
/// `LZ4_decompress_safe_usingDict`, which never reads or writes outside the buffers it is given.
///
/// `@unchecked Sendable`: `content` and `stream` are written only by `init` (`LZ4_loadDict` fills the
/// stream's hash table and remembers where `content` is); afterwards LZ4 only reads them
/// (`LZ4_attach_dictionary` stores a pointer to the stream in the caller's working stream, and the
/// compressor reads its table through it), and `deinit` frees them when no one holds the dictionary.
package final class CompressionDictionary: @unchecked Sendable {
    /// The id frames name it by (1, 2, …; 0 means "no dictionary").
    package let id: UInt32
    /// The dictionary's bytes (at most ``DictionaryFile/maximumContentSize``).
    package let content: UnsafeRawBufferPointer
    /// XXH3-64 (seed 0) of ``content``: what the segment manifest records of it.
    package let contentChecksum: UInt64
    private let stream: UnsafeMutablePointer<LZ4_stream_t>

    /// A dictionary of `content` (copied). Returns nil when LZ4 cannot allocate its stream.
    package init?(id: UInt32, content bytes: [UInt8]) {
        guard let stream = LZ4_createStream() else { return nil }
        let storage = UnsafeMutableRawBufferPointer.allocate(byteCount: max(bytes.count, 1), alignment: 16)
        bytes.withUnsafeBytes { source in
            if let base = source.baseAddress { storage.baseAddress?.copyMemory(from: base, byteCount: source.count) }
        }
        self.id = id
        self.content = UnsafeRawBufferPointer(rebasing: UnsafeRawBufferPointer(storage)[0..<bytes.count])
        self.stream = stream
        contentChecksum = Checksum.xxh3(content)
        LZ4_loadDict(stream, content.baseAddress?.assumingMemoryBound(to: CChar.self), Int32(bytes.count))
    }

    deinit {
        LZ4_freeStream(stream)
        UnsafeMutableRawPointer(mutating: content.baseAddress)?.deallocate()
    }

    /// Compresses `source` against the dictionary into `destination` (room for `capacity` bytes, at least
    /// ``Compression/bound(_:)``), using the working stream `work`.
    /// - returns: the compressed size, or nil when it would not be smaller.
    package func compress(
        _ source: UnsafeRawBufferPointer, into destination: UnsafeMutableRawPointer, capacity: Int,
        work: Compression.WorkStream
    ) -> Int? {
        guard let base = source.baseAddress, source.count > 0 else { return nil }
        LZ4_resetStream_fast(work.stream)
        LZ4_attach_dictionary(work.stream, stream)
        let written = LZ4_compress_fast_continue(
            work.stream, base.assumingMemoryBound(to: CChar.self), destination.assumingMemoryBound(to: CChar.self),
            Int32(source.count), Int32(capacity), 1)
        guard written > 0, Int(written) < source.count else { return nil }
        return Int(written)
    }

    /// Decompresses a block compressed against this dictionary that must expand to exactly
    /// `originalLength` bytes; nil when it is malformed or has another length.
    package func decompress(_ source: UnsafeRawBufferPointer, originalLength: Int) -> [UInt8]? {
        Compression.expand(source, originalLength: originalLength) { block, target in
            LZ4_decompress_safe_usingDict(
                block, target, Int32(source.count), Int32(originalLength),
                content.baseAddress?.assumingMemoryBound(to: CChar.self), Int32(content.count))
        }
    }
}

extension CompressionDictionary {
    /// ``decompress(_:originalLength:)`` into `buffer` (its storage reused when nothing else holds it);
    /// false when the block is malformed or has another length.
    package func decompress(_ source: UnsafeRawBufferPointer, originalLength: Int, into buffer: inout [UInt8]) -> Bool {
        Compression.expand(source, originalLength: originalLength, into: &buffer) { block, target in
            LZ4_decompress_safe_usingDict(
                block, target, Int32(source.count), Int32(originalLength),
                content.baseAddress?.assumingMemoryBound(to: CChar.self), Int32(content.count))
        }
    }
}

/// The dictionaries a store has, by id: what readers decompress with and writers compress with.
package struct CompressionDictionaries: Sendable {
    private var byID: [UInt32: CompressionDictionary] = [:]
    /// The dictionary new payloads are compressed with: the one of the highest id.
    package private(set) var newest: CompressionDictionary?

    package init() {}

    /// The dictionary `id` (most frames name the newest: found without hashing).
    package subscript(id: UInt32) -> CompressionDictionary? {
        if let newest, newest.id == id { return newest }
        return byID[id]
    }

    /// Every dictionary, in increasing id order.
    package var all: [CompressionDictionary] { byID.values.sorted { $0.id < $1.id } }

    package var isEmpty: Bool { byID.isEmpty }

    /// What the segment manifest records of every dictionary, in increasing id order.
    package var records: [SegmentManifest.DictionaryRecord] {
        all.map {
            SegmentManifest.DictionaryRecord(
                id: $0.id, contentLength: UInt32($0.content.count), contentChecksum: $0.contentChecksum)
        }
    }

    package mutating func add(_ dictionary: CompressionDictionary) {
        byID[dictionary.id] = dictionary
        if dictionary.id > (newest?.id ?? 0) { newest = dictionary }
    }

    package mutating func remove(_ id: UInt32) {
        byID[id] = nil
        if newest?.id == id { newest = byID.values.max { $0.id < $1.id } }
    }
}
