/// A growable byte buffer that frames are encoded into before one write system call.
///
/// A class over a raw allocation rather than `[UInt8]`, so the encoder can write headers, references
/// and compressed payloads in place without zero-filling or bounds-checked appends.
package final class WriteBuffer {
    package private(set) var base: UnsafeMutableRawPointer
    package private(set) var capacity: Int
    /// Bytes written so far.
    package private(set) var count: Int = 0

    package init(capacity: Int = 64 << 10) {
        self.capacity = max(capacity, 64)
        self.base = UnsafeMutableRawPointer.allocate(byteCount: self.capacity, alignment: 16)
    }

    deinit { base.deallocate() }

    /// The bytes written so far.
    package var bytes: UnsafeRawBufferPointer { UnsafeRawBufferPointer(start: base, count: count) }

    /// Makes room for `extra` more bytes and returns where they start; call ``commit(_:)`` after.
    package func reserve(_ extra: Int) -> UnsafeMutableRawPointer {
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
    package func commit(_ written: Int) { count += written }

    /// Empties the buffer, keeping its memory.
    package func removeAll() { count = 0 }
}
