import Foundation
import PackagePlugin

/// Compiles the ```swift blocks of `README.md` and `Documentation/*.md` into the target it is applied
/// to, so a snippet that stops compiling fails the build, with the error at its line in the Markdown
/// file.
///
/// The `doc-snippets` tool writes one Swift file per Markdown file and an index of the blocks; it runs
/// again whenever a Markdown file changes. A fence `` ```swift with store: Store `` names values the
/// block uses without declaring them; `` ```swift no-compile `` leaves a block out.
@main
struct DocSnippetsPlugin: BuildToolPlugin {
    func createBuildCommands(context: PluginContext, target: any Target) throws -> [Command] {
        let root = context.package.directoryURL
        let documentation = root.appending(path: "Documentation")
        let documents =
            [root.appending(path: "README.md")]
            + (try FileManager.default.contentsOfDirectory(at: documentation, includingPropertiesForKeys: nil))
            .filter { $0.pathExtension == "md" }
            .sorted { $0.lastPathComponent < $1.lastPathComponent }
        let output = context.pluginWorkDirectoryURL
        let index = output.appending(path: "DocumentationSnippets.swift")
        var arguments = [root.path(percentEncoded: false), index.path(percentEncoded: false)]
        var outputs = [index]
        for document in documents {
            let generated = output.appending(
                path: "Snippets_" + document.deletingPathExtension().lastPathComponent + ".swift")
            arguments += [document.path(percentEncoded: false), generated.path(percentEncoded: false)]
            outputs.append(generated)
        }
        return [
            .buildCommand(
                displayName: "Extracting the Swift snippets of the documentation",
                executable: try context.tool(named: "doc-snippets").url,
                arguments: arguments,
                inputFiles: documents,
                outputFiles: outputs)
        ]
    }
}
