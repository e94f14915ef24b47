@_spi(Engine) import LogStoreFormat
@_spi(Engine) import LogStoreSystem

/// What opening a store repaired: the torn tail cut off the newest segment after a crash.
public struct RecoveryReport: Sendable, Equatable, CustomStringConvertible {
    /// The segment file whose tail was torn.
    public var segmentFile: String
    /// Offset where the valid log ends (the end of the last complete commit); the file now ends here.
    public var cutOffset: UInt64
    /// How many bytes were cut off.
    public var bytesCut: UInt64
    /// Where the cut bytes were saved, or nil when nothing was cut (read-only open).
    public var savedTo: String?
    /// Why the tail was not valid.
    public var reason: String

    /// One line for logs.
    public var description: String {
        let saved = savedTo.map { ", saved to \($0)" } ?? " (read-only: not cut)"
        return "torn tail of \(segmentFile) at offset \(cutOffset): \(bytesCut) bytes cut\(saved) — \(reason)"
    }
}
