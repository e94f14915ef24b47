@_spi(Engine) import LogStoreFormat
@_spi(Engine) import LogStoreSystem

/// Reads the batches a writer committed to one segment after a given offset: how a store open read-only
/// follows the writer's log (``Store/refresh()``).
///
/// The bytes are read with `pread(2)`, never through the segment's mapping: past its frames the writer
/// extends the file and cuts the extension off when it seals the segment, and a mapped page past the new
/// end faults (``SegmentCopy`` says more). Reading starts with a small piece and takes larger ones only
/// while batches run past it, so a follower that finds nothing new reads a few KiB.
///
/// Frames are grouped into batches as a scan groups them (`SegmentScanner`, `Documentation/Format.md`
/// section 6.2): a batch ends with its commit frame, whose batch checksum (version 2) must hold, and a seal
/// frame ends the segment. What follows the last whole batch is not judged here: zeros or the end of the
/// file mean that nothing more is written yet; anything else is a batch being written, or damage, which
/// only reading it again later can tell apart (the caller does).
struct TailReader {
    /// The segment, with the layout of its frames.
    let file: SegmentFile
    let io: SystemIO

    /// Why reading stopped.
    enum Stop: Equatable {
        /// After the last batch: the end of the file, or zeros (the space the writer extends the segment by).
        case end
        /// The segment's seal frame: the writer's next batches go to a newer segment.
        case sealed
        /// Bytes that are not (yet) a whole batch start at `offset`: a batch being written, or damage.
        case unreadable(offset: UInt64, reason: String)
        /// The file is shorter than the offset reading started from: what was read of it is gone (a writer
        /// never cuts a segment shorter than its frames; only a disk that lost writes does).
        case shrunk(size: UInt64)
    }

    /// What a read found.
    struct Outcome {
        /// The whole batches, in file order.
        var batches: [FollowedBatch] = []
        /// Where they end (after the seal frame when it was read).
        var end: UInt64
        var stop = Stop.end
        /// The seal frame's length, when it was read.
        var sealLength: UInt64 = 0
    }

    /// The first piece read, and the largest one read while whole batches fill the pieces.
    static let firstPiece = 4 << 10
    static let largestPiece = 1 << 20

    /// The batches after `offset` (the end of a batch, or of the header), in file order.
    /// - throws: ``LogStoreError`` with code `ioError` (file and offset) when the segment cannot be read.
    func read(from offset: UInt64) throws(LogStoreError) -> Outcome {
        var outcome = Outcome(end: offset)
        let fileSize: UInt64
        do {
            fileSize = try io.size(file.fd, path: file.path)
        } catch {
            throw LogStoreError(.ioError, "cannot read segment", file: file.path, offset: offset, underlying: error)
        }
        guard fileSize >= offset else {
            outcome.stop = .shrunk(size: fileSize)
            return outcome
        }
        var position = offset
        var piece = Self.firstPiece
        while position < fileSize {
            let wanted = Int(min(UInt64(piece), fileSize - position))
            let bytes: [UInt8]
            do {
                if let encryption = file.encryption {
                    // An encrypted segment: its decrypted copy (which reads the file with `pread` too) up to
                    // the end of the file, so that a batch is decrypted whole; when the file has grown past
                    // what that copy can hold, a decrypted copy of the whole file (the follower then maps
                    // the segment again, further).
                    let end = Int(position) + wanted
                    if Int(fileSize) <= file.mappedLength {
                        let copy = file.bytes(count: Int(fileSize))
                        bytes = copy.count > Int(position) ? Array(copy[Int(position)..<min(copy.count, end)]) : []
                    } else {
                        let copy = try SegmentCopy(fd: file.fd, count: Int(fileSize), path: file.path, io: io)
                        copy.decrypt(segment: file.number, encryption: encryption)
                        let whole = copy.bytes
                        bytes = whole.count > Int(position) ? Array(whole[Int(position)..<min(whole.count, end)]) : []
                    }
                } else {
                    bytes = try io.read(file.fd, count: wanted, at: position, path: file.path)
                }
            } catch {
                throw LogStoreError(
                    .ioError, "cannot read segment", file: file.path, offset: position, underlying: error)
            }
            // The file may have become shorter since its size was taken (cut back at a seal).
            let fileEnds = bytes.count < wanted || position + UInt64(wanted) >= fileSize
            let parsed = bytes.withUnsafeBytes { parse($0, at: position, fileEnds: fileEnds, into: &outcome) }
            switch parsed {
            case .stopped(let stop, let consumed):
                outcome.end = position + UInt64(consumed)
                outcome.stop = stop
                return outcome
            case .needsMore(let consumed) where consumed == 0:
                // One batch is larger than the piece: read it whole.
                piece *= 2
            case .needsMore(let consumed):
                position += UInt64(consumed)
                outcome.end = position
                piece = min(piece * 2, max(piece, Self.largestPiece))
            }
        }
        outcome.end = position
        return outcome
    }

