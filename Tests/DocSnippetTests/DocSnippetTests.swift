import Foundation
import Testing

/// The documentation's Swift snippets compile: the DocSnippetsPlugin build tool plugin compiles every
/// ```swift block of `README.md` and `Documentation/*.md` into this target (a block that does not compile
/// fails the build, at its line in the Markdown file). This checks that none was missed.
@Suite struct DocSnippetTests {
    /// The package's root directory.
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent()

    /// `file:line` of every fence opening a ```swift block, found with a plain scan of the documents.
    static func swiftFences() throws -> [String] {
        let documentation = root.appending(path: "Documentation")
        let documents =
            ["README.md"]
            + (try FileManager.default.contentsOfDirectory(atPath: documentation.path))
            .filter { $0.hasSuffix(".md") }.sorted().map { "Documentation/" + $0 }
        var fences: [String] = []
        for document in documents {
            let text = try String(contentsOf: root.appending(path: document), encoding: .utf8)
            var open = false
            for (index, line) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
                let trimmed = line.trimmingCharacters(in: .whitespaces)
                guard trimmed.hasPrefix("```") else { continue }
                if !open && (trimmed == "```swift" || trimmed.hasPrefix("```swift ")) {
                    fences.append("\(document):\(index + 1)")
                }
                open.toggle()
            }
        }
        return fences
    }

    @Test func everySwiftBlockOfTheDocumentationIsCompiledOrMarkedNoCompile() throws {
        let fences = try Self.swiftFences()
        #expect(fences.count > 10)
        let listed = DocumentationSnippets.compiled + DocumentationSnippets.skipped
        #expect(Set(listed) == Set(fences), "run `swift build --build-tests` to compile the documents again")
        #expect(listed.count == fences.count)
    }

    /// `no-compile` is for what no target can compile (a `Package.swift` excerpt), not for code that
    /// would fail: keep it rare.
    @Test func fewBlocksAreLeftOut() {
        #expect(DocumentationSnippets.skipped.count <= 2, "\(DocumentationSnippets.skipped)")
    }
}
