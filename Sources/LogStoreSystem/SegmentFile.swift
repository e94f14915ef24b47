import CMemoryHints
@_spi(Engine) import LogStoreFormat
import Synchronization

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// One open segment file, mapped into memory for reading.
///
/// Reads go through the mapping, so a `get` costs no system call. The mapping covers the segment's
/// whole capacity, also past the current end of the file for the segment being written: the store
/// only reads ranges that its index names, and it adds a range to the index only after the bytes
/// were written, so no read touches a page past the end of the file.
///
/// The file descriptor and the mapping live as long as this object: a reader that took a reference
/// keeps them valid after compaction dropped the segment, and `deinit` unmaps and closes.
///
/// An encrypted segment (``LogStoreFormat/SegmentDecryption``) is read from a decrypted copy in private
/// memory, which `base` then points at: filled from the file on demand (``bytes(count:)``) and by the
/// writer as it writes (``install(_:at:)``). That copy holds the plaintext of everything read of the
/// segment for as long as this object lives.
///
/// `@unchecked Sendable`: every stored property is a `let` (the decryption state is behind a `Mutex`
/// and an `Atomic`); the mapped memory is only read, and only in ranges that were completely written
/// before they were published (under the index lock, which orders the write before any read); writes
/// go through `fd` with `pwrite`, never through the mapping. The decrypted copy of an encrypted segment
/// is written only under `decryption`'s lock and only at or past `verifiedEnd` (by ``install(_:at:)``
/// before the writer publishes what it wrote, and by a decryption), and `verifiedEnd` is published
/// (release) after the bytes below it are final: a reader of a range below the `verifiedEnd` it loaded
/// (acquire) reads bytes that are never written again. Only readers that scan past it (a follower's tail,
/// the loader's scan of a damaged end) may read bytes a decryption is replacing; those bytes are never
/// ciphertext (zeros, `0xFF`, or authenticated plaintext), and such readers check every frame's checksums
/// and treat what does not pass as not written yet or damaged.
package final class SegmentFile: @unchecked Sendable {
    /// The segment number (from the file name and header).
    package let number: UInt32
    /// The file's path.
    package let path: String
    /// Descriptor, open read-write for the active segment, read-only otherwise.
    package let fd: Int32
    /// Start of the mapping.
    package let base: UnsafeRawPointer
    /// Length of the mapping.
    package let mappedLength: Int
    /// The layout of the segment's frames, from its header when the file was mapped (version 1 when the
    /// file was shorter than a header: such a segment is never read).
    package let format: FrameFormat
    /// An encrypted segment's key and store; nil for an unencrypted one.
    package let encryption: StoreEncryption?
    /// An encrypted segment: how its bytes are read (with `pread`, never through a mapping: a writer may
    /// cut its segment shorter meanwhile, and a mapped page past the end faults); `base` is then the
    /// decrypted copy.
    private let fileIO: SystemIO?
    /// An encrypted segment: the mapping of the file as written (ciphertext), for ``rawBytes(count:)``.
    private let rawBase: UnsafeRawPointer?
    /// An encrypted segment: how much of the decrypted copy is decrypted and final.
    private let verifiedEnd = Atomic<Int>(0)
    /// An encrypted segment: the decryption's state.
    private let decryption = Mutex(DecryptionState())

    /// What decrypting an encrypted segment has done so far.
    private struct DecryptionState {
        /// Bytes of the file copied and decrypted (up to the last batch that authenticated).
        var verifiedEnd = 0
        /// Offsets of batches whose checksums hold but that do not authenticate.
        var failures: [Int] = []
    }

    private init(
        number: UInt32, path: String, fd: Int32, base: UnsafeRawPointer, mappedLength: Int, format: FrameFormat,
        encryption: StoreEncryption? = nil, fileIO: SystemIO? = nil, rawBase: UnsafeRawPointer? = nil
    ) {
        self.number = number
        self.path = path
        self.fd = fd
        self.base = base
        self.mappedLength = mappedLength
        self.format = format
        self.encryption = encryption
        self.fileIO = fileIO
        self.rawBase = rawBase
    }

    deinit {
        munmap(UnsafeMutableRawPointer(mutating: base), mappedLength)
        if let rawBase { munmap(UnsafeMutableRawPointer(mutating: rawBase), mappedLength) }
        close(fd)
    }

    /// Opens and maps `path`; `capacity` is how much of it may be read (at least its size). With
    /// `populate` (Linux), the mapping's page tables are filled at once, so the first reads of a
    /// segment that is about to be read everywhere (a compaction output) take no page fault.
    package static func open(
        number: UInt32,
        path: String,
        writable: Bool,
        capacity: Int,
        populate: Bool = false,
        encryption: StoreEncryption? = nil,
        io: SystemIO
    ) throws(SystemError) -> SegmentFile {
        let fd = try io.open(path, flags: (writable ? O_RDWR : O_RDONLY) | O_CLOEXEC)
        return try map(
            number: number, path: path, fd: fd, capacity: capacity, populate: populate, encryption: encryption, io: io)
    }

    /// Maps the file open at `fd` (for reading), which the returned object then owns and closes; on
    /// failure `fd` is closed. Used for a segment that was opened before it was read: a descriptor keeps
    /// the file's data even when a writer's compaction deletes the file meanwhile.
    ///
    /// With `encryption`, a segment whose header says it is encrypted is read from a decrypted copy; an
    /// unencrypted one is read as it is (the caller checks that the store's segments are what it expects).
    package static func map(
        number: UInt32,
        path: String,
        fd: Int32,
        capacity: Int,
        populate: Bool = false,
        encryption: StoreEncryption? = nil,
        io: SystemIO
    ) throws(SystemError) -> SegmentFile {
        let length = max(capacity, 4096)
        var flags = MAP_SHARED
        #if os(Linux)
            if populate { flags |= MAP_POPULATE }
        #endif
        guard let mapping = mmap(nil, length, PROT_READ, flags, fd, 0), mapping != MAP_FAILED else {
            let code = errno
            io.close(fd)
            throw SystemError(call: "mmap", errno: code, path: path)
        }
        // Only bytes inside the file are read through the mapping (past its end a read faults).
        var format = FrameFormat.v1
        if let size = try? io.size(fd, path: path), size >= UInt64(LogFormat.segmentHeaderSize) {
            format = FrameFormat(segment: UnsafeRawBufferPointer(start: mapping, count: LogFormat.segmentHeaderSize))
        }
        guard let encryption, format.isSealed else {
            return SegmentFile(
                number: number, path: path, fd: fd, base: UnsafeRawPointer(mapping), mappedLength: length,
                format: format)
        }
        guard
            let copy = mmap(nil, length, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0),
            copy != MAP_FAILED
        else {
            let code = errno
            munmap(mapping, length)
            io.close(fd)
            throw SystemError(call: "mmap", errno: code, path: path)
        }
        // The header (plaintext, checked by the caller) is in the copy from the start: the writer's
        // `install`s then follow it, and a reader's first decryption starts after it.
        copy.copyMemory(from: mapping, byteCount: LogFormat.segmentHeaderSize)
        let file = SegmentFile(
            number: number, path: path, fd: fd, base: UnsafeRawPointer(copy), mappedLength: length, format: format,
            encryption: encryption, fileIO: io, rawBase: UnsafeRawPointer(mapping))
        file.decryption.withLock { $0.verifiedEnd = LogFormat.segmentHeaderSize }
        file.verifiedEnd.store(LogFormat.segmentHeaderSize, ordering: .releasing)
        return file
    }

    /// Asks the processor to start loading the `count` bytes at `offset` (at most the first two cache
    /// lines; nothing outside the mapping): a reader that knows which frames it reads next overlaps their
    /// memory waits. Reads nothing.
    @inline(__always)
    package func prefetch(at offset: Int, count: Int) {
        guard offset >= 0, offset < mappedLength else { return }
        let start = base + offset
        logstore_prefetch_for_read(start)
        if count > 64 - (Int(bitPattern: start) & 63), offset + 64 < mappedLength {
            logstore_prefetch_for_read(start + 64)
        }
    }

    /// The first `count` bytes of the segment (never more than are mapped). Of an encrypted segment, its
    /// decrypted copy, decrypted from the file first as far as `count` when it is not yet.
    package func bytes(count: Int) -> UnsafeRawBufferPointer {
        let count = min(count, mappedLength)
        if fileIO != nil, count > verifiedEnd.load(ordering: .acquiring) { decrypt(through: count) }
        return UnsafeRawBufferPointer(start: base, count: count)
    }

    /// The first `count` bytes of the segment as they are in the file (never more than are mapped): of an
    /// encrypted segment its ciphertext, which only delimits frames; of another, ``bytes(count:)``. Only
    /// for a segment that no writer cuts shorter (a sealed one): past the end of the file a read faults.
    package func rawBytes(count: Int) -> UnsafeRawBufferPointer {
        guard let rawBase else { return bytes(count: count) }
        return UnsafeRawBufferPointer(start: rawBase, count: min(count, mappedLength))
    }

    /// Of an encrypted segment, the offsets of batches whose checksums hold but that do not authenticate
    /// (another key or store, another place, or altered bytes), among those decrypted so far.
    package var authenticationFailures: [Int] { decryption.withLock { $0.failures } }

    /// Copies `plaintext`, bytes that the writer has just written (encrypted) at `offset`, into the
    /// decrypted copy of an encrypted segment, before they are published. Nothing for an unencrypted one;
    /// nothing below what is decrypted already (those bytes may be read meanwhile).
    package func install(_ plaintext: UnsafeRawBufferPointer, at offset: Int) {
        guard fileIO != nil, let source = plaintext.baseAddress, offset >= 0,
            offset + plaintext.count <= mappedLength
        else { return }
        decryption.withLock { state in
            let end = offset + plaintext.count
            guard offset <= state.verifiedEnd, end > state.verifiedEnd else { return }
            let skipped = state.verifiedEnd - offset
            UnsafeMutableRawPointer(mutating: base + state.verifiedEnd).copyMemory(
                from: source + skipped, byteCount: end - state.verifiedEnd)
            state.verifiedEnd = end
            verifiedEnd.store(end, ordering: .releasing)
        }
    }

    /// Reads the file's bytes from where the decrypted copy ends to the end of the file (its data regions:
    /// what a hole holds is zeros) into scratch memory, decrypts the batches among them there, and copies
    /// the result into the decrypted copy: the batches that authenticated, and every other byte made
    /// unreadable (``SegmentDecryption``). So the copy never holds ciphertext, and nothing below
    /// `verifiedEnd` is ever written again. Called when `count` bytes are asked for; reads to the end of
    /// the file, not only to `count`, since a batch is decrypted whole and the frame that ends at `count`
    /// may be one of a batch that goes on past it.
    private func decrypt(through count: Int) {
        guard let io = fileIO, let encryption else { return }
        decryption.withLock { state in
            guard count > state.verifiedEnd, let size = try? io.size(fd, path: path) else { return }
            let start = state.verifiedEnd
            let fileEnd = min(mappedLength, Int(size))
            guard fileEnd > start else { return }
            // The data: up to the first hole, and the data regions after it (none, or the zeros a writer
            // wrote ahead, unless blocks were lost or holes misreported).
            let dataEnd = min(fileEnd, Int(io.dataEnd(fd, size: size)))
            var regions = [start..<max(start, dataEnd)]
            let after = io.dataRegions(fd, after: UInt64(max(start, dataEnd)), size: UInt64(fileEnd))
            if let after {
                regions += after.map { max(start, Int($0.lowerBound))..<min(fileEnd, Int($0.upperBound)) }
            } else {
                regions = [start..<fileEnd]
            }
            regions = regions.filter { !$0.isEmpty }
            // Private anonymous memory: zeros, and only the pages touched take memory (a hole's do not).
            guard
                let mapped = mmap(nil, fileEnd, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0),
                mapped != MAP_FAILED
            else { return }
            defer { munmap(mapped, fileEnd) }
            let scratchBase = UnsafeMutableRawPointer(mapped)
            scratchBase.copyMemory(from: base, byteCount: LogFormat.segmentHeaderSize)
            var end = start
            for region in regions {
                let read: Int
                do {
                    read = try io.read(
                        fd,
                        into: UnsafeMutableRawBufferPointer(
                            start: scratchBase + region.lowerBound, count: region.count),
                        at: UInt64(region.lowerBound), path: path)
                } catch {
                    return  // read again at the next call; until then the copy ends where it did
                }
                end = region.lowerBound + read
                if read < region.count { break }
            }
            // Past the last region that holds anything but zeros, nothing needs a scan.
            let scanned = UnsafeMutableRawBufferPointer(start: scratchBase, count: end)
            let outcome = SegmentDecryption.decrypt(scanned, from: start, segment: number, encryption: encryption)
            // Into the copy: every block that is not zeros (the copy is zeros already, and a hole's pages
            // stay untouched).
            let target = UnsafeMutableRawPointer(mutating: base)
            var position = start
            while position < end {
                let length = min(4_096 - position % 4_096, end - position)
                let block = UnsafeRawBufferPointer(start: scratchBase + position, count: length)
                if !block.allSatisfy({ $0 == 0 })
                    || !UnsafeRawBufferPointer(start: target + position, count: length)
                        .allSatisfy({ $0 == 0 })
                {
                    (target + position).copyMemory(from: scratchBase + position, byteCount: length)
                }
                position += length
            }
            state.failures += outcome.failures.filter { !state.failures.contains($0) }
            state.verifiedEnd = outcome.verifiedEnd
            verifiedEnd.store(state.verifiedEnd, ordering: .releasing)
        }
    }
}
