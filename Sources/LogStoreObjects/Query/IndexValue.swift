import Foundation
import LogStore

/// One value of an indexed field, as an index orders it.
///
/// The order: absent < null < false < true < numbers < strings < bytes < UUIDs < references. Numbers
/// compare by value whatever their kind (`Int`, `UInt64`, `Double`; `Date` is stored as its `Double`
/// seconds since 2001), strings by their UTF-8 bytes (as SQLite's `BINARY` collation), UUIDs and
/// references by their bytes and ids. `absent` is what an index holds for an object whose record lacks the
/// field (stored before the field existed) or holds something an index cannot order (a nested value):
/// every query through the index reads such objects and tests them itself.
public enum IndexValue: Sendable, Hashable, Comparable, CustomStringConvertible {
    /// The record does not hold the field, or holds a value an index cannot order.
    case absent
    /// nil.
    case null
    /// A `Bool`.
    case bool(Bool)
    /// A signed integer (and an unsigned one up to `Int64.max`).
    case int(Int64)
    /// An unsigned integer above `Int64.max`.
    case uint(UInt64)
    /// A `Double` or `Float` (and a `Date`, as seconds since 2001-01-01).
    case double(Double)
    /// A string.
    case string(String)
    /// Bytes (`Data`, `[UInt8]` encoded as bytes).
    case bytes([UInt8])
    /// A `UUID`.
    case uuid(UUID)
    /// A reference to another persistent object.
    case reference(ObjectID)

    private var rank: Int {
        switch self {
        case .absent: 0
        case .null: 1
        case .bool: 2
        case .int, .uint, .double: 3
        case .string: 4
        case .bytes: 5
        case .uuid: 6
        case .reference: 7
        }
    }

    /// -1, 0 or 1 as `self` orders before, with or after `other`.
    func compare(_ other: IndexValue) -> Int {
        switch (self, other) {
        case (.int(let a), .int(let b)): return a < b ? -1 : (a == b ? 0 : 1)
        case (.string(let a), .string(let b)): return Self.compareUTF8(a, b)
        case (.double(let a), .double(let b)): return Self.compareDoubles(a, b)
        case (.reference(let a), .reference(let b)): return a < b ? -1 : (a == b ? 0 : 1)
        case (.bool(let a), .bool(let b)): return a == b ? 0 : (a ? 1 : -1)
        case (.uint(let a), .uint(let b)): return a < b ? -1 : (a == b ? 0 : 1)
        case (.int, .uint): return -1
        case (.uint, .int): return 1
        case (.int(let a), .double(let b)): return Self.compare(a, b)
        case (.double(let a), .int(let b)): return -Self.compare(b, a)
        case (.uint(let a), .double(let b)): return Self.compare(a, b)
        case (.double(let a), .uint(let b)): return -Self.compare(b, a)
        case (.bytes(let a), .bytes(let b)):
            return a.lexicographicallyPrecedes(b) ? -1 : (a == b ? 0 : 1)
        case (.uuid(let a), .uuid(let b)):
            let x = withUnsafeBytes(of: a.uuid) { Array($0) }
            let y = withUnsafeBytes(of: b.uuid) { Array($0) }
            return x.lexicographicallyPrecedes(y) ? -1 : (x == y ? 0 : 1)
        default:
            let (a, b) = (rank, other.rank)
            return a < b ? -1 : (a == b ? 0 : 1)
        }
    }

    /// Equal when they compare equal (so `.int(1) == .double(1)`).
    public static func == (lhs: IndexValue, rhs: IndexValue) -> Bool { lhs.compare(rhs) == 0 }

    /// In the index's order.
    public static func < (lhs: IndexValue, rhs: IndexValue) -> Bool { lhs.compare(rhs) < 0 }

    /// Hashes what equality compares: numbers by their value.
    public func hash(into hasher: inout Hasher) {
        switch self {
        case .absent: hasher.combine(0)
        case .null: hasher.combine(1)
        case .bool(let value): hasher.combine(value)
        case .int(let value): hasher.combine(Double(value))
        case .uint(let value): hasher.combine(Double(value))
        case .double(let value): hasher.combine(value.isNaN ? Double.nan.bitPattern : (value + 0).bitPattern)
        case .string(let value): hasher.combine(value)
        case .bytes(let value): hasher.combine(value)
        case .uuid(let value): hasher.combine(value)
        case .reference(let value): hasher.combine(value)
        }
    }

    /// The value in words.
    public var description: String {
        switch self {
        case .absent: "absent"
        case .null: "nil"
        case .bool(let value): "\(value)"
        case .int(let value): "\(value)"
        case .uint(let value): "\(value)"
        case .double(let value): "\(value)"
        case .string(let value): "\"\(value)\""
        case .bytes(let value): "\(value.count) bytes"
        case .uuid(let value): value.uuidString
        case .reference(let value): "object \(value)"
        }
    }

    /// Whether this is a NaN (which an index holds equal to itself and after every number).
    var isNaN: Bool {
        if case .double(let value) = self { return value.isNaN }
        return false
    }

