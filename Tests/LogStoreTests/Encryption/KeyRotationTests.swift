import Foundation
import LogStoreEncryption
import TestSupport
import Testing

@testable @_spi(Testing) import LogStore

@Suite("Encrypted stores: key rotation")
struct KeyRotationTests {
    /// An encrypted store of several sealed segments, a dictionary and roots, closed; its records.
    static func makeStore(_ directory: TemporaryStore, seed: UInt64, count: Int = 3_000) throws -> [ObjectID: [UInt8]] {
        var written: [ObjectID: [UInt8]] = [:]
        let store = try directory.open(options: encryptedOptions())
        for index in 0..<count {
            let payload = markedPayload(index, seed: seed).payload
            let id = try store.put(typeTag: 1, payload: payload)
            written[id] = payload
            if index == 10 { try store.setRoot("first", to: id) }
        }
        try store.close()
        return written
    }

    static func check(_ directory: String, with cipher: any StoreCipher, holds written: [ObjectID: [UInt8]]) throws {
        var options = encryptedOptions(cipher: cipher)
        options.readOnly = true
        let store = try Store.open(at: directory, options: options)
        defer { try? store.close() }
        for (id, payload) in written { #expect(try store.get(id)?.payload == payload, "object \(id)") }
        #expect(try store.root(named: "first") != nil)
    }

    @Test("a rotated store opens with the new key only, holds every record, and verifies")
    func rotation() throws {
        let seed = testSeed("KeyRotationTests.rotation", default: 0xE4)
        let directory = TemporaryStore("rotation")
        directory.verifies(with: testCipher(2))
        let written = try Self.makeStore(directory, seed: seed)
        let report = try Store.rotateKey(at: directory.path, from: testCipher(), to: testCipher(2))
        #expect(report.segments > 1 && report.hints > 0 && report.dictionaries > 0, "\(report)")
        try Self.check(directory.path, with: testCipher(2), holds: written)
        do {
            _ = try Store.open(at: directory.path, options: encryptedOptions(cipher: testCipher()))
            Issue.record("the old key still opens the store")
        } catch {
            #expect(error.code == .wrongKey)
        }
        #expect(!FileManager.default.fileExists(atPath: directory.path + ".rekeying"))
        // Written to and compacted under the new key, and rotated back.
        let store = try directory.open(options: encryptedOptions(cipher: testCipher(2)))
        try store.put(typeTag: 1, payload: [9, 9, 9])
        try store.rewriteAllSegments()
        try store.close()
        try Store.rotateKey(at: directory.path, from: testCipher(2), to: testCipher(3))
        directory.verifies(with: testCipher(3))
        try Self.check(directory.path, with: testCipher(3), holds: written)
    }

    @Test("a rotation with the wrong old key, or of a store that is open, changes nothing")
    func refusals() throws {
        let directory = TemporaryStore("rotation-refused")
        directory.verifies(with: testCipher())
        let written = try Self.makeStore(directory, seed: 5, count: 100)
        #expect(throws: LogStoreError.self) {
            try Store.rotateKey(at: directory.path, from: testCipher(4), to: testCipher(2))
        }
        let open = try directory.open(options: encryptedOptions())
        do {
            try Store.rotateKey(at: directory.path, from: testCipher(), to: testCipher(2))
            Issue.record("a store open for writing was rotated")
        } catch {
            #expect(error.code == .locked)
        }
        try open.close()
        try Self.check(directory.path, with: testCipher(), holds: written)
    }

    @Test("what an interrupted rotation left beside the store is removed by the next one")
    func leftovers() throws {
        let directory = TemporaryStore("rotation-leftover")
        directory.verifies(with: testCipher(2))
        let written = try Self.makeStore(directory, seed: 6, count: 200)
        // A copy still being made: the marker is in it.
        let staging = directory.path + ".rekeying"
        try FileManager.default.createDirectory(atPath: staging, withIntermediateDirectories: false)
        _ = FileManager.default.createFile(atPath: staging + "/REKEYING", contents: Data())
        _ = FileManager.default.createFile(atPath: staging + "/0000000001.seg", contents: Data([1, 2, 3]))
        try Store.rotateKey(at: directory.path, from: testCipher(), to: testCipher(2))
        #expect(!FileManager.default.fileExists(atPath: staging))
        try Self.check(directory.path, with: testCipher(2), holds: written)
        // A folder of the same name that no rotation made is refused.
        try FileManager.default.createDirectory(atPath: staging, withIntermediateDirectories: false)
        _ = FileManager.default.createFile(atPath: staging + "/notes.txt", contents: Data([1]))
        #expect(throws: LogStoreError.self) {
            try Store.rotateKey(at: directory.path, from: testCipher(2), to: testCipher(3))
        }
        #expect(FileManager.default.fileExists(atPath: staging + "/notes.txt"))
        try FileManager.default.removeItem(atPath: staging)
    }
}

