import Foundation

/// A horizontal bar chart (SVG) of every figure, each store's median relative to the best store's
/// (the best is a full bar; for times and bytes the bar is best ÷ value, so longer is better everywhere),
/// with the actual value printed at the end of each bar.
struct ComparisonChart {
    let report: ComparisonReport
    let peers: [String]

    private static let colors = ["#d95f02", "#1b9e77", "#7570b3", "#e7298a", "#66a61e", "#a6761d"]
    private let labelWidth = 330.0
    private let barArea = 430.0
    private let barHeight = 11.0
    private let groupGap = 9.0
    /// Legend entries per line.
    private let legendColumns = 3
    private var top: Double { 62.0 + Double((peers.count - 1) / legendColumns) * 14 }

    private func escape(_ text: String) -> String {
        text.replacingOccurrences(of: "&", with: "&amp;").replacingOccurrences(of: "<", with: "&lt;")
            .replacingOccurrences(of: ">", with: "&gt;")
    }

    var svg: String {
        let figures = report.figures
        // Each figure has a bar for each store measured on it (the object rows have two).
        func measured(_ figure: Figure) -> [(index: Int, peer: String)] {
            peers.enumerated().compactMap { index, peer in
                guard let value = figure.samples[peer]?.median, value.isFinite, value > 0 else { return nil }
                return (index, peer)
            }
        }
        let height =
            top + figures.reduce(0.0) { $0 + Double(max(1, measured($1).count)) * barHeight + groupGap } + 30
        let width = labelWidth + barArea + 110
        var parts: [String] = []
        parts.append(
            "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"\(Int(width))\" height=\"\(Int(height))\" "
                + "font-family=\"Helvetica, Arial, sans-serif\" font-size=\"11\">")
        parts.append("<rect width=\"100%\" height=\"100%\" fill=\"white\"/>")
        parts.append(
            "<text x=\"10\" y=\"18\" font-size=\"14\" font-weight=\"bold\">LogStore and its peers: "
                + "each figure relative to the best store (longer is better)</text>")
        let machine = report.machine
        parts.append(
            "<text x=\"10\" y=\"34\" fill=\"#555\">\(escape("\(machine.date), \(machine.cores) cores, \(machine.memory), \(machine.kernel); medians; value at the end of each bar"))</text>"
        )
        for (index, peer) in peers.enumerated() {
            let x = 10 + Double(index % legendColumns) * 250
            let y = 42 + Double(index / legendColumns) * 14
            parts.append(
                "<rect x=\"\(x)\" y=\"\(y)\" width=\"12\" height=\"10\" fill=\"\(Self.colors[index % Self.colors.count])\"/>"
            )
            parts.append("<text x=\"\(x + 16)\" y=\"\(y + 9)\">\(escape(peer))</text>")
        }
        var y0 = top
        for figure in figures {
            let bars = measured(figure)
            defer { y0 += Double(max(1, bars.count)) * barHeight + groupGap }
            let values = bars.compactMap { figure.samples[$0.peer]?.median }
            guard let best = figure.higherIsBetter ? values.max() : values.min() else { continue }
            parts.append(
                "<text x=\"\(labelWidth - 8)\" y=\"\(y0 + Double(bars.count) * barHeight / 2 + 4)\" "
                    + "text-anchor=\"end\">\(escape(figure.title + " (" + figure.unit + ")"))</text>")
            for (row, (index, peer)) in bars.enumerated() {
                guard let value = figure.samples[peer]?.median else { continue }
                let score = figure.higherIsBetter ? value / best : best / value
                let y = y0 + Double(row) * barHeight
                let length = max(1, score * barArea)
                parts.append(
                    "<rect x=\"\(labelWidth)\" y=\"\(y)\" width=\"\(String(format: "%.1f", length))\" "
                        + "height=\"\(barHeight - 2)\" fill=\"\(Self.colors[index % Self.colors.count])\"/>")
                parts.append(
                    "<text x=\"\(String(format: "%.1f", labelWidth + length + 4))\" y=\"\(y + barHeight - 3)\" "
                        + "font-size=\"9\">\(escape(figure.figureUnit.format(value)))</text>")
            }
        }
        parts.append("</svg>")
        return parts.joined(separator: "\n") + "\n"
    }
}
