/// A snippet's lines, split into top-level items: declarations, which go into the snippet's namespace,
/// and statements, which go into a function.
struct SnippetChunk {
    enum Kind {
        /// `import M`: goes to the top of the generated file.
        case importDeclaration
        /// A type (`class`, `struct`, `enum`, `protocol`, `actor`) or `typealias`.
        case typeDeclaration
        /// A top-level `func`: becomes a `static func` of the namespace.
        case function
        /// `extension T`: goes to file scope (so `T` must be a type of a module, not of a snippet).
        case fileScopeExtension
        /// Anything else, `let` and `var` included: the body of the snippet's function.
        case statement
    }

    var kind: Kind?
    /// The line of the first line in the Markdown file.
    let line: Int
    var lines: [String]

    /// Splits `snippet` into items. An item starts at a line that begins in column 0 (not with a closing
    /// bracket or a `.`) and takes the indented and closing lines after it; comments and attributes
    /// before an item belong to it; multi-line string literals are never split.
    static func chunks(of snippet: Snippet) -> [SnippetChunk] {
        var chunks: [SnippetChunk] = []
        var inString = false
        for (offset, line) in snippet.lines.enumerated() {
            let continues =
                inString || line.trimmingCharacters(in: .whitespaces).isEmpty || line.first?.isWhitespace == true
                || "})].".contains(line.first ?? " ")
            if line.components(separatedBy: "\"\"\"").count % 2 == 0 { inString.toggle() }
            if continues, !chunks.isEmpty {
                chunks[chunks.count - 1].lines.append(line)
            } else if !continues, let last = chunks.last, last.kind == nil {
                // A comment or attribute opened the item; this line tells what it is.
                chunks[chunks.count - 1].lines.append(line)
                chunks[chunks.count - 1].kind = kind(of: line)
            } else if !line.trimmingCharacters(in: .whitespaces).isEmpty {
                chunks.append(SnippetChunk(kind: kind(of: line), line: snippet.line + 1 + offset, lines: [line]))
            }
        }
        return chunks.map { chunk in
            var chunk = chunk
            if chunk.kind == nil { chunk.kind = .statement }
            return chunk
        }
    }

    /// The kind of item a line starts, or nil for a comment or an attribute alone (the item is told by
    /// the next line).
    static func kind(of line: String) -> Kind? {
        var rest = Substring(line.trimmingCharacters(in: .whitespaces))
        if rest.hasPrefix("//") || rest.hasPrefix("/*") { return nil }
        while rest.hasPrefix("@") {
            rest = rest.dropFirst().drop { $0.isLetter || $0.isNumber || $0 == "_" || $0 == "." }
            if rest.hasPrefix("("), let close = rest.firstIndex(of: ")") { rest = rest[rest.index(after: close)...] }
            rest = rest.drop { $0.isWhitespace }
        }
        let words = rest.split(whereSeparator: \.isWhitespace).map(String.init).drop { modifiers.contains($0) }
        guard let first = words.first else { return nil }
        switch first {
        case "import": return .importDeclaration
        case "class", "struct", "enum", "protocol", "actor", "typealias": return .typeDeclaration
        case "func": return .function
        case "extension": return .fileScopeExtension
        default: return .statement
        }
    }

    private static let modifiers: Set<String> = [
        "public", "private", "fileprivate", "internal", "package", "open", "final", "indirect", "nonisolated",
    ]
}