    /// Whether this is a string starting with `prefix`'s UTF-8 bytes.
    func hasPrefix(_ prefix: String) -> Bool {
        guard case .string(let value) = self else { return false }
        return value.utf8.starts(with: prefix.utf8)
    }

    private static func compareUTF8(_ a: String, _ b: String) -> Int {
        var a = a
        var b = b
        return a.withUTF8 { x in
            b.withUTF8 { y in
                let common = min(x.count, y.count)
                if common > 0, let xb = x.baseAddress, let yb = y.baseAddress {
                    let result = memcmp(xb, yb, common)
                    if result != 0 { return result < 0 ? -1 : 1 }
                }
                return x.count < y.count ? -1 : (x.count == y.count ? 0 : 1)
            }
        }
    }

    /// NaN orders after every other number, and equals NaN (a total order).
    private static func compareDoubles(_ a: Double, _ b: Double) -> Int {
        if a.isNaN || b.isNaN { return a.isNaN ? (b.isNaN ? 0 : 1) : -1 }
        return a < b ? -1 : (a == b ? 0 : 1)
    }

    /// An integer against a double, exactly (no rounding of the integer).
    private static func compare(_ a: Int64, _ b: Double) -> Int {
        if b.isNaN { return -1 }
        if b < -9_223_372_036_854_775_808.0 { return 1 }
        if b >= 9_223_372_036_854_775_808.0 { return -1 }
        let floor = b.rounded(.down)
        let whole = Int64(floor)
        if a != whole { return a < whole ? -1 : 1 }
        return floor == b ? 0 : -1
    }

    private static func compare(_ a: UInt64, _ b: Double) -> Int {
        if b.isNaN { return -1 }
        if b < 0 { return 1 }
        if b >= 18_446_744_073_709_551_616.0 { return -1 }
        let floor = b.rounded(.down)
        let whole = UInt64(floor)
        if a != whole { return a < whole ? -1 : 1 }
        return floor == b ? 0 : -1
    }
}

/// A type whose values an index can hold: the standard integers and floating-point types, `Bool`,
/// `String`, `Date`, `UUID`, `Data`, persistent objects (as references) and optionals of these.
public protocol IndexableValue {
    /// The value as an index holds it.
    var indexValue: IndexValue { get }
}

extension Int: IndexableValue {
    /// The value as an index holds it.
    public var indexValue: IndexValue { .int(Int64(self)) }
}
extension Int8: IndexableValue {
    /// The value as an index holds it.
    public var indexValue: IndexValue { .int(Int64(self)) }
}
extension Int16: IndexableValue {
    /// The value as an index holds it.
    public var indexValue: IndexValue { .int(Int64(self)) }
}
extension Int32: IndexableValue {
    /// The value as an index holds it.
    public var indexValue: IndexValue { .int(Int64(self)) }
}
extension Int64: IndexableValue {
    /// The value as an index holds it.
    public var indexValue: IndexValue { .int(self) }
}
extension UInt: IndexableValue {
    /// The value as an index holds it.
    public var indexValue: IndexValue { UInt64(self).indexValue }
}
extension UInt8: IndexableValue {
    /// The value as an index holds it.
    public var indexValue: IndexValue { .int(Int64(self)) }
}
extension UInt16: IndexableValue {
    /// The value as an index holds it.
    public var indexValue: IndexValue { .int(Int64(self)) }
}
extension UInt32: IndexableValue {
    /// The value as an index holds it.
    public var indexValue: IndexValue { .int(Int64(self)) }
}
extension UInt64: IndexableValue {
    /// The value as an index holds it (as a signed integer when it fits, so that it compares with them).
    public var indexValue: IndexValue { self <= UInt64(Int64.max) ? .int(Int64(self)) : .uint(self) }
}
extension Double: IndexableValue {
    /// The value as an index holds it.
    public var indexValue: IndexValue { .double(self) }
}
extension Float: IndexableValue {
    /// The value as an index holds it.
    public var indexValue: IndexValue { .double(Double(self)) }
}
extension Bool: IndexableValue {
    /// The value as an index holds it.
    public var indexValue: IndexValue { .bool(self) }
}
extension String: IndexableValue {
    /// The string in Unicode normal form C (as Swift compares strings), so that an index's byte order and
    /// equality are `String`'s.
    public var indexValue: IndexValue {
        var copy = self
        let ascii = copy.withUTF8 { bytes in bytes.allSatisfy { $0 < 0x80 } }
        return ascii ? .string(self) : .string(precomposedStringWithCanonicalMapping)
    }
}
extension Date: IndexableValue {
    /// The value as an index holds it.
    public var indexValue: IndexValue { .double(timeIntervalSinceReferenceDate) }
}
extension UUID: IndexableValue {
    /// The value as an index holds it.
    public var indexValue: IndexValue { .uuid(self) }
}
extension Data: IndexableValue {
    /// The value as an index holds it.
    public var indexValue: IndexValue { .bytes(Array(self)) }
}
extension ObjectID: IndexableValue {
    /// The value as an index holds it.
    public var indexValue: IndexValue { .reference(self) }
}
extension Optional: IndexableValue where Wrapped: IndexableValue {
    /// The wrapped value's, or `null`.
    public var indexValue: IndexValue { map(\.indexValue) ?? .null }
}
