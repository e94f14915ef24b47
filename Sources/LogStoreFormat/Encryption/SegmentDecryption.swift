/// Makes the readable copy of an encrypted segment's bytes: every batch that authenticates decrypted in
/// place, everything else as it is in the file (`Documentation/Format.md`, section 13).
///
/// Readers of an encrypted segment read this copy with the rules of an unencrypted one. Bytes that are
/// not a valid batch stay as they are, so damage looks the same to them as in any segment (zeros stay
/// zeros, a torn write stays torn); a batch whose checksums hold but that does not authenticate has its
/// commit frame's CRC inverted, so that no reader takes it for valid, and is reported.
package enum SegmentDecryption {
    /// What a decryption pass did.
    package struct Outcome: Equatable, Sendable {
        /// The end of the last batch (or seal) that authenticated, or where the pass began when none did:
        /// everything before it that was a valid batch is decrypted.
        package var verifiedEnd: Int
        /// Offsets of batches whose checksums hold but that do not authenticate.
        package var failures: [Int] = []
    }

    /// Decrypts, in place in `bytes` (the segment's bytes as written, from its first byte, copied from
    /// the file from `start` on), the batches from `start` (a frame boundary after the header) to the end
    /// of `bytes`, going on after damage.
    package static func decrypt(
        _ bytes: UnsafeMutableRawBufferPointer, from start: Int, segment: UInt32, encryption: StoreEncryption
    ) -> Outcome {
        let view = UnsafeRawBufferPointer(bytes)
        var scanner = SegmentScanner(bytes: view)
        scanner.readsBodies = false
        guard scanner.format.isSealed else { return Outcome(verifiedEnd: start) }
        var outcome = Outcome(verifiedEnd: start)
        var batch: [DecodedFrame] = []
        let scanned = scanner.scan(
            from: start, continueAfterDamage: { _, _ in true },
            onCommittedFrame: { frame in
                batch.append(frame)
                guard frame.flags.contains(.commit) else { return }
                if BatchSealing.open(batch, segment: segment, from: view, into: bytes, encryption: encryption) {
                    outcome.verifiedEnd = frame.offset + frame.length
                } else if let first = batch.first {
                    outcome.failures.append(first.offset)
                }
                batch.removeAll(keepingCapacity: true)
            })
        if let seal = scanned.sealedAt,
            case .success(let frame) = FrameDecoder.decode(view, at: seal, format: scanner.format, readsBodies: false)
        {
            if BatchSealing.open([frame], segment: segment, from: view, into: bytes, encryption: encryption) {
                outcome.verifiedEnd = frame.offset + frame.length
            } else {
                outcome.failures.append(seal)
            }
        }
        return outcome
    }
}
