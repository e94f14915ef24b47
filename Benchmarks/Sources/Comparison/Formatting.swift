import Foundation

/// How a figure's values are shown.
enum FigureUnit: String {
    case perSecond = "/s"
    case milliseconds = "ms"
    case seconds = "s"
    case bytes = "MB"
    case microseconds = "µs"

    /// `value` for a table cell or a bar label: "1.23 M", "456 k", "12.3 ms", "34.5 MB".
    func format(_ value: Double) -> String {
        guard value.isFinite else { return "–" }
        switch self {
        case .perSecond:
            if value >= 1e6 { return String(format: "%.2f M", value / 1e6) }
            if value >= 1e3 { return String(format: "%.1f k", value / 1e3) }
            return String(format: "%.0f", value)
        case .milliseconds: return String(format: value < 10 ? "%.2f" : "%.1f", value)
        case .seconds: return String(format: "%.2f", value)
        case .bytes: return String(format: "%.1f", value / 1e6)
        case .microseconds: return String(format: value < 10 ? "%.2f" : "%.1f", value)
        }
    }
}

extension Figure {
    var figureUnit: FigureUnit { FigureUnit(rawValue: unit) ?? .perSecond }
}

/// "1,234,567".
func grouped(_ value: Int) -> String {
    let digits = String(value)
    var result = ""
    for (index, character) in digits.enumerated() {
        if index > 0 && (digits.count - index) % 3 == 0 { result.append(",") }
        result.append(character)
    }
    return result
}
