import Foundation
import LogStoreEncryption
import TestSupport
import Testing

@testable @_spi(Testing) import LogStore

@Suite("Encrypted stores: the tool and salvage")
struct EncryptedToolTests {
    @Test("new-key writes a key only its owner reads, and never replaces a file")
    func newKey() throws {
        let keys = TemporaryStore("new-key")
        try FileManager.default.createDirectory(atPath: keys.path, withIntermediateDirectories: true)
        let path = keys.path + "/store.key"
        let made = try ToolRunner.run(["new-key", path])
        #expect(made.status == 0, "\(made.output)")
        let text = try String(contentsOfFile: path, encoding: .utf8)
        #expect(text.count == 65 && text.hasSuffix("\n"))
        let attributes = try FileManager.default.attributesOfItem(atPath: path)
        #expect((attributes[.posixPermissions] as? NSNumber)?.intValue == 0o600)
        _ = try AESGCMCipher(keyFile: path)
        let again = try ToolRunner.run(["new-key", path])
        #expect(again.status != 0)
        #expect(try String(contentsOfFile: path, encoding: .utf8) == text)
    }

    @Test("verify, stats, export and import take --key-file; without it they say that the key is required")
    func keyFile() throws {
        let directory = TemporaryStore("tool-encrypted")
        let keys = TemporaryStore("tool-keys")
        try FileManager.default.createDirectory(atPath: keys.path, withIntermediateDirectories: true)
        let keyFile = keys.path + "/store.key"
        #expect(try ToolRunner.run(["new-key", keyFile]).status == 0)
        let cipher = try AESGCMCipher(keyFile: keyFile)
        directory.verifies(with: cipher)
        var options = StoreOptions()
        options.cipher = cipher
        let store = try directory.open(options: options)
        for index in 0..<50 { try store.put(typeTag: 1, payload: Array("secret note \(index)".utf8)) }
        try store.setRoot("notes", to: ObjectID(1))
        try store.close()

        let verified = try ToolRunner.run(["verify", directory.path, "--key-file", keyFile])
        #expect(verified.status == 0 && verified.stdout.contains("sound"), "\(verified.output)")
        let refused = try ToolRunner.run(["verify", directory.path])
        #expect(refused.status != 0 && refused.output.contains("keyRequired"), "\(refused.output)")
        let stats = try ToolRunner.run(["stats", directory.path, "--key-file", keyFile])
        #expect(stats.status == 0, "\(stats.output)")

        let export = keys.path + "/export.jsonl"
        let exported = try ToolRunner.run(["export", directory.path, "--key-file", keyFile, "-o", export])
        #expect(exported.status == 0, "\(exported.output)")
        let copy = TemporaryStore("tool-encrypted-import")
        copy.verifies(with: cipher)
        let imported = try ToolRunner.run(["import", copy.path, "--key-file", keyFile, "-i", export])
        #expect(imported.status == 0, "\(imported.output)")
        let reopened = try Store.open(at: copy.path, options: options)
        #expect(try reopened.ids().count == 50)
        #expect(try reopened.get(ObjectID(3))?.payload == Array("secret note 2".utf8))
        try reopened.close()
        // The import made an encrypted store.
        let plainOpen = Result { () throws(LogStoreError) in try Store.open(at: copy.path, options: StoreOptions()) }
        if case .failure(let error) = plainOpen { #expect(error.code == .keyRequired) } else { Issue.record("opened") }
    }

    @Test("salvage of an encrypted store makes an encrypted store with every intact record")
    func salvage() throws {
        let directory = TemporaryStore("salvage-encrypted")
        directory.verifies(with: testCipher())
        var written: [ObjectID: [UInt8]] = [:]
        let store = try directory.open(options: encryptedOptions())
        for index in 0..<500 {
            let payload = markedPayload(index, seed: 3).payload
            written[try store.put(typeTag: 1, payload: payload)] = payload
        }
        try store.close()
        let target = TemporaryStore("salvage-encrypted-target")
        target.verifies(with: testCipher())
        let destination = target.path + "/salvaged"
        let report = try Store.salvage(from: directory.path, to: destination, options: encryptedOptions())
        #expect(report.problems.isEmpty, "\(report.problems)")
        let salvaged = try Store.open(at: destination, options: encryptedOptions())
        for (id, payload) in written { #expect(try salvaged.get(id)?.payload == payload) }
        try salvaged.close()
        #expect(throws: LogStoreError.self) { try Store.open(at: destination, options: testOptions()) }
    }
}
