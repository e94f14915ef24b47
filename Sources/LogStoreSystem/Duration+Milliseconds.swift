@_spi(Engine) import LogStoreFormat

extension Duration {
    /// This duration in whole milliseconds: rounded down, 0 for a negative one, at most `Int.max`.
    package var wholeMilliseconds: Int {
        let (seconds, attoseconds) = components
        let total = Double(seconds) * 1000 + Double(attoseconds) / 1e15
        return total >= Double(Int.max) ? Int.max : max(0, Int(total))
    }
}
