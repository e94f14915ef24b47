/// Makes the readable copy of an encrypted segment's bytes: every batch that authenticates decrypted in
/// place (`Documentation/Format.md`, section 13).
///
/// Readers of an encrypted segment read this copy with the rules of an unencrypted one. Every byte that
/// is not part of a batch that authenticated is made unreadable: a zero stays zero, any other byte
/// becomes `0xFF` (no frame starts with it). So no reader ever takes ciphertext for a record (a frame's
/// CRC holds over ciphertext too), and damage looks to them as in any segment: zeros where the file
/// has zeros (the space a writer extended its segment by), bytes that are no frame where it has
/// anything else (a torn write, damage, or a batch that does not authenticate, which is also reported).
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
        var verified: [Range<Int>] = []
        func open(_ frames: [DecodedFrame]) {
            guard let first = frames.first, let last = frames.last else { return }
            if BatchSealing.open(frames, segment: segment, from: view, into: bytes, encryption: encryption) {
                verified.append(first.offset..<last.offset + last.length)
                outcome.verifiedEnd = last.offset + last.length
            } else {
                outcome.failures.append(first.offset)
            }
        }
        let scanned = scanner.scan(
            from: start, continueAfterDamage: { _, _ in true },
            onCommittedFrame: { frame in
                batch.append(frame)
                guard frame.flags.contains(.commit) else { return }
                open(batch)
                batch.removeAll(keepingCapacity: true)
            })
        if let seal = scanned.sealedAt,
            case .success(let frame) = FrameDecoder.decode(view, at: seal, format: scanner.format, readsBodies: false)
        {
            open([frame])
        }
        var position = start
        for range in verified {
            scrub(bytes, position..<range.lowerBound)
            position = range.upperBound
        }
        scrub(bytes, position..<bytes.count)
        return outcome
    }

    /// Makes `range` of `bytes` unreadable: zeros stay, every other byte becomes `0xFF`.
    private static func scrub(_ bytes: UnsafeMutableRawBufferPointer, _ range: Range<Int>) {
        guard range.lowerBound < range.upperBound else { return }
        for index in range where bytes[index] != 0 { bytes[index] = 0xFF }
    }
}
