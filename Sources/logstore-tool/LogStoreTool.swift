import ArgumentParser
import LogStore

/// The `logstore-tool` command: inspect, verify, compact, export, import, watch and demonstrate LogStore
/// stores.
///
/// Synchronous: a command runs on the main thread, the one a SIGINT interrupts (`Interruption`); `watch`
/// reads its change feed in a task and waits for it there.
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
            Backup.self,
            Restore.self,
            Salvage.self,
            History.self,
            Replicate.self,
            Get.self,
            Export.self,
            Import.self,
            Watch.self,
            Tables.self,
            Stress.self,
            NewKey.self,
            Rekey.self,
        ]
    )
}
