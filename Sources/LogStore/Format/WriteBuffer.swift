/// A growable byte buffer that frames are encoded into before one write system call.
///
/// A class over a raw allocation rather than `[UInt8]`, so the encoder can write headers, references
/// and compressed payloads in place without zero-filling or bounds-checked appends.
final class WriteBuffer {
    private(set) var base: UnsafeMutableRawPointer
    private(set) var capacity: Int
    /// Bytes written so far.
    private(set) var count: Int = 0

    init(capacity: Int = 64 << 10) {
        self.capacity = max(capacity, 64)
        self.base = UnsafeMutableRawPointer.allocate(byteCount: self.capacity, alignment: 16)
    }

    deinit { base.deallocate() }

    /// The bytes written so far.
    var bytes: UnsafeRawBufferPointer { UnsafeRawBufferPointer(start: base, count: count) }

    /// Makes room for `extra` more bytes and returns where they start; call ``commit(_:)`` after.
    func reserve(_ extra: Int) -> UnsafeMutableRawPointer {
        if count + extra > capacity {
            var newCapacity = capacity * 2
            while newCapacity < count + extra { newCapacity *= 2 }
            let newBase = UnsafeMutableRawPointer.allocate(byteCount: newCapacity, alignment: 16)
            newBase.copyMemory(from: base, byteCount: count)
            base.deallocate()
            base = newBase
            capacity = newCapacity
        }
        return base + count
    }

    /// Marks `written` bytes after the end as part of the buffer.
    func commit(_ written: Int) { count += written }

    /// Empties the buffer, keeping its memory.
    func removeAll() { count = 0 }
}