/// `logstore-tool rekey` killed with SIGKILL at random points of its run.
@Suite(.serialized) struct KeyRotationCrashTests {
    /// Whether the store in `directory` opens (read-only) with `cipher`; when it does, that it holds
    /// `written`.
    static func opens(_ directory: String, with cipher: any StoreCipher, holding written: [ObjectID: [UInt8]])
        throws -> Bool
    {
        var options = encryptedOptions(cipher: cipher)
        options.readOnly = true
        guard let store = try? Store.open(at: directory, options: options) else { return false }
        defer { try? store.close() }
        for (id, payload) in written where try store.get(id)?.payload != payload {
            Issue.record("object \(id) is not what was written")
            return true
        }
        return true
    }

    /// Waits for `child` to end without holding a thread of the pool (other tests need it meanwhile).
    static func waitForExit(_ child: RunningTool) async throws -> ToolResult {
        while !child.waitForExit(timeout: 0.001) { try await Task.sleep(for: .milliseconds(5)) }
        return child.finish()
    }

    /// Each kill comes at a point of the rotation's progress, not of the clock (a loaded machine would make
    /// time a poor guide): once the copy beside the store holds a random number of files (from none to all),
    /// or, every fourth round, once the copy has taken the store's place (the marker is in the store).
    @Test func aRotationKilledAtRandomPointsLeavesAWholeStoreUnderTheOldOrTheNewKey() async throws {
        let seed = testSeed("KeyRotationCrashTests", default: 0xE5)
        var random = SplitMix64(seed: seed)
        let pristine = TemporaryStore("rotation-kill-pristine")
        pristine.verifies(with: testCipher())
        let written = try KeyRotationTests.makeStore(pristine, seed: seed, count: 8_000)
        let files = pristine.fileNames().count
        let keys = TemporaryStore("rotation-kill-keys")
        let oldKey = keys.path + "/old.key"
        let newKey = keys.path + "/new.key"
        try Data(AESGCMCipher.hex((0..<32).map { UInt8($0) &+ 7 }).utf8).write(to: URL(fileURLWithPath: oldKey))
        try Data(AESGCMCipher.hex((0..<32).map { UInt8($0) &+ 2 }).utf8).write(to: URL(fileURLWithPath: newKey))
        var underOld = 0
        var underNew = 0
        var killedRunning = 0
        for round in 0..<16 {
            let directory = TemporaryStore("rotation-kill")
            try FileManager.default.removeItem(atPath: directory.path)
            try FileManager.default.copyItem(atPath: pristine.path, toPath: directory.path)
            directory.verifies(with: testCipher(3))
            let staging = directory.path + ".rekeying"
            let swapped = round % 4 == 3
            let filesCopied = Int(random.next() % UInt64(files + 1))
            let child = try RunningTool(["rekey", directory.path, "--key-file", oldKey, "--new-key-file", newKey])
            while !child.waitForExit(timeout: 0) {
                let reached =
                    swapped
                    ? FileManager.default.fileExists(atPath: directory.path + "/REKEYING")
                    : ((try? FileManager.default.contentsOfDirectory(atPath: staging))?.count ?? -1) > filesCopied
                if reached {
                    child.killNow()
                    killedRunning += 1
                    break
                }
                try await Task.sleep(for: .microseconds(200))
            }
            _ = try await Self.waitForExit(child)
            let old = try Self.opens(directory.path, with: testCipher(), holding: written)
            let new = try Self.opens(directory.path, with: testCipher(2), holding: written)
            #expect(old != new, "round \(round), seed \(seed): opens with the old key \(old), with the new \(new)")
            if old { underOld += 1 }
            if new { underNew += 1 }
            // The next rotation removes what the killed one left beside the store.
            try Store.rotateKey(at: directory.path, from: old ? testCipher() : testCipher(2), to: testCipher(3))
            #expect(!FileManager.default.fileExists(atPath: staging))
            #expect(try Self.opens(directory.path, with: testCipher(3), holding: written))
        }
        print(
            "rotation kill test (seed \(seed)): \(killedRunning) of 16 runs killed, \(underOld) left under the old "
                + "key, \(underNew) under the new")
        #expect(underOld > 0 && underNew > 0, "seed \(seed): the kills should fall on both sides of the swap")
    }
}
