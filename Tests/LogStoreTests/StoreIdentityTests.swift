import Foundation
import TestSupport
import Testing

@testable @_spi(Testing) import LogStore
@_spi(Engine) @testable import LogStoreFormat

#if canImport(Glibc)
    import Glibc
#endif

/// Only stores are opened: a directory of other files is refused before anything is written there.
@Suite struct StoreIdentityTests {
    /// Every name in `directory` with its bytes.
    func listing(_ directory: TemporaryStore) throws -> [String: Data] {
        var files: [String: Data] = [:]
        for name in directory.fileNames() {
            files[name] = try Data(contentsOf: URL(fileURLWithPath: directory.path + "/" + name))
        }
        return files
    }

    /// A directory holding one unrelated file.
    func foreignFolder() throws -> TemporaryStore {
        let directory = TemporaryStore("foreign")
        try Data("hello\n".utf8).write(to: URL(fileURLWithPath: directory.path + "/notes.txt"))
        return directory
    }

    func options(readOnly: Bool) -> StoreOptions {
        var options = testOptions()
        options.readOnly = readOnly
        return options
    }

    @Test(arguments: [false, true])
    func aForeignFolderIsNotAStoreAndStaysUntouched(readOnly: Bool) throws {
        let directory = try foreignFolder()
        let before = try listing(directory)
        #expect {
            try directory.open(options: options(readOnly: readOnly))
        } throws: { error in
            (error as? LogStoreError)?.code == .notAStore && (error as? LogStoreError)?.file == directory.path
        }
        #expect(throws: LogStoreError.self) { try Store.verify(at: directory.path) }
        #expect(try listing(directory) == before)
    }

    /// Files that only carry a store's names are not a store: nothing is written, not even `LOCK`.
    @Test(arguments: ["0000000001.seg", "SEGMENTS"])
    func filesNamedLikeAStoresWithOtherContentAreNotAStore(name: String) throws {
        let directory = TemporaryStore(
            "named-like-a-store", unverifiedBecause: "a foreign file carries a store's name: not a store")
        try Data("not a LogStore file at all\n".utf8).write(to: URL(fileURLWithPath: directory.path + "/" + name))
        let before = try listing(directory)
        for readOnly in [false, true] {
            #expect {
                try directory.open(options: options(readOnly: readOnly))
            } throws: { error in
                (error as? LogStoreError)?.code == .notAStore
            }
        }
        #expect(try listing(directory) == before)
    }

    @Test func anEmptyDirectoryBecomesAStoreWithItsIdentityFileFirst() throws {
        let directory = TemporaryStore("empty")
        // Read-only, nothing can make it a store.
        #expect {
            try directory.open(options: options(readOnly: true))
        } throws: { error in
            (error as? LogStoreError)?.code == .notAStore
        }
        #expect(directory.fileNames().isEmpty)
        // The identity file is written (under the lock) before anything else: when its rename fails, only
        // the empty lock file is there, and the directory still counts as empty.
        let faults = FaultInjector()
        faults.inject(.rename, .error(EIO))
        var failing = testOptions(faults: faults)
        failing.createIfMissing = true
        #expect(throws: LogStoreError.self) { try directory.open(options: failing) }
        #expect(directory.fileNames().allSatisfy { $0 == "LOCK" || $0 == "STORE.writing" }, "\(directory.fileNames())")
        #expect {
            try directory.open(options: options(readOnly: true))
        } throws: { error in
            (error as? LogStoreError)?.code == .notAStore && "\(error)".contains("empty")
        }

        let store = try directory.open(options: testOptions())
        try store.put(typeTag: 1, payload: [1])
        try store.close()
        let bytes = try Data(contentsOf: URL(fileURLWithPath: directory.path + "/STORE"))
        #expect(bytes.count == 48 && bytes.prefix(8) == Data("LOGSTORE".utf8))
        #expect(try Store.verify(at: directory.path).isSound)
    }

    @Test func aMissingDirectoryBecomesAStore() throws {
        let parent = TemporaryStore("missing-parent")
        let path = parent.path + "/store"
        try Store.open(at: path, options: testOptions()).close()
        #expect(FileManager.default.fileExists(atPath: path + "/STORE"))
    }

    /// A store made before identity files (segments and a manifest, no `STORE`) opens; an open for
    /// writing adds the file, a read-only open and `verify` only note that it is missing.
    @Test func aStoreWithoutAnIdentityFileStillOpens() throws {
        let directory = TemporaryStore("legacy")
        let id: ObjectID
        do {
            let store = try directory.open(options: testOptions())
            id = try store.put(typeTag: 1, payload: [7])
            try store.close()
        }
        try FileManager.default.removeItem(atPath: directory.path + "/STORE")
        let readOnly = try directory.open(options: options(readOnly: true))
        #expect(try readOnly.get(id)?.payload == [7])
        #expect(readOnly.openNotes.contains { $0.contains("no identity file") }, "\(readOnly.openNotes)")
        try readOnly.close()
        #expect(try Store.verify(at: directory.path).notes.contains { $0.contains("no identity file") })
        #expect(!directory.fileNames().contains("STORE"))

        let writable = try directory.open(options: testOptions())
        #expect(try writable.get(id)?.payload == [7])
        try writable.close()
        #expect(directory.fileNames().contains("STORE"))
        #expect(try Store.verify(at: directory.path).notes.allSatisfy { !$0.contains("identity") })
    }

    @Test func aDamagedIdentityFileIsCorruptionNotAForeignFolder() throws {
        let directory = TemporaryStore("damaged-identity", unverifiedBecause: "a byte of STORE is flipped")
        try directory.open(options: testOptions()).close()
        let path = directory.path + "/STORE"
        var bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: path)))
        bytes[20] ^= 0x01
        try Data(bytes).write(to: URL(fileURLWithPath: path))
        let before = try listing(directory)
        for readOnly in [false, true] {
            #expect {
                try directory.open(options: options(readOnly: readOnly))
            } throws: { error in
                let error = error as? LogStoreError
                return error?.code == .corruptStoreIdentity && error?.file == path && error?.offset == 40
            }
        }
        let report = try Store.verify(at: directory.path)
        #expect(report.problems.contains { $0.file == path && $0.offset == 40 }, "\(report.problems)")
        #expect(try listing(directory) == before)
    }

    /// The identity file of `Documentation/Format.md`'s worked example, byte for byte.
    @Test func theIdentityFileMatchesTheDocumentedExample() throws {
        let identity = StoreIdentity(storeID: Array(0x10...0x1F), createdAtMilliseconds: 1_795_345_531_009)
        try expectDocumented(identity.encoded())
        #expect(identity.encoded().withUnsafeBytes { try? StoreIdentity.decode($0).get() } == identity)
    }

    /// The manifest of `Documentation/Format.md`'s worked example, byte for byte.
    @Test func theManifestMatchesTheDocumentedExample() throws {
        let manifest = SegmentManifest(
            segments: [1, 3], reservedIDs: 42, cleanClose: .init(appendSegment: 3, appendSize: 1532))
        try expectDocumented(manifest.encoded())
        #expect(manifest.encoded().withUnsafeBytes { try? SegmentManifest.decode($0).get() } == manifest)
    }

    /// `bytes` appear in `Documentation/Format.md` as a hex dump: `OFFSET  XX XX ...`, 16 bytes a line.
    func expectDocumented(_ bytes: [UInt8]) throws {
        let documented = try String(contentsOfFile: formatDocument, encoding: .utf8)
        for row in stride(from: 0, to: bytes.count, by: 16) {
            let hex = bytes[row..<min(row + 16, bytes.count)].map { String(format: "%02x", $0) }
            let line = String(format: "%08x  ", row) + hex.joined(separator: " ")
            #expect(documented.contains(line + "\n"), "\(line)")
        }
    }
}

/// `Documentation/Format.md` of this package.
let formatDocument = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
    .deletingLastPathComponent().appendingPathComponent("Documentation/Format.md").path
