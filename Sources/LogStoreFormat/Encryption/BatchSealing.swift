/// Encrypting and decrypting the batches of an encrypted segment (`Documentation/Format.md`, section 13).
///
/// A batch is one AEAD message: the bodies of its frames (each frame's reference list and stored
/// payload, back to back, in file order) are the message; the store id, the segment number, the batch's
/// offset and the header bytes of its frames (everything from each frame's head to its references) are
/// authenticated with it; the random nonce and the tag sit after the commit frame's batch checksum. The
/// frames' CRCs and the batch checksum are those of the bytes as they are in the file (ciphertext), so
/// damage is found without the key; a reader's decrypted copy gets checksums of its own bytes.
package enum BatchSealing {
    /// The additional-data domain of a batch.
    static let batchDomain: UInt8 = 1

    /// The bytes to write for `plaintext`: whole batches of the sealed layout that start at `offset` of
    /// segment `segment` (whose base sequence is `baseSequence`), each encrypted under a fresh nonce, with
    /// their checksums computed again. Nil when the bytes are not whole batches of that layout or the
    /// cipher fails.
    /// - parameter nonce: where each batch's nonce comes from (a fresh random one by default; the worked
    ///   example of the format document gives its own).
    package static func seal(
        _ plaintext: UnsafeRawBufferPointer, at offset: Int, segment: UInt32, baseSequence: UInt64,
        encryption: StoreEncryption, nonce: () -> [UInt8] = StoreEncryption.nonce
    ) -> [UInt8]? {
        var sealed = [UInt8](repeating: 0, count: plaintext.count)
        sealed.withUnsafeMutableBytes { target in
            if let to = target.baseAddress, let from = plaintext.baseAddress {
                to.copyMemory(from: from, byteCount: plaintext.count)
            }
        }
        var cursor = 0
        var batch: [DecodedFrame] = []
        batch.reserveCapacity(64)
        while cursor < plaintext.count {
            // Delimited only (the bodies are sealed whole, references and payload together).
            guard
                case .success(let frame) = CompactFrameDecoder.decode(
                    plaintext, at: cursor, baseSequence: baseSequence, sealed: true, readsBodies: false,
                    verifyChecksum: false)
            else { return nil }
            batch.append(frame)
            cursor += frame.length
            guard frame.flags.contains(.commit) else { continue }
            let done = sealed.withUnsafeMutableBytes { buffer in
                transform(
                    batch, at: offset, segment: segment, in: buffer, encryption: encryption, sealing: true, nonce: nonce
                )
            }
            guard done else { return nil }
            batch.removeAll(keepingCapacity: true)
        }
        return batch.isEmpty ? sealed : nil
    }

    /// Decrypts one batch: `frames` (decoded from `source`, the segment's bytes as written, with their
    /// checksums checked) are copied to the same offsets of `destination` (which may be `source`) and
    /// decrypted there, with checksums of the decrypted bytes. False when the batch does not authenticate
    /// (another key, another store, another place, or altered bytes): its bytes are then copied as they
    /// are (``SegmentDecryption`` makes them unreadable).
    package static func open(
        _ frames: [DecodedFrame], segment: UInt32, from source: UnsafeRawBufferPointer,
        into destination: UnsafeMutableRawBufferPointer, encryption: StoreEncryption
    ) -> Bool {
        guard let first = frames.first, let last = frames.last, let from = source.baseAddress,
            let to = destination.baseAddress, last.offset + last.length <= min(source.count, destination.count)
        else { return false }
        let end = last.offset + last.length
        (to + first.offset).copyMemory(from: from + first.offset, byteCount: end - first.offset)
        let opened = transform(
            frames, at: 0, segment: segment, in: destination, encryption: encryption, sealing: false,
            nonce: StoreEncryption.nonce)
        return opened
    }

    /// Encrypts (`sealing`) or decrypts in place the batch `frames` of `buffer`, whose offsets are
    /// `offset` less than the segment's, and computes its checksums again.
    private static func transform(
        _ frames: [DecodedFrame], at offset: Int, segment: UInt32, in buffer: UnsafeMutableRawBufferPointer,
        encryption: StoreEncryption, sealing: Bool, nonce makeNonce: () -> [UInt8]
    ) -> Bool {
        guard let first = frames.first, let commit = frames.last, let checksumAt = commit.batchChecksumOffset,
            let base = buffer.baseAddress
        else { return false }
        let prefix = encryption.additionalData(batchDomain, [UInt64(segment), UInt64(offset + first.offset)])
        var headerBytes = 0
        var bodyBytes = 0
        for frame in frames {
            headerBytes += frame.referencesOffset - frame.offset
            bodyBytes += frame.payloadOffset + frame.storedLength - frame.referencesOffset
        }
        // The headers after the prefix, and the bodies, gathered with one copy per frame each.
        var additional = [UInt8](repeating: 0, count: prefix.count + headerBytes)
        var message = [UInt8](repeating: 0, count: bodyBytes)
        additional.withUnsafeMutableBytes { target in
            guard let to = target.baseAddress else { return }
            prefix.withUnsafeBytes { if let from = $0.baseAddress { to.copyMemory(from: from, byteCount: $0.count) } }
            var cursor = prefix.count
            for frame in frames {
                let length = frame.referencesOffset - frame.offset
                (to + cursor).copyMemory(from: base + frame.offset, byteCount: length)
                cursor += length
            }
        }
        message.withUnsafeMutableBytes { target in
            guard let to = target.baseAddress else { return }
            var cursor = 0
            for frame in frames {
                let length = frame.payloadOffset + frame.storedLength - frame.referencesOffset
                (to + cursor).copyMemory(from: base + frame.referencesOffset, byteCount: length)
                cursor += length
            }
        }
        let nonceAt = checksumAt + CompactFrame.batchChecksumSize
        let tagAt = nonceAt + CompactFrame.nonceSize
        let cipher = encryption.cipher
        let done = message.withUnsafeMutableBytes { message in
            additional.withUnsafeBytes { additional in
                if sealing {
                    let nonce = makeNonce()
                    guard let tag = cipher.seal(message, nonce: nonce, additionalData: additional),
                        tag.count == CompactFrame.tagSize
                    else { return false }
                    for (index, byte) in nonce.enumerated() { buffer[nonceAt + index] = byte }
                    for (index, byte) in tag.enumerated() { buffer[tagAt + index] = byte }
                    return true
                }
                let nonce = Array(buffer[nonceAt..<tagAt])
                let tag = Array(buffer[tagAt..<tagAt + CompactFrame.tagSize])
                return cipher.open(message, nonce: nonce, tag: tag, additionalData: additional)
            }
        }
        guard done else { return false }
        var cursor = 0
        message.withUnsafeBytes { message in
            guard let source = message.baseAddress else { return }
            for frame in frames {
                let length = frame.payloadOffset + frame.storedLength - frame.referencesOffset
                (base + frame.referencesOffset).copyMemory(from: source + cursor, byteCount: length)
                cursor += length
            }
        }
        // In the order they cover each other: the frames' CRCs, the batch checksum (which covers them),
        // then the commit frame's CRC (which covers the batch checksum, the nonce and the tag).
        func writeCRC(_ frame: DecodedFrame) {
            let checked = frame.length - CompactFrame.crcSize
            base.writeLE(
                Checksum.crc32c(UnsafeRawPointer(base + frame.offset), count: checked), at: frame.offset + checked)
        }
        for frame in frames.dropLast() { writeCRC(frame) }
        base.writeLE(
            Checksum.xxh3(UnsafeRawPointer(base + first.offset), count: checksumAt - first.offset), at: checksumAt)
        writeCRC(commit)
        return true
    }
}
