import Foundation
import TestSupport
import Testing

@testable @_spi(Testing) import LogStore

#if canImport(Glibc)
    import Glibc
#endif

/// What is recognized as a store before anything is written into a folder: files that only carry a
/// store's names are not a store, a folder is left as it was when an open or a tool command refuses it,
/// and a file that cannot be a store's is reported at once, naming it.
@Suite struct StoreRecognitionTests {
    /// Every name in `directory` with its bytes.
    func listing(_ path: String) throws -> [String: Data] {
        var files: [String: Data] = [:]
        for name in try FileManager.default.contentsOfDirectory(atPath: path) {
            files[name] = try Data(contentsOf: URL(fileURLWithPath: path + "/" + name))
        }
        return files
    }

    func write(_ bytes: [UInt8], to path: String) throws {
        try Data(bytes).write(to: URL(fileURLWithPath: path))
    }

    func options(readOnly: Bool) -> StoreOptions {
        var options = testOptions()
        options.readOnly = readOnly
        return options
    }

    @Test func compactRefusesAnEmptyFolderAndLeavesItEmpty() throws {
        let directory = TemporaryStore("tool-compact-empty")
        let result = try ToolRunner.run(["compact", directory.path])
        #expect(result.status != 0, "\(result.output)")
        #expect(
            result.stderr.contains("\(directory.path) is empty: not a store; nothing was written"), "\(result.output)")
        #expect(!result.stderr.contains("createIfMissing"), "\(result.output)")
        #expect(directory.fileNames().isEmpty, "\(directory.fileNames())")
    }

    @Test func anEmptyFolderIsNotCreatedAsAStoreWithoutCreateIfMissing() throws {
        let directory = TemporaryStore("empty-no-create")
        #expect {
            try Store.open(at: directory.path, options: StoreOptions(createIfMissing: false))
        } throws: { error in
            (error as? LogStoreError)?.code == .storeMissing
        }
        #expect(directory.fileNames().isEmpty, "\(directory.fileNames())")
    }

    /// An empty segment file is no sign of a store: beside other files, the folder is not a store.
    @Test func anEmptySegmentBesideOtherFilesIsNotAStoreAndNothingIsWritten() throws {
        let directory = TemporaryStore("empty-segment", unverifiedBecause: "a foreign folder with an empty .seg")
        try write(Array("my notes\n".utf8), to: directory.path + "/notes.txt")
        try write([], to: directory.path + "/0000000001.seg")
        let before = try listing(directory.path)
        for readOnly in [false, true] {
            #expect {
                try Store.open(at: directory.path, options: options(readOnly: readOnly))
            } throws: { error in
                (error as? LogStoreError)?.code == .notAStore
            }
        }
        #expect(try listing(directory.path) == before)
    }

    /// An empty `SEGMENTS` with nothing else of a store's: refused before anything (not even `LOCK`) is
    /// written.
    @Test(arguments: [[UInt8](), Array("garbage!garbage!".utf8)])
    func aFolderWithOnlyADamagedManifestIsRefusedBeforeAnythingIsWritten(manifest: [UInt8]) throws {
        let directory = TemporaryStore("empty-manifest", unverifiedBecause: "SEGMENTS is not a manifest")
        try write(manifest, to: directory.path + "/SEGMENTS")
        let before = try listing(directory.path)
        #expect {
            try Store.open(at: directory.path, options: testOptions())
        } throws: { error in
            (error as? LogStoreError)?.code == .notAStore
        }
        #expect(try listing(directory.path) == before)
    }

    /// A store whose `SEGMENTS` is empty: `corruptManifest`, and no `LOCK` is written first.
    @Test func aStoreWithAnEmptyManifestFailsBeforeTheLockIsWritten() throws {
        let directory = TemporaryStore("store-empty-manifest", unverifiedBecause: "SEGMENTS is emptied")
        let store = try directory.open(options: testOptions())
        try store.put(typeTag: 1, payload: [1])
        try store.close()
        try write([], to: directory.path + "/SEGMENTS")
        try FileManager.default.removeItem(atPath: directory.path + "/LOCK")
        let before = try listing(directory.path)
        #expect {
            try Store.open(at: directory.path, options: testOptions())
        } throws: { error in
            (error as? LogStoreError)?.code == .corruptManifest
        }
        #expect(try listing(directory.path) == before)
    }

    /// A failed import into a new folder leaves it as it was: a missing folder missing, an empty one empty.
    @Test(arguments: [false, true])
    func aFailedImportIntoANewFolderLeavesItAsItWas(folderExists: Bool) throws {
        let parent = TemporaryStore("import-new-folder")
        let path = parent.path + "/store"
        if folderExists { try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: false) }
        let input = Data("{\"id\":1,\"type\":1,\"refs\":[2],\"payload\":\"AA==\"}\nnot json\n".utf8)
        let result = try ToolRunner.run(["import", path], input: input)
        #expect(result.status == 1, "\(result.output)")
        #expect(result.stderr.contains("nothing was written"), "\(result.output)")
        #expect(FileManager.default.fileExists(atPath: path) == folderExists)
        if folderExists {
            let names = try listing(path).keys.sorted()
            #expect(names.isEmpty, "\(names)")
        }
    }

    /// A good import into a new folder creates the store there.
    @Test func anImportIntoAnEmptyFolderCreatesTheStore() throws {
        let directory = TemporaryStore("import-empty-folder")
        let input = Data("{\"id\":5,\"type\":1,\"refs\":[],\"payload\":\"AQI=\"}\n{\"root\":\"r\",\"id\":5}\n".utf8)
        let result = try ToolRunner.run(["import", directory.path], input: input)
        #expect(result.status == 0, "\(result.output)")
        let store = try directory.open(options: testOptions())
        #expect(try store.get(ObjectID(5))?.payload == [1, 2])
        #expect(try store.root(named: "r") == ObjectID(5))
    }

    /// A symbolic link named like a segment whose target does not exist is reported at once, naming it,
    /// by every open and by `verify`, without a second load attempt.
    @Test func aDanglingSymlinkNamedLikeASegmentIsReportedAtOnce() throws {
        let directory = TemporaryStore("dangling-segment", unverifiedBecause: "a segment is a dangling link")
        let store = try directory.open(options: testOptions())
        try store.put(typeTag: 1, payload: [1])
        try store.close()
        let path = directory.path + "/0000000009.seg"
        #expect(symlink(directory.path + "/no-such-file", path) == 0)
        func isReported(_ error: any Error) -> Bool {
            guard let error = error as? LogStoreError else { return false }
            return error.file == path && "\(error)".contains("symbolic link")
                && !"\(error)".contains("while the store was read")
        }
        for readOnly in [false, true] {
            #expect(
                performing: { try Store.open(at: directory.path, options: options(readOnly: readOnly)) },
                throws: isReported)
        }
        // verify lists it as a problem naming it, and checks the other segments.
        let report = try Store.verify(at: directory.path)
        #expect(
            report.problems.contains { $0.file == path && $0.message.contains("symbolic link") }, "\(report.problems)")
        #expect(report.problems.count == 1, "\(report.problems)")
        #expect(report.liveObjects == 1 && report.segments == 1)
    }

    /// A folder without `STORE` or `SEGMENTS` whose only segment cannot be opened: the open reports the
    /// file and why (`ioError`), not `notAStore`, and writes nothing.
    @Test func anUnopenableSegmentOfAnOldLayoutIsReportedByName() throws {
        let directory = TemporaryStore("old-layout-dangling", unverifiedBecause: "a segment is a dangling link")
        let path = directory.path + "/0000000001.seg"
        #expect(symlink(directory.path + "/no-such-file", path) == 0)
        try write(Array("notes\n".utf8), to: directory.path + "/notes.txt")
        let before = try FileManager.default.contentsOfDirectory(atPath: directory.path).sorted()
        for readOnly in [false, true] {
            let error = try #require(throws: LogStoreError.self) {
                try Store.open(at: directory.path, options: options(readOnly: readOnly))
            }
            #expect(error.code == .ioError && error.file == path, "\(error)")
            #expect("\(error)".contains("symbolic link whose target does not exist"), "\(error)")
        }
        #expect(try FileManager.default.contentsOfDirectory(atPath: directory.path).sorted() == before)
    }

    /// The oldest layout, `LOCK`, segments and hint files (no `SEGMENTS`, no `STORE`), still opens with
    /// what it holds; the open for writing adds the manifest and the identity file.
    @Test func theOldestLayoutStillOpens() throws {
        let directory = TemporaryStore("oldest-layout")
        var written: [ObjectID: [UInt8]] = [:]
        do {
            var options = testOptions()
            options.segmentSize = 1 << 16
            let store = try directory.open(options: options)
            for index in 0..<200 {
                let payload = payloadBytes(600, seed: UInt64(index))
                written[try store.put(typeTag: 1, payload: payload)] = payload
            }
            try store.writeHints()
            try store.close()
        }
        for name in ["STORE", "SEGMENTS"] { try FileManager.default.removeItem(atPath: directory.path + "/" + name) }
        #expect(directory.fileNames().contains { $0.hasSuffix(".hint") } && directory.segmentFiles().count > 1)
        #expect(directory.fileNames().contains("LOCK"))

        let readOnly = try Store.open(at: directory.path, options: options(readOnly: true))
        #expect(try readOnly.count() == written.count)
        try readOnly.close()
        let store = try directory.open(options: testOptions())
        for (id, payload) in written { #expect(try store.get(id)?.payload == payload) }
        try store.close()
        #expect(directory.fileNames().contains("STORE") && directory.fileNames().contains("SEGMENTS"))
    }
}
