/// Little-endian reads and writes of fixed-width integers at unaligned raw addresses.
extension UnsafeRawPointer {
    /// Reads a little-endian integer at `offset`, whatever its alignment.
    @_spi(Engine) @inlinable @inline(__always)
    public func readLE<T: FixedWidthInteger>(_: T.Type, at offset: Int) -> T {
        T(littleEndian: loadUnaligned(fromByteOffset: offset, as: T.self))
    }
}

extension UnsafeMutableRawPointer {
    /// Writes `value` little-endian at `offset`, whatever its alignment.
    @_spi(Engine) @inlinable @inline(__always)
    public func writeLE<T: FixedWidthInteger>(_ value: T, at offset: Int) {
        storeBytes(of: value.littleEndian, toByteOffset: offset, as: T.self)
    }
}
