/// The identity of a stored object: a 64-bit number handed out by the store, never reused.
///
/// Ids start at 1 and grow by one per ``Store/newID()``; 0 is never a valid id, and none is larger than
/// ``LogStoreLimits/maxObjectID`` (2^63 − 1).
public struct ObjectID: RawRepresentable, Hashable, Comparable, Sendable, CustomStringConvertible {
    /// The id's number.
    public var rawValue: UInt64

    /// Wraps a number as an id.
    public init(rawValue: UInt64) { self.rawValue = rawValue }

    /// Wraps a number as an id.
    public init(_ rawValue: UInt64) { self.rawValue = rawValue }

    /// Orders ids by number (allocation order).
    public static func < (lhs: ObjectID, rhs: ObjectID) -> Bool { lhs.rawValue < rhs.rawValue }

    /// The number in decimal.
    public var description: String { String(rawValue) }
}
