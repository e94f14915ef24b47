import Foundation
@_spi(Engine) import LogStoreFormat
@_spi(Engine) import LogStoreSystem
import TestSupport
import Testing

@testable @_spi(Testing) import LogStore

/// Installing a dictionary when a write fails: the index never holds a dictionary no durable manifest
/// records, and an id once written is never written again with other content.
@Suite struct DictionaryInstallTests {
    static let manifestRename = SegmentManifest.fileName + LogFormat.writingSuffix
    static let xs = Array(repeating: UInt8(ascii: "x"), count: 1_000)
    static let ys = Array(repeating: UInt8(ascii: "y"), count: 1_000)

    /// A store without a dictionary yet (fewer payloads than the sampler gathers), its faults armed later.
    func openStore(_ directory: TemporaryStore, _ faults: FaultInjector) throws -> (Store, [ObjectID: [UInt8]]) {
        var options = DictionaryTests.options
        options.faultInjector = faults
        let store = try directory.open(options: options)
        let written = try DictionaryTests.fill(store, count: 300, seed: 31)
        #expect(try store.snapshot().dictionaries().isEmpty)
        return (store, written)
    }

    /// While the manifest that records a new dictionary is written, nothing can find the dictionary (no
    /// compaction pass can compress against it); when that write fails, it never becomes usable, and
    /// the store opens again with everything it holds.
    @Test func aDictionaryIsUsableOnlyOnceItsManifestIsDurable() throws {
        let directory = TemporaryStore(
            "dictionary-install-unused", unverifiedBecause: "a dictionary file is unrecorded")
        let faults = FaultInjector()
        let (store, written) = try openStore(directory, faults)
        let visible = Shared<[UInt32]?>(nil)
        faults.perform(before: .rename, pathSuffix: Self.manifestRename) { _ in
            visible.withLock { $0 = store.state.withLock { $0.dictionaries.all.map(\.id) } }
        }
        faults.inject(.rename, .error(EIO), pathSuffix: Self.manifestRename)
        #expect(throws: LogStoreError.self) { try store.pipeline.installDictionary(Self.xs) }
        #expect(visible.withLock { $0 } == [], "the index held the dictionary before its manifest was durable")
        #expect(try store.snapshot().dictionaries().isEmpty)
        #expect(store.pipeline.newestDictionary == nil)
        try store.rewriteAllSegments()
        try store.close()
        let reopened = try directory.open(options: DictionaryTests.options)
        for (id, payload) in written { #expect(try reopened.get(id)?.payload == payload) }
        try reopened.close()
    }

    /// A manifest rewrite that fails after its rename (the directory sync fails) records the dictionary
    /// all the same. The next dictionary takes a new id: had it reused the id with other content, a crash
    /// before its manifest would leave a file the recorded content does not match (`corruptDictionary`).
    @Test func aDictionaryIDAManifestMayRecordIsNotReused() throws {
        let directory = TemporaryStore("dictionary-install-id", unverifiedBecause: "dictionary files are unrecorded")
        let faults = FaultInjector()
        let (store, written) = try openStore(directory, faults)
        // The directory syncs of an install: the dictionary file's, then the manifest's.
        faults.inject(.sync, .error(EIO), after: 1, pathSuffix: directory.path)
        #expect(throws: LogStoreError.self) { try store.pipeline.installDictionary(Self.xs) }
        let manifest = try Data(contentsOf: URL(fileURLWithPath: directory.path + "/" + SegmentManifest.fileName))
        let recorded = try manifest.withUnsafeBytes { SegmentManifest.decode($0) }.get()
        #expect(recorded.dictionaries?.map(\.id) == [1])
        // The next install is cut short before its manifest: what a crash there leaves must open.
        faults.inject(.rename, .error(EIO), pathSuffix: Self.manifestRename)
        #expect(throws: LogStoreError.self) { try store.pipeline.installDictionary(Self.ys) }
        #expect(directory.fileNames().filter { $0.hasSuffix(".dict") } == ["0000000001.dict", "0000000002.dict"])
        let crashed = TemporaryStore(
            "dictionary-install-id-crash", unverifiedBecause: "a dictionary file is unrecorded")
        try FileManager.default.createDirectory(atPath: crashed.path, withIntermediateDirectories: true)
        for name in directory.fileNames() where name != "LOCK" && !name.hasSuffix(".lock") {
            try FileManager.default.copyItem(atPath: directory.path + "/" + name, toPath: crashed.path + "/" + name)
        }
        let reopened = try crashed.open(options: DictionaryTests.options)
        for (id, payload) in written { #expect(try reopened.get(id)?.payload == payload) }
        try reopened.close()
        try store.close()
    }

    /// A dictionary file a failed install left (its manifest was never written) keeps its id: the next
    /// install takes the one after.
    @Test func aDictionaryFileAFailedInstallLeftKeepsItsID() throws {
        let directory = TemporaryStore("dictionary-install-file", unverifiedBecause: "a dictionary file is unrecorded")
        let faults = FaultInjector()
        let (store, written) = try openStore(directory, faults)
        faults.inject(.rename, .error(EIO), pathSuffix: Self.manifestRename)
        #expect(throws: LogStoreError.self) { try store.pipeline.installDictionary(Self.xs) }
        let installed = try store.pipeline.installDictionary(Self.ys)
        #expect(installed.dictionary.id == 2)
        try store.close()
        let reopened = try directory.open(options: DictionaryTests.options)
        #expect(try reopened.snapshot().dictionaries().map(\.id) == [2])
        for (id, payload) in written { #expect(try reopened.get(id)?.payload == payload) }
        try reopened.close()
    }
}
