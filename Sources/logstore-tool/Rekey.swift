import ArgumentParser
import Foundation
import LogStore
import LogStoreEncryption

/// `rekey DIR --key-file OLD --new-key-file NEW`: re-encrypts an encrypted store under a new key.
struct Rekey: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Re-encrypt an encrypted store under a new key.",
        discussion: """
            The store must not be open for writing elsewhere. Every batch, hint and dictionary file is \
            decrypted with the key of --key-file and encrypted again with the key of --new-key-file into a \
            complete copy beside the store (DIR.rekeying), which then takes the store's place in one atomic \
            step: a crash or Ctrl-C at any point leaves DIR a whole store under the old key or under the new \
            one, and the next rekey removes what was left beside it. Retained moments and replica holds must \
            be forgotten first (logstore-tool history --forget ...). Backups and replicas made before keep \
            the old key.
            """
    )

    @OptionGroup var store: StoreDirectory

    @Option(
        name: .customLong("new-key-file"),
        help: ArgumentHelp("The new key: a file of 32 bytes or 64 hexadecimal digits.", valueName: "FILE"))
    var newKeyFile: String

    func run() throws {
        try store.checkNotAFile()
        guard let old = try store.cipher() else {
            throw ToolError("rekey needs the store's current key (--key-file)")
        }
        let new = try AESGCMCipher(keyFile: newKeyFile)
        let report = try Store.rotateKey(at: store.directory, from: old, to: new)
        print(
            "re-encrypted \(store.directory): \(report.segments) segment(s), \(report.hints) hint file(s), "
                + "\(report.dictionaries) dictionary file(s), \(report.bytes) bytes")
    }
}
