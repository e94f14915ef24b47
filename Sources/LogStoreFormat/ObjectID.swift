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

    /// The hash `Dictionary` and `Set` use: the id mixed with their per-instance seed by MurmurHash3's
    /// 64-bit finalizer (a bijection that spreads sequential ids over all bits), instead of the default
    /// SipHash. Identity caches and batches look ids up millions of times; SipHash was ~10 % of loading
    /// an object graph. Ids are handed out by the store; the seed differs per table but is no secret, so
    /// a crafted store of colliding ids could slow its tables down (never make them wrong).
    public func _rawHashValue(seed: Int) -> Int {
        var mixed = rawValue ^ UInt64(UInt(bitPattern: seed))
        mixed ^= mixed >> 33
        mixed &*= 0xff51_afd7_ed55_8ccd
        mixed ^= mixed >> 33
        mixed &*= 0xc4ce_b9fe_1a85_ec53
        mixed ^= mixed >> 33
        return Int(truncatingIfNeeded: mixed)
    }
}
