import ArgumentParser
import LogStore

/// The `logstore-tool` command: inspect, verify, compact, export, import and demonstrate LogStore stores.
@main
struct LogStoreTool: ParsableCommand {
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
            Tables.self,
            Stress.self,
        ]
    )
}
