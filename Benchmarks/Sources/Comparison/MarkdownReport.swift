import CLevelDB
import Foundation

/// The report as Markdown: the machine, the data, one table of every figure with LogStore ÷ best peer,
/// the floors, and each store's settings.
struct MarkdownReport {
    let report: ComparisonReport
    let peers: [String]

    var text: String {
        var lines: [String] = []
        let machine = report.machine
        lines.append("# LogStore, SQLite, LMDB, RocksDB and LevelDB side by side")
        lines.append("")
        lines.append(
            "- **Machine:** \(machine.cores) cores (\(machine.cpu)), \(machine.memory), \(machine.kernel), "
                + "\(machine.disk)")
        lines.append("- **Date:** \(machine.date); LogStore commit `\(machine.commit)`")
        lines.append(
            "- **Peers:** SQLite \(machine.sqliteVersion) through GRDB; \(machine.lmdbVersion); RocksDB from Debian's"
                + " librocksdb-dev; LevelDB \(leveldb_major_version()).\(leveldb_minor_version())")
        lines.append("- **Command:** `\(report.command)`")
        for (name, value) in report.parameters.sorted(by: { $0.key < $1.key }) {
            lines.append("- **\(name):** \(value)")
        }
        lines.append("")
        lines.append(
            "Each cell is the median of the repetitions with the lowest and highest in brackets. The last column is "
                + "LogStore's median ÷ the best other store's (✓ where LogStore is ahead: a ratio above 1 for rates, "
                + "below 1 for times and bytes). In the object-graph rows LogStore is LogStoreObjects and SQLite is "
                + "GRDB Codable records; in the path-table rows LogStore is the ODB; in the task rows LogStore is "
                + "LogStoreObjects with its indexes and SQLite a table with `CREATE INDEX`.")
        lines.append("")
        lines.append("| Workload | Unit | " + peers.joined(separator: " | ") + " | LogStore ÷ best peer |")
        lines.append("| --- | --- |" + String(repeating: " ---: |", count: peers.count) + " --- |")
        for figure in report.figures {
            var cells = [figure.title, figure.unit == "MB" ? "MB" : figure.unit]
            for peer in peers {
                guard let samples = figure.samples[peer] else {
                    cells.append("–")
                    continue
                }
                let unit = figure.figureUnit
                cells.append(
                    samples.values.count > 1
                        ? "\(unit.format(samples.median)) (\(unit.format(samples.minimum))–\(unit.format(samples.maximum)))"
                        : unit.format(samples.median))
            }
            if let ratio = figure.ratio, let best = figure.bestPeer, let wins = figure.logStoreWins {
                cells.append(String(format: "%.2f (%@) %@", ratio, best.name, wins ? "✓" : "✗"))
            } else {
                cells.append("–")
            }
            lines.append("| " + cells.joined(separator: " | ") + " |")
        }
        let notes = report.figures.filter { !$0.notes.isEmpty }
        if !notes.isEmpty {
            lines.append("")
            lines.append("Commit latencies (all repetitions):")
            lines.append("")
            for figure in notes {
                for peer in peers {
                    if let note = figure.notes[peer], !note.isEmpty {
                        lines.append("- \(figure.title), \(peer): \(note)")
                    }
                }
            }
        }
        lines.append("")
        lines.append("## Floors")
        lines.append("")
        lines.append("| Floor | Measured | Met |")
        lines.append("| --- | --- | --- |")
        for floor in report.floors {
            lines.append("| \(floor.description) | \(floor.measured) | \(floor.met ? "yes" : "**no**") |")
        }
        lines.append("")
        lines.append("## Settings")
        lines.append("")
        for peer in peers {
            lines.append("- **\(peer)**: \(report.setup[peer] ?? ""). Durability: \(report.durability[peer] ?? "").")
        }
        lines.append("")
        return lines.joined(separator: "\n")
    }
}
