import Foundation

/// Foundation's `localizedDescription` of a store error is its one-line ``LogStoreError/description``
/// (code, message, file and offset, cause), not a generic "error 1".
extension LogStoreError: LocalizedError {
    /// The same text as ``description``.
    public var errorDescription: String? { description }
}
