import LogStore

/// Reads the primitive encodings of the object format, checking every bound.
///
/// Every failure is an ``ObjectStoreError`` `corruptPayload` naming the object and the offset; nothing
/// here traps on bad bytes.
struct ByteReader {
    let bytes: [UInt8]
    /// The offset of the next byte to read.
    var offset = 0
    let objectID: ObjectID?
    let typeName: String?

    init(_ bytes: [UInt8], objectID: ObjectID?, typeName: String?) {
        self.bytes = bytes
        self.objectID = objectID
        self.typeName = typeName
    }

    var isAtEnd: Bool { offset >= bytes.count }

    func corrupt(_ what: String) -> ObjectStoreError {
        ObjectStoreError(.corruptPayload, "\(what) at payload offset \(offset)", typeName: typeName, objectID: objectID)
    }

    @inline(__always)
    mutating func readByte() throws(ObjectStoreError) -> UInt8 {
        guard offset < bytes.count else { throw corrupt("payload ends early") }
        defer { offset += 1 }
        return bytes[offset]
    }

    @inline(__always)
    func peekByte() throws(ObjectStoreError) -> UInt8 {
        guard offset < bytes.count else { throw corrupt("payload ends early") }
        return bytes[offset]
    }

    mutating func readVarint() throws(ObjectStoreError) -> UInt64 {
        var result: UInt64 = 0
        var shift: UInt64 = 0
        while true {
            let byte = try readByte()
            if shift == 63 && byte > 1 { throw corrupt("varint overflows 64 bits") }
            result |= UInt64(byte & 0x7F) << shift
            if byte < 0x80 { return result }
            shift += 7
            if shift > 63 { throw corrupt("varint longer than 10 bytes") }
        }
    }

    mutating func readSigned() throws(ObjectStoreError) -> Int64 {
        let raw = try readVarint()
        return Int64(bitPattern: raw >> 1) ^ -Int64(bitPattern: raw & 1)
    }

    /// A varint that counts or indexes something inside this payload: at most the bytes left.
    mutating func readCount() throws(ObjectStoreError) -> Int {
        let value = try readVarint()
        guard value <= UInt64(bytes.count) else { throw corrupt("count \(value) exceeds the payload") }
        return Int(value)
    }

    mutating func readFixed64() throws(ObjectStoreError) -> UInt64 {
        guard bytes.count - offset >= 8 else { throw corrupt("payload ends inside an 8-byte value") }
        let value = bytes.withUnsafeBytes { $0.loadUnaligned(fromByteOffset: offset, as: UInt64.self) }
        offset += 8
        return UInt64(littleEndian: value)
    }

    mutating func readFixed32() throws(ObjectStoreError) -> UInt32 {
        guard bytes.count - offset >= 4 else { throw corrupt("payload ends inside a 4-byte value") }
        let value = bytes.withUnsafeBytes { $0.loadUnaligned(fromByteOffset: offset, as: UInt32.self) }
        offset += 4
        return UInt32(littleEndian: value)
    }

    mutating func readBytes(_ count: Int) throws(ObjectStoreError) -> ArraySlice<UInt8> {
        guard count >= 0, bytes.count - offset >= count else { throw corrupt("payload ends inside \(count) bytes") }
        defer { offset += count }
        return bytes[offset..<offset + count]
    }

    mutating func readString() throws(ObjectStoreError) -> String {
        let count = try readCount()
        guard bytes.count - offset >= count else { throw corrupt("payload ends inside \(count) bytes") }
        let start = offset
        offset += count
        // ASCII (most field values and names) is valid UTF-8 as it is: made into a string without the
        // generic validation, which costs runtime metadata lookups on every call. Read in place (a slice
        // of the array would retain it).
        let ascii = bytes.withUnsafeBufferPointer { all -> String? in
            let stored = UnsafeBufferPointer(rebasing: all[start..<start + count])
            for byte in stored where byte >= 0x80 { return nil }
            return String(decoding: stored, as: UTF8.self)
        }
        if let ascii { return ascii }
        guard let string = String(validating: bytes[start..<start + count], as: UTF8.self) else {
            throw corrupt("string is not UTF-8")
        }
        return string
    }

    /// The integer of an integral `Double` (tag `0x10`): its magnitude is below 2⁴⁸, as the writer writes it.
    mutating func readIntegralDouble() throws(ObjectStoreError) -> Int64 {
        let value = try readSigned()
        guard value.magnitude < 1 << 48 else { throw corrupt("integral Double \(value) out of range") }
        return value
    }

    /// Moves past one encoded value (of any kind, nested containers included).
    mutating func skipValue(depth: Int = 0) throws(ObjectStoreError) {
        guard depth < ObjectFormat.maximumDepth else { throw corrupt("containers nest too deeply") }
        let raw = try readByte()
        guard let tag = ObjectFormat.Tag(rawValue: raw) else { throw corrupt("unknown value tag \(raw)") }
        switch tag {
        case .end: throw corrupt("container end where a value was expected")
        case .null, .falseValue, .trueValue: return
        case .signed, .unsigned, .reference, .lazyReference, .integralDouble: _ = try readVarint()
        case .double: _ = try readBytes(8)
        case .float, .singleDouble: _ = try readBytes(4)
        case .uuid: _ = try readBytes(16)
        case .string, .bytes: _ = try readBytes(try readCount())
        case .keyed:
            while try peekByte() != 0 {
                _ = try readVarint()
                try skipValue(depth: depth + 1)
            }
            offset += 1
        case .unkeyed, .map:
            while try peekByte() != 0 { try skipValue(depth: depth + 1) }
            offset += 1
        }
    }
}
