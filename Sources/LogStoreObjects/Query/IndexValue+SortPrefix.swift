import Foundation

extension IndexValue {

    /// A 64-bit summary of the value in the index's order: when two values' prefixes differ, they order as
    /// their prefixes do; equal values have equal prefixes; values with equal prefixes are compared in full.
    /// An ordered index compares prefixes first, so most comparisons read one integer and no string.
    ///
    /// The top 3 bits are the kind's rank (absent, null, bool, numbers, strings, bytes, UUIDs, references);
    /// the other 61 are the value's leading bits in order: a number as its `Double` (rounding is monotone,
    /// so an integer orders with doubles as exactly compared values do; -0 is 0; every NaN is one value,
    /// after the numbers), a string's or bytes' first 7 bytes (missing bytes as zero), a UUID's first 7
    /// bytes, a reference's id shifted right by 3.
    var sortPrefix: UInt64 {
        switch self {
        case .absent: return 0
        case .null: return 1 << 61
        case .bool(let value): return 2 << 61 | (value ? 1 : 0)
        case .int(let value): return Self.numberPrefix(Double(value))
        case .uint(let value): return Self.numberPrefix(Double(value))
        case .double(let value): return Self.numberPrefix(value)
        case .string(var value): return 4 << 61 | value.withUTF8 { Self.leadingBytes($0) }
        case .bytes(let value): return 5 << 61 | value.withUnsafeBufferPointer { Self.leadingBytes($0) }
        case .uuid(let value):
            return 6 << 61 | withUnsafeBytes(of: value.uuid) { Self.leadingBytes($0.bindMemory(to: UInt8.self)) }
        case .reference(let value): return 7 << 61 | value.rawValue >> 3
        }
    }

    /// The rank of numbers (3) and the number's order-preserving bits, shifted right by 3.
    private static func numberPrefix(_ value: Double) -> UInt64 {
        let ordered: UInt64
        if value.isNaN {
            ordered = UInt64.max
        } else {
            let bits = (value + 0).bitPattern  // -0 + 0 is +0
            ordered = bits >> 63 == 1 ? ~bits : bits | 1 << 63
        }
        return 3 << 61 | ordered >> 3
    }

    /// The first 7 bytes, big-endian, with zeros for bytes past the end.
    private static func leadingBytes(_ bytes: UnsafeBufferPointer<UInt8>) -> UInt64 {
        var result: UInt64 = 0
        for index in 0..<7 { result = result << 8 | UInt64(index < bytes.count ? bytes[index] : 0) }
        return result
    }
}
