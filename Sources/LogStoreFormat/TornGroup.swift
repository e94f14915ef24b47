/// Tells a group of commits that a crash tore out of order from corruption, at the end of the newest
/// segment.
///
/// Where zeros were written ahead of small durable commits (``PageCacheFiller``), a group's write
/// overwrites allocated blocks, and the disk may keep its sectors in any order: a power cut during the
/// group's `fdatasync` can leave a later sector of it and lose an earlier one. None of that group was
/// acknowledged (its sync did not return), and every group before it was synced. The damage then has a
/// shape that corruption of synced frames does not:
///
/// - between the damage and the next valid frame lies a run of zeros (a sector that was not written)
///   that ends at a 512-byte boundary and is either a whole sector or starts where the damage does (the
///   rest of the sector the last commit ended in);
/// - nothing but zeros lies more than ``window`` past the end of the last commit (zeros reach no further
///   ahead of the writer, and beyond them a crash leaves holes or nothing);
/// - every valid frame after the damage is newer than every frame before it.
///
/// Such a tail is cut like any torn tail (and kept in a side file); anything else stays corruption.
package enum TornGroup {
    /// How far past the end of the last commit a torn group's bytes can lie.
    package static let window = Int(LogFormat.prefillWindow + LogFormat.prefillChunk)
    /// The unit a disk may lose on its own.
    package static let sector = 512

    /// Whether the damage at `damage` (after the last commit, which ends at `committedEnd` and whose
    /// newest frame has sequence `newestSequence`), followed by a valid frame at `nextValidFrame`, is a
    /// torn group.
    package static func isTorn(
        _ bytes: UnsafeRawBufferPointer, committedEnd: Int, damage: Int, nextValidFrame: Int, newestSequence: UInt64
    ) -> Bool {
        guard committedEnd <= damage, damage < nextValidFrame, nextValidFrame <= bytes.count else { return false }
        // Nothing but zeros past the window.
        var last = bytes.count
        while last > committedEnd && bytes[last - 1] == 0 { last -= 1 }
        guard last <= committedEnd + window else { return false }
        guard hasLostSector(bytes, from: damage, to: nextValidFrame) else { return false }
        // Every valid frame after the damage is newer than the commits before it.
        let format = FrameFormat(segment: bytes)
        var offset = nextValidFrame
        while offset < last {
            switch FrameDecoder.decode(bytes, at: offset, format: format) {
            case .success(let frame):
                guard frame.sequence > newestSequence else { return false }
                offset += frame.length
            case .failure:
                guard let next = FrameDecoder.nextValidFrame(in: bytes, after: offset, format: format), next < last
                else { return true }
                offset = next
            }
        }
        return true
    }

    /// Whether `start..<end` holds a run of zeros ending at a sector boundary that is a whole sector or
    /// starts at `start`.
    private static func hasLostSector(_ bytes: UnsafeRawBufferPointer, from start: Int, to end: Int) -> Bool {
        var boundary = (start / sector + 1) * sector
        while boundary <= end {
            let runStart = max(start, boundary - sector)
            if bytes[runStart..<boundary].allSatisfy({ $0 == 0 }) { return true }
            boundary += sector
        }
        return false
    }
}
