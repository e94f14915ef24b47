/// What ``Store/checkpoint(to:hardLinks:progress:)`` or ``Store/backup(to:hardLinks:progress:)`` wrote.
public struct CheckpointReport: Sendable, Equatable {
    /// The directory of the copy.
    public var destination: String
    /// The sequence number of the newest commit the copy holds: it holds exactly the commits up to this one.
    public var sequence: UInt64
    /// Segments in the copy.
    public var segments: Int
    /// Segments given a second name (a hard link) to the store's file: no data copied.
    public var linkedSegments: Int
    /// Segments whose bytes were copied (the segment being written, and every segment when the copy is on
    /// another file system).
    public var copiedSegments: Int
    /// Segments an incremental backup kept from the backup it replaced (linked from there).
    public var keptSegments: Int
    /// Bytes of segments linked or kept, not copied.
    public var bytesLinked: UInt64
    /// Bytes of segments copied.
    public var bytesCopied: UInt64
    /// What the copy noticed without it being a failure (e.g. a replaced backup's folder that could not
    /// be removed because it holds other files).
    public var notes: [String]
}

/// How far a checkpoint or backup is: bytes of segments done out of the bytes of every segment in the copy
/// (linked ones count as done when linked).
public struct CheckpointProgress: Sendable, Equatable {
    /// Segment bytes done.
    public var bytesDone: UInt64
    /// Segment bytes in the copy.
    public var bytesTotal: UInt64
}
