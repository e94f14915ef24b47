import Foundation

/// Foundation's `localizedDescription` of an object-layer error is its one-line
/// ``ObjectStoreError/description``, not a generic "error 1".
extension ObjectStoreError: LocalizedError {
    /// The same text as ``description``.
    public var errorDescription: String? { description }
}
