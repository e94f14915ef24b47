@_spi(Engine) import LogStoreFormat

/// Type tags of the objects the crash writer stores: a single put, a batch member, a batch manifest.
package enum CrashTag {
    package static let single: UInt32 = 1
    package static let member: UInt32 = 2
    package static let manifest: UInt32 = 3
}

/// The payload the crash writer stores under object id `id`, so that a checker can recompute it: `id %
/// 4001` bytes repeating the 8 little-endian bytes of `id &* 0x9E37_79B9_7F4A_7C15`.
package func crashPayload(for objectID: ObjectID) -> [UInt8] {
    let id = objectID.rawValue
    let count = Int(id % 4001)
    let word = (id &* 0x9E37_79B9_7F4A_7C15).littleEndian
    var bytes = withUnsafeBytes(of: word) { Array($0) }
    // Doubling keeps this fast in debug builds, where a per-byte loop is slow.
    while bytes.count < count { bytes += bytes }
    bytes.removeLast(bytes.count - count)
    return bytes
}
