/// Appends the primitive encodings of the object format to a byte array.
struct ByteWriter {
    /// The bytes written so far.
    var bytes: [UInt8] = []

    init(capacity: Int = 64) {
        bytes.reserveCapacity(capacity)
    }

    mutating func write(_ byte: UInt8) {
        bytes.append(byte)
    }

    mutating func write(_ tag: ObjectFormat.Tag) {
        bytes.append(tag.rawValue)
    }

    /// LEB128: 7 bits per byte, low bits first, high bit set on all but the last byte.
    mutating func writeVarint(_ value: UInt64) {
        var value = value
        while value >= 0x80 {
            bytes.append(UInt8(truncatingIfNeeded: value) | 0x80)
            value >>= 7
        }
        bytes.append(UInt8(value))
    }

    /// Zigzag (0, -1, 1, -2… as 0, 1, 2, 3…) then LEB128.
    mutating func writeSigned(_ value: Int64) {
        writeVarint(UInt64(bitPattern: (value << 1) ^ (value >> 63)))
    }

    mutating func writeFixed64(_ value: UInt64) {
        withUnsafeBytes(of: value.littleEndian) { bytes.append(contentsOf: $0) }
    }

    mutating func writeFixed32(_ value: UInt32) {
        withUnsafeBytes(of: value.littleEndian) { bytes.append(contentsOf: $0) }
    }

    /// Varint byte count, then the UTF-8 bytes.
    mutating func writeString(_ string: String) {
        var string = string
        string.withUTF8 { utf8 in
            writeVarint(UInt64(utf8.count))
            bytes.append(contentsOf: utf8)
        }
    }
}
