/// What one ``Store/replicate(to:)`` pass did.
public struct ReplicationReport: Sendable, Equatable {
    /// The replica's directory.
    public var destination: String
    /// The newest commit the replica holds after the pass: exactly the commits up to this one.
    public var sequence: UInt64
    /// Segments copied whole (new since the last pass).
    public var segmentsCopied: Int
    /// Bytes appended to segments the replica had a part of (the segment being written).
    public var bytesAppended: UInt64
    /// Bytes of the segments copied whole.
    public var bytesCopied: UInt64
    /// Segments removed from the replica because the store compacted them away.
    public var segmentsRemoved: Int
}