    /// How parsing one piece ended.
    private enum Parsed {
        /// Reading stops: `consumed` bytes of the piece are whole batches (and the seal).
        case stopped(Stop, consumed: Int)
        /// The piece ends inside a batch (after `consumed` bytes of whole batches) but the file goes on.
        case needsMore(consumed: Int)
    }

    /// Appends the whole batches of `bytes`, read at offset `base` of the segment, to `outcome`.
    /// - parameter fileEnds: whether `bytes` reach the end of the file (nothing follows to complete a batch).
    private func parse(_ bytes: UnsafeRawBufferPointer, at base: UInt64, fileEnds: Bool, into outcome: inout Outcome)
        -> Parsed
    {
        let format = file.format
        var cursor = 0
        var batchStart = 0
        var pending: [DecodedFrame] = []
        func unreadable(_ reason: String) -> Parsed {
            .stopped(.unreadable(offset: base + UInt64(batchStart), reason: reason), consumed: batchStart)
        }
        while true {
            switch FrameDecoder.decode(bytes, at: cursor, format: format) {
            case .success(let frame):
                if let problem = FrameDecoder.rangeProblem(of: frame) { return unreadable(problem) }
                if frame.kind == .seal {
                    guard pending.isEmpty, frame.id == base + UInt64(cursor), frame.flags.contains(.commit),
                        batchChecksumHolds(frame, batchStart: cursor, in: bytes)
                    else { return unreadable("invalid seal frame") }
                    outcome.sealLength = UInt64(frame.length)
                    return .stopped(.sealed, consumed: cursor + frame.length)
                }
                pending.append(frame)
                cursor += frame.length
                guard frame.flags.contains(.commit) else { continue }
                guard batchChecksumHolds(frame, batchStart: batchStart, in: bytes) else {
                    return unreadable("batch checksum mismatch")
                }
                outcome.batches.append(
                    FollowedBatch(
                        sequence: frame.sequence, segment: file.number,
                        frames: pending.map { FollowedBatch.Frame($0, in: bytes, base: base) },
                        end: base + UInt64(cursor)))
                pending.removeAll(keepingCapacity: true)
                batchStart = cursor
            case .failure(.truncated) where !fileEnds:
                return .needsMore(consumed: batchStart)
            case .failure(let problem):
                // Nothing at all after the last batch: the end of the file, or the zeros ahead of the writer.
                if pending.isEmpty, cursor >= bytes.count || bytes[cursor] == 0 {
                    return .stopped(.end, consumed: batchStart)
                }
                return unreadable(
                    pending.isEmpty
                        ? problem.reason
                        : "\(pending.count) frame(s) of a batch without its commit frame (\(problem.reason))")
            }
        }
    }

    /// Whether a version-2 commit frame's batch checksum matches the batch from `batchStart` (always true
    /// in version 1, which has none).
    private func batchChecksumHolds(_ frame: DecodedFrame, batchStart: Int, in bytes: UnsafeRawBufferPointer) -> Bool {
        guard file.format.isCompact else { return true }
        return CompactFrameDecoder.batchChecksumMatches(frame, batchStart: batchStart, in: bytes)
    }
}
