import ArgumentParser
import Foundation
import LogStore
import LogStoreEncryption

/// `new-key FILE`: writes a new random key for an encrypted store.
struct NewKey: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "new-key",
        abstract: "Write a new random key (AES-256-GCM) for an encrypted store to a file.",
        discussion: """
            Writes 64 hexadecimal digits and a line end to FILE, which must not exist, readable by its owner \
            only (mode 0600). Give the file to --key-file, and to StoreOptions.cipher through \
            AESGCMCipher(keyFile:), to create and open an encrypted store. Keep a copy somewhere safe: \
            without the key, nothing of the store can be read.
            """
    )

    @Argument(help: "The file to write the key to (it must not exist).")
    var file: String

    func run() throws {
        let text = AESGCMCipher.hex(AESGCMCipher.newKey()) + "\n"
        let fd = open(file, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o600)
        guard fd >= 0 else {
            throw ToolError(
                "cannot create \(file): \(String(cString: strerror(errno))) (an existing file is never replaced)")
        }
        defer { close(fd) }
        let bytes = Array(text.utf8)
        let written = bytes.withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
        guard written == bytes.count, fsync(fd) == 0 else {
            throw ToolError("cannot write \(file): \(String(cString: strerror(errno)))")
        }
        print("wrote a new key to \(file)")
    }
}
