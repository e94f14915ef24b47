@_spi(Engine) import LogStoreFormat
@_spi(Engine) import LogStoreSystem

extension SegmentFile {
    /// Writes `plaintext`, whole batches encoded for this segment, at `offset`: as they are into an
    /// unencrypted segment; into an encrypted one, each batch sealed under a fresh nonce
    /// (``BatchSealing``), and the plaintext then copied into the segment's decrypted copy, which its
    /// readers read once the batches are published.
    /// - throws: ``LogStoreError`` with code `ioError` (file and offset) when the write fails, or when the
    ///   bytes cannot be encrypted (not whole batches of the segment's layout, or a failing cipher).
    func writeFrames(_ plaintext: UnsafeRawBufferPointer, at offset: UInt64, io: SystemIO) throws(LogStoreError) {
        guard let encryption, case .v2(let base, true) = format else {
            try write(plaintext, at: offset, io: io)
            return
        }
        guard
            let sealed = BatchSealing.seal(
                plaintext, at: Int(offset), segment: number, baseSequence: base, encryption: encryption)
        else {
            throw LogStoreError(.ioError, "the batches could not be encrypted", file: path, offset: offset)
        }
        let written = sealed.withUnsafeBytes { bytes in
            Result { () throws(LogStoreError) in try write(bytes, at: offset, io: io) }
        }
        try written.get()
        install(plaintext, at: Int(offset))
    }

    private func write(_ bytes: UnsafeRawBufferPointer, at offset: UInt64, io: SystemIO) throws(LogStoreError) {
        do {
            try io.writeAll(fd, bytes, at: offset, path: path)
        } catch {
            throw LogStoreError(.ioError, "write failed", file: path, offset: offset, underlying: error)
        }
    }
}
