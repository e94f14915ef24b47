/// Unsigned LEB128 integers, the variable-length integers of format version 2: seven bits per byte,
/// least significant group first, the high bit set on every byte but the last. 0–127 take one byte,
/// up to 2^14 − 1 two, a 64-bit value at most ten.
///
/// Only the shortest encoding of a value is valid (a last byte of zero after another byte is refused),
/// so every value has exactly one encoding and a second reader compares bytes, not values.
///
/// Engine SPI, `public` and `@inlinable`: open decodes several of them per hint entry for millions of
/// entries, and `package` declarations are not inlined into other modules.
@_spi(Engine) public enum VarInt {
    /// The most bytes one value takes.
    public static let maximumSize = 10

    /// How many bytes `value` takes.
    @inlinable @inline(__always)
    public static func size(of value: UInt64) -> Int {
        // 1 + ⌊(bits in use − 1) / 7⌋, with 0 taking one byte.
        let bits = 64 - (value | 1).leadingZeroBitCount
        return (bits + 6) / 7
    }

    /// Writes `value` at `target` (room for ``size(of:)`` bytes) and returns the bytes written.
    @inlinable @inline(__always)
    public static func write(_ value: UInt64, to target: UnsafeMutableRawPointer) -> Int {
        var rest = value
        var written = 0
        while rest >= 0x80 {
            target.storeBytes(of: UInt8(truncatingIfNeeded: rest) | 0x80, toByteOffset: written, as: UInt8.self)
            rest >>= 7
            written += 1
        }
        target.storeBytes(of: UInt8(truncatingIfNeeded: rest), toByteOffset: written, as: UInt8.self)
        return written + 1
    }

    /// Reads the value at `cursor` of `base`, not reading at or past `end`, and moves `cursor` past it.
    ///
    /// - returns: nil (and `cursor` unchanged) when the bytes end inside the value, the value needs more
    ///   than 64 bits, or it is not the shortest encoding.
    @inlinable @inline(__always)
    public static func read(_ base: UnsafeRawPointer, at cursor: inout Int, end: Int) -> UInt64? {
        var position = cursor
        guard position < end else { return nil }
        let first = base.load(fromByteOffset: position, as: UInt8.self)
        if first < 0x80 {
            cursor = position + 1
            return UInt64(first)
        }
        var value = UInt64(first & 0x7F)
        var shift: UInt64 = 7
        position += 1
        while true {
            guard position < end else { return nil }
            let byte = base.load(fromByteOffset: position, as: UInt8.self)
            position += 1
            if shift == 63 {
                // The tenth byte holds bit 63 only.
                guard byte == 1 else { return nil }
                value |= 1 << 63
                break
            }
            value |= UInt64(byte & 0x7F) << shift
            if byte < 0x80 {
                guard byte != 0 else { return nil }
                break
            }
            shift += 7
        }
        cursor = position
        return value
    }

    /// Reads the value at `cursor` of `base` and moves `cursor` past it, without any check: only for
    /// bytes that ``read(_:at:end:)`` read as a valid value before.
    @inlinable @inline(__always)
    public static func readTrusted(_ base: UnsafeRawPointer, at cursor: inout Int) -> UInt64 {
        var byte = base.load(fromByteOffset: cursor, as: UInt8.self)
        cursor += 1
        if byte < 0x80 { return UInt64(byte) }
        var value = UInt64(byte & 0x7F)
        var shift: UInt64 = 7
        repeat {
            byte = base.load(fromByteOffset: cursor, as: UInt8.self)
            cursor += 1
            value |= UInt64(byte & 0x7F) << (shift & 63)
            shift += 7
        } while byte >= 0x80 && shift < 70
        return value
    }

    /// `value` mapped so that small magnitudes of either sign are small: 0, −1, 1, −2 … → 0, 1, 2, 3 ….
    @inlinable @inline(__always)
    public static func zigzag(_ value: Int64) -> UInt64 {
        UInt64(bitPattern: (value << 1) ^ (value >> 63))
    }

    /// The inverse of ``zigzag(_:)``.
    @inlinable @inline(__always)
    public static func unzigzag(_ value: UInt64) -> Int64 {
        Int64(bitPattern: value >> 1) ^ -Int64(bitPattern: value & 1)
    }

    /// The zigzag-encoded difference `value − base`, wrapping (every pair of 64-bit values has one).
    @inlinable @inline(__always)
    public static func delta(_ value: UInt64, from base: UInt64) -> UInt64 {
        zigzag(Int64(bitPattern: value &- base))
    }

    /// The value that ``delta(_:from:)`` encoded as `delta` from `base`.
    @inlinable @inline(__always)
    public static func applying(_ delta: UInt64, to base: UInt64) -> UInt64 {
        base &+ UInt64(bitPattern: unzigzag(delta))
    }
}
