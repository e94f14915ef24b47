/// One fenced ```swift block of a Markdown file.
struct Snippet {
    /// What the block's info string asks for.
    enum Mode: Equatable {
        /// Compile it. `parameters` (a Swift parameter list, possibly empty) name the values it uses
        /// without declaring them (` ```swift with store: Store `). An `alternative` block
        /// (` ```swift alternative `) shows another version of declarations made before it: it sees
        /// the earlier blocks' declarations, but the blocks after it do not see its own.
        case compile(parameters: String, alternative: Bool)
        /// Leave it out (` ```swift no-compile `): not Swift a target can compile, such as a
        /// `Package.swift` excerpt.
        case skip
    }

    /// The line of the opening fence, 1-based.
    let line: Int
    let mode: Mode
    /// The block's lines, without the fence's indentation; the first is at `line + 1`.
    let lines: [String]
}

/// A Markdown problem that stops the generation, reported as `file:line: error: message`.
struct SnippetError: Error {
    let line: Int
    let message: String
}

/// Finds the ```swift blocks of a Markdown text.
enum MarkdownSnippets {
    /// The ```swift blocks of `text` (blocks of other languages and plain ``` blocks are skipped).
    /// - throws: ``SnippetError`` for a block that is never closed or has an unknown option.
    static func snippets(in text: String) throws(SnippetError) -> [Snippet] {
        let lines = text.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        var snippets: [Snippet] = []
        var index = 0
        while index < lines.count {
            let indent = lines[index].prefix { $0 == " " }.count
            let fence = lines[index].dropFirst(indent)
            guard fence.hasPrefix("```") else {
                index += 1
                continue
            }
            let info = fence.dropFirst(3).trimmingCharacters(in: .whitespaces)
            let closing = lines[(index + 1)...].firstIndex { $0.trimmingCharacters(in: .whitespaces) == "```" }
            guard let end = closing else { throw SnippetError(line: index + 1, message: "code block never closed") }
            if info == "swift" || info.hasPrefix("swift ") {
                let content = lines[(index + 1)..<end].map { line in
                    String(line.dropFirst(min(indent, line.prefix { $0 == " " }.count)))
                }
                snippets.append(Snippet(line: index + 1, mode: try mode(info, line: index + 1), lines: content))
            }
            index = end + 1
        }
        return snippets
    }

    /// The mode an info string (`swift`, `swift no-compile`, `swift alternative with a: A, b: B`) asks for.
    private static func mode(_ info: String, line: Int) throws(SnippetError) -> Snippet.Mode {
        var options = info.dropFirst("swift".count).trimmingCharacters(in: .whitespaces)
        if options == "no-compile" { return .skip }
        let alternative = options == "alternative" || options.hasPrefix("alternative ")
        if alternative { options = options.dropFirst("alternative".count).trimmingCharacters(in: .whitespaces) }
        if options.isEmpty { return .compile(parameters: "", alternative: alternative) }
        if options.hasPrefix("with ") {
            let parameters = options.dropFirst("with ".count).trimmingCharacters(in: .whitespaces)
            return .compile(parameters: parameters, alternative: alternative)
        }
        throw SnippetError(
            line: line,
            message: "unknown snippet option \"\(options)\" (use ```swift, ```swift with name: Type, …, "
                + "```swift alternative, or ```swift no-compile)")
    }
}
