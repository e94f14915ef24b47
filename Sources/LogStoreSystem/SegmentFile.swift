import CMemoryHints
@_spi(Engine) import LogStoreFormat

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
/// `@unchecked Sendable`: every stored property is a `let`; the mapped memory is only read, and only
/// in ranges that were completely written before they were published (under the index lock, which
/// orders the write before any read); writes go through `fd` with `pwrite`, never through the mapping.
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

    private init(
        number: UInt32, path: String, fd: Int32, base: UnsafeRawPointer, mappedLength: Int, format: FrameFormat
    ) {
        self.number = number
        self.path = path
        self.fd = fd
        self.base = base
        self.mappedLength = mappedLength
        self.format = format
    }

    deinit {
        munmap(UnsafeMutableRawPointer(mutating: base), mappedLength)
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
        io: SystemIO
    ) throws(SystemError) -> SegmentFile {
        let fd = try io.open(path, flags: (writable ? O_RDWR : O_RDONLY) | O_CLOEXEC)
        return try map(number: number, path: path, fd: fd, capacity: capacity, populate: populate, io: io)
    }

    /// Maps the file open at `fd` (for reading), which the returned object then owns and closes; on
    /// failure `fd` is closed. Used for a segment that was opened before it was read: a descriptor keeps
    /// the file's data even when a writer's compaction deletes the file meanwhile.
    package static func map(
        number: UInt32,
        path: String,
        fd: Int32,
        capacity: Int,
        populate: Bool = false,
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
        return SegmentFile(
            number: number, path: path, fd: fd, base: UnsafeRawPointer(mapping), mappedLength: length, format: format)
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

    /// The first `count` bytes of the segment (never more than are mapped).
    package func bytes(count: Int) -> UnsafeRawBufferPointer {
        UnsafeRawBufferPointer(start: base, count: min(count, mappedLength))
    }
}
