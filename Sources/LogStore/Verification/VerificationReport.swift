@_spi(Engine) import LogStoreFormat
@_spi(Engine) import LogStoreSystem

/// What ``Store/verify(at:)`` found: every problem, with file and offset.
public struct VerificationReport: Sendable {
    /// One problem: where it is and what is wrong.
    public struct Problem: Sendable, Equatable, CustomStringConvertible {
        /// The file the problem is in.
        public var file: String
        /// Byte offset in the file, when known.
        public var offset: UInt64?
        /// What is wrong.
        public var message: String

        /// A problem in `file` (or in what it names), at `offset` when known.
        public init(file: String, offset: UInt64?, message: String) {
            self.file = file
            self.offset = offset
            self.message = message
        }

        /// `file @ offset: message`.
        public var description: String {
            "\(file)" + (offset.map { " @ \($0)" } ?? "") + ": \(message)"
        }
    }

    /// Every problem found, in file order. Empty when the store is sound.
    public var problems: [Problem] = []
    /// Observations that are not damage, e.g. a torn tail that the next open for writing will cut.
    public var notes: [String] = []
    /// Number of segment files.
    public var segments = 0
    /// Number of committed frames read.
    public var frames = 0
    /// Number of compression dictionaries whose files were read and checked (a damaged one is a problem).
    public var dictionaries = 0
    /// Number of live objects whose records were read back and checked.
    public var liveObjects = 0

    /// Whether no problem was found.
    public var isSound: Bool { problems.isEmpty }
}
