/// Why a small control file (the store identity file, the segment manifest) is not valid, and at which
/// offset: what their decoders return on failure.
package struct SmallFileProblem: Error, Equatable {
    /// Where in the file the problem is.
    package var offset: UInt64
    /// What is wrong, for an error message.
    package var reason: String
    /// Whether the file is sound but of a newer version.
    package var isUnsupportedVersion = false

    package init(offset: UInt64, reason: String, isUnsupportedVersion: Bool = false) {
        self.offset = offset
        self.reason = reason
        self.isUnsupportedVersion = isUnsupportedVersion
    }
}
