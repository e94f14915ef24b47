extension KeyedDecodingContainer {
    /// The value of `key`, or `defaultValue` when the stored object has no such field (it was stored
    /// before the field was added).
    ///
    /// For example, in a persistent class's `init(from:)`:
    ///
    /// ```swift
    /// age = try container.decode(Int.self, forKey: .age, default: 0)
    /// ```
    /// - throws: what `decodeIfPresent(_:forKey:)` throws (a stored value of another type).
    public func decode<T: Decodable>(_ type: T.Type, forKey key: Key, default defaultValue: @autoclosure () -> T)
        throws -> T
    {
        try decodeIfPresent(type, forKey: key) ?? defaultValue()
    }
}
