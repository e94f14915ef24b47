/// The version of the LogStore package, which `logstore-tool --version` prints: the one place it is
/// defined (raise it with every release).
enum PackageVersion {
    /// Semantic version: major.minor.patch.
    static let current = "0.1.0"
}
