import ArgumentParser
import Foundation
import LogStore
import LogStoreEncryption

/// The store directory argument that every subcommand working on an existing store takes.
struct StoreDirectory: ParsableArguments {
    @Argument(help: "The store directory.")
    var directory: String

    @Option(
        name: .customLong("key-file"),
        help: ArgumentHelp(
            "The key of an encrypted store: a file holding 32 bytes or 64 hexadecimal digits.",
            discussion: "A key is never taken on the command line, where other users could read it.",
            valueName: "FILE"))
    var keyFile: String?

    /// The cipher of the key in `--key-file`, or nil without one.
    func cipher() throws -> (any StoreCipher)? {
        guard let keyFile else { return nil }
        return try AESGCMCipher(keyFile: keyFile)
    }

    /// Opens the store without the write lock and without repairing anything, so it works beside a
    /// writer; a torn tail is reported on standard error and left for the next writable open to cut.
    func openReadOnly() throws -> Store {
        try checkNotAFile()
        var options = StoreOptions(createIfMissing: false, readOnly: true)
        options.cipher = try cipher()
        let store = try Store.open(at: directory, options: options)
        if let recovery = store.recovery {
            Console.error("note: \(recovery)")
        }
        return store
    }

    /// Opens the store for writing (taking its lock) with ``writableOptions(segmentSize:createIfMissing:)``;
    /// a torn tail cut by the open is reported on standard error. A missing or empty directory that the
    /// open may not make a store is a ``ToolError`` saying so.
    func openWritable(segmentSize: Int? = nil, createIfMissing: Bool = false) throws -> Store {
        guard let store = try openWritableIfPresent(segmentSize: segmentSize, createIfMissing: createIfMissing) else {
            let what = FileManager.default.fileExists(atPath: directory) ? "is empty" : "does not exist"
            throw ToolError("\(directory) \(what): not a store; nothing was written")
        }
        return store
    }

    /// ``openWritable(segmentSize:createIfMissing:)``, but nil when the directory is missing or empty and
    /// `createIfMissing` is false (no store there yet).
    func openWritableIfPresent(segmentSize: Int? = nil, createIfMissing: Bool = false) throws -> Store? {
        try checkNotAFile()
        var options = writableOptions(segmentSize: segmentSize, createIfMissing: createIfMissing)
        options.cipher = try cipher()
        let opened = Result { () throws(LogStoreError) in try Store.open(at: directory, options: options) }
        if case .failure(let error) = opened, error.code == .storeMissing { return nil }
        let store = try opened.get()
        if let recovery = store.recovery {
            Console.error("note: \(recovery)")
        }
        return store
    }

    /// Throws when the directory argument names a file (or anything else that is not a directory).
    func checkNotAFile() throws { try refuseNonDirectory(directory) }
}

/// Throws a ``ToolError`` saying so when `path` exists and is not a directory (following symbolic links):
/// a store is a directory. A missing path is left to the command (some create it, some refuse it).
func refuseNonDirectory(_ path: String) throws {
    var info = stat()
    guard stat(path, &info) == 0, info.st_mode & S_IFMT != S_IFDIR else { return }
    let kind = info.st_mode & S_IFMT == S_IFREG ? "a file" : "not a directory"
    throw ToolError("\(path) is \(kind), not a store directory (a store is a directory)")
}

/// Options for the tool's writable opens: no background compaction or mark-sweep, so nothing changes
/// the store behind the tool's back and every figure it prints is its own doing.
func writableOptions(segmentSize: Int? = nil, createIfMissing: Bool = true) -> StoreOptions {
    var options = StoreOptions(createIfMissing: createIfMissing)
    if let segmentSize { options.segmentSize = segmentSize }
    options.compaction.background = false
    return options
}

/// A new, empty folder under the system's temporary folder (`mkdtemp`).
func makeTemporaryDirectory() throws -> String {
    let base = FileManager.default.temporaryDirectory.path
    var template = Array((base + "/logstore-demo-XXXXXX").utf8CString)
    let created = template.withUnsafeMutableBufferPointer { buffer in
        buffer.baseAddress.flatMap { mkdtemp($0) }
    }
    guard let created else {
        throw ToolError("cannot create a temporary folder in \(base)")
    }
    return String(cString: created)
}
