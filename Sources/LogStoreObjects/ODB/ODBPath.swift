/// A path in an ``ODB``: the keys from the root table down, e.g. `["RSS", "feeds", feedID]`.
///
/// The root table is implied: a leading `root` (in any case) is dropped, so `["RSS", "feeds"]` and
/// `["root", "RSS", "feeds"]` name the same table, and `[]` (or `["root"]`) is the root table itself.
/// A child of the root that is itself named `root` is reached as `["root", "root"]`.
///
/// A path is a query, not a reference: it names whatever is at that place when it is resolved.
///
/// For example:
/// ```swift
/// let path: ODBPath = ["RSS", "feeds", "abc", "editedName"]
/// let same = try ODBPath(parsing: "root.RSS.feeds.abc.editedName")
/// let dotted = try ODBPath(parsing: "prefs.\"window.frame\"")   // a key with a dot, quoted
/// ```
public struct ODBPath: Hashable, Sendable, ExpressibleByArrayLiteral, CustomStringConvertible {
    /// The keys from the root table down, as given (without the implied `root`).
    public let keys: [String]

    /// A path of `keys` (a leading `root` is dropped).
    public init(_ keys: [String]) {
        if let first = keys.first, ODBKey.fold(first) == "root" {
            self.keys = Array(keys.dropFirst())
        } else {
            self.keys = keys
        }
    }

    /// A path of the keys of the literal.
    public init(arrayLiteral elements: String...) { self.init(elements) }

    /// Parses a dot-separated path, e.g. `RSS.feeds.abc`; a key containing a dot (or a quote) is written
    /// in double quotes, with `\"` and `\\` inside. The empty string and `root` name the root table.
    /// - throws: ``ODBError`` `invalidPath` for an empty key or an unclosed quote.
    public init(parsing text: String) throws(ODBError) {
        var keys: [String] = []
        var current = ""
        var quoted = false
        var wasQuoted = false
        var iterator = text.makeIterator()
        while let character = iterator.next() {
            if quoted {
                if character == "\\" {
                    guard let next = iterator.next() else { break }
                    current.append(next)
                } else if character == "\"" {
                    quoted = false
                } else {
                    current.append(character)
                }
            } else if character == "\"" {
                quoted = true
                wasQuoted = true
            } else if character == "." {
                guard !current.isEmpty || wasQuoted else {
                    throw ODBError(.invalidPath, "empty key in path \"\(text)\"")
                }
                keys.append(current)
                current = ""
                wasQuoted = false
            } else {
                current.append(character)
            }
        }
        guard !quoted else { throw ODBError(.invalidPath, "unclosed quote in path \"\(text)\"") }
        if !current.isEmpty || wasQuoted {
            keys.append(current)
        } else if !keys.isEmpty {
            throw ODBError(.invalidPath, "empty key at the end of path \"\(text)\"")
        }
        self.init(keys)
    }

    /// Whether this is the root table's path.
    public var isRoot: Bool { keys.isEmpty }

    /// The path of the table holding this one (the root's parent is the root).
    public var parent: ODBPath { ODBPath(trusted: Array(keys.dropLast())) }

    /// The last key, or nil for the root.
    public var lastKey: String? { keys.last }

    /// This path extended by `key`.
    public func appending(_ key: String) -> ODBPath { ODBPath(trusted: keys + [key]) }

    /// The path dot-separated, keys with a dot, a quote or nothing in them quoted; `root` for the root.
    public var description: String {
        guard !keys.isEmpty else { return "root" }
        return keys.map { key in
            guard key.isEmpty || key.contains(".") || key.contains("\"") || key.contains("\\") else { return key }
            return "\"" + key.replacingAll("\\", with: "\\\\").replacingAll("\"", with: "\\\"") + "\""
        }.joined(separator: ".")
    }

    /// A path whose keys are already without the implied root.
    init(trusted keys: [String]) { self.keys = keys }
}

extension String {
    /// The string with every `target` character replaced by `replacement`.
    fileprivate func replacingAll(_ target: Character, with replacement: String) -> String {
        var result = ""
        for character in self {
            if character == target { result += replacement } else { result.append(character) }
        }
        return result
    }
}
