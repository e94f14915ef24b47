import ArgumentParser
import LogStore

@main
struct LogStoreTool: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "logstore-tool",
        abstract: "Inspect, verify and maintain LogStore stores."
    )
}
