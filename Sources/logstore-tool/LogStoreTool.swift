import ArgumentParser
import LogStore

/// The `logstore-tool` command: inspect, verify, compact, export, import, watch and demonstrate LogStore
/// stores. Async, because `watch` is: the other commands run as they are.
@main
struct LogStoreTool: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "logstore-tool",
        abstract: "Inspect, verify and maintain LogStore stores.",
        version: "logstore-tool \(PackageVersion.current)",
        subcommands: [
            Demo.self,
            EngineDemo.self,
            Stats.self,
            Verify.self,
            Compact.self,
            Get.self,
            Export.self,
            Import.self,
            Watch.self,
            Tables.self,
            Stress.self,
        ]
    )
}
