/// The constants of the object payload format; `Documentation/Objects.md` describes it.
///
/// ```
/// payload   := version(u8) [eagerCount(varint), when version = 2 or 4] value
/// value     := tag(u8) body
/// keyed     := 0x0A (fieldNumber(varint ≥ 1) value)* 0x00
/// unkeyed   := 0x0B value* 0x00
/// map       := 0x0C (value value)* 0x00          -- dictionaries: key, value, key, value…
/// ```
enum ObjectFormat {
    /// Payload version: every reference in the record's list is eager.
    static let versionAllEager: UInt8 = 1
    /// Payload version: a varint follows with the number of eager references; the rest are lazy.
    static let versionWithLazy: UInt8 = 2
    /// Payload version: as ``versionAllEager``, and values may use the tags of compact numbers
    /// (``Tag/integralDouble``, ``Tag/singleDouble``).
    static let versionAllEagerCompactNumbers: UInt8 = 3
    /// Payload version: as ``versionWithLazy``, and values may use the tags of compact numbers.
    static let versionWithLazyCompactNumbers: UInt8 = 4

    /// Whether `version` is a payload version this reader knows.
    static func isKnown(version: UInt8) -> Bool { (1...4).contains(version) }

    /// Whether a payload of `version` has the eager reference count after its version byte.
    static func hasEagerCount(version: UInt8) -> Bool {
        version == versionWithLazy || version == versionWithLazyCompactNumbers
    }

    /// The version of a payload with lazy references or not, and with compact numbers or not.
    static func version(hasLazy: Bool, hasCompactNumbers: Bool) -> UInt8 {
        (hasLazy ? versionWithLazy : versionAllEager) + (hasCompactNumbers ? 2 : 0)
    }
    /// Field numbers are below this (a sanity bound for corrupt records).
    static let maximumFieldNumber = 1 << 24
    /// Containers nest at most this deep (a bound against stack exhaustion on corrupt or hostile data).
    static let maximumDepth = 512

    /// The first byte of every encoded value.
    enum Tag: UInt8 {
        /// Ends a keyed, unkeyed or map container.
        case end = 0x00
        /// nil.
        case null = 0x01
        /// `false`.
        case falseValue = 0x02
        /// `true`.
        case trueValue = 0x03
        /// A signed integer: zigzag varint.
        case signed = 0x04
        /// An unsigned integer: varint.
        case unsigned = 0x05
        /// A `Double`: 8 bytes, IEEE 754 little-endian.
        case double = 0x06
        /// A `Float`: 4 bytes, IEEE 754 little-endian.
        case float = 0x07
        /// A string: varint byte count, UTF-8 bytes.
        case string = 0x08
        /// Bytes (`Data`): varint count, bytes.
        case bytes = 0x09
        /// A keyed container (struct fields): see the grammar.
        case keyed = 0x0A
        /// An unkeyed container (array elements).
        case unkeyed = 0x0B
        /// A dictionary: alternating keys and values.
        case map = 0x0C
        /// A reference to a persistent object: varint index into the record's reference list.
        case reference = 0x0D
        /// A lazy reference: varint object id (the id is also in the record's reference list).
        case lazyReference = 0x0E
        /// A `UUID`: 16 bytes.
        case uuid = 0x0F
        /// A `Double` (or `Float`) whose value is an integer: zigzag varint (payload versions 3 and 4).
        /// Only a `Double` or `Float` reads it: an integer field does not take a stored `Double`.
        case integralDouble = 0x10
        /// A `Double` that a `Float` holds exactly: 4 bytes, IEEE 754 single, little-endian (payload versions
        /// 3 and 4).
        case singleDouble = 0x11
    }
}
