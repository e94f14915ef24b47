import Foundation
@_spi(Engine) import LogStoreFormat

/// Foundation's `localizedDescription` of a failed system call is its ``SystemError/description``.
extension SystemError: LocalizedError {
    /// The same text as ``description``.
    public var errorDescription: String? { description }
}
