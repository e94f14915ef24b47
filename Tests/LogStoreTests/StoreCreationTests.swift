import Foundation
import TestSupport
import Testing

@testable @_spi(Testing) import LogStore

#if canImport(Glibc)
    import Glibc
#endif

/// Creating a store in an empty folder while another open creates or opens it: every open either opens
/// the one store made there or throws `locked`, and the store holds what every successful writer wrote.
@Suite struct StoreCreationTests {
    /// What one open of a racing folder gave: the id it wrote, or the error it threw.
    enum Outcome: Sendable {
        case wrote(ObjectID)
        case failed(LogStoreError)
    }

    /// Opens `path` for writing, writes one object and closes the store.
    static func openAndWrite(_ path: String, faults: FaultInjector? = nil, tag: UInt32) -> Outcome {
        do throws(LogStoreError) {
            let store = try Store.open(at: path, options: testOptions(faults: faults))
            let id = try store.put(typeTag: tag, payload: [UInt8(truncatingIfNeeded: tag)])
            try store.close()
            return .wrote(id)
        } catch {
            return .failed(error)
        }
    }

    /// The store at `path` opens and holds every object in `written`.
    func expectStoreHolds(_ written: [ObjectID], at path: String) throws {
        let store = try Store.open(at: path, options: testOptions())
        defer { try? store.close() }
        for id in written { #expect(try store.get(id) != nil, "object \(id) of an acknowledged write") }
    }

    @Test func concurrentCreatorsOfAnEmptyFolderOpenTheStoreOrFindItLocked() throws {
        let parent = TemporaryStore("creation-race")
        let creators = 4
        for round in 0..<15 {
            let path = parent.path + "/\(round)"
            try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: false)
            let outcomes = Shared<[Outcome]>([])
            let ready = Shared(0)
            let group = ThreadGroup()
            group.start(creators) { index in
                ready.withLock { $0 += 1 }
                while ready.withLock({ $0 }) < creators {}  // all start at once
                let outcome = Self.openAndWrite(path, tag: UInt32(index + 1))
                outcomes.withLock { $0.append(outcome) }
            }
            group.join()
            var written: [ObjectID] = []
            for outcome in outcomes.withLock({ $0 }) {
                switch outcome {
                case .wrote(let id): written.append(id)
                case .failed(let error): #expect(error.code == .locked, "round \(round): \(error)")
                }
            }
            #expect(!written.isEmpty, "round \(round): no creator opened the store")
            try expectStoreHolds(written, at: path)
        }
    }

    /// A second creator that comes while the first installs the identity file (its rename), and is held
    /// just before it would write an identity file of its own, finds the store locked; the first one's
    /// store opens afterwards with what it wrote.
    @Test func aSecondCreatorDuringTheFirstsIdentityRenameFindsTheStoreLocked() throws {
        let directory = TemporaryStore("creation-interleaved")
        let second = Shared<Outcome?>(nil)
        let secondHeld = DispatchSemaphore(value: 0)
        let releaseSecond = DispatchSemaphore(value: 0)
        let secondFaults = FaultInjector()
        secondFaults.perform(before: .write, pathSuffix: "/STORE.writing") { _ in
            secondHeld.signal()
            releaseSecond.wait()
        }
        let firstFaults = FaultInjector()
        let group = ThreadGroup()
        firstFaults.perform(before: .rename, pathSuffix: "/STORE.writing") { _ in
            group.start(1) { _ in
                let outcome = Self.openAndWrite(directory.path, faults: secondFaults, tag: 2)
                second.withLock { $0 = outcome }
                secondHeld.signal()
            }
            secondHeld.wait()  // the second creator is held at its identity write, or done
        }
        let first = Self.openAndWrite(directory.path, faults: firstFaults, tag: 1)
        // Checked while the second creator may still be held: the store must already be sound.
        guard case .wrote(let id) = first else {
            releaseSecond.signal()
            group.join()
            Issue.record("the first creator failed: \(first)")
            return
        }
        let reopened = Result(catching: { try expectStoreHolds([id], at: directory.path) })
        releaseSecond.signal()
        group.join()
        try reopened.get()
        switch second.withLock({ $0 }) {
        case .failed(let error)?: #expect(error.code == .locked, "\(error)")
        case let other:
            Issue.record("the second creator should have found the store locked: \(String(describing: other))")
        }
        try expectStoreHolds([id], at: directory.path)
    }

    /// Files that appear in an empty folder after an open's first look and before its lock make the
    /// second look refuse the folder; a `LOCK` that open created is removed again, one that was there
    /// before (an empty leftover of an interrupted creation) stays.
    @Test(arguments: [false, true])
    func filesAppearingBeforeTheLockLeaveNoNewLockBehind(lockExisted: Bool) throws {
        let directory = TemporaryStore("creation-files-appear")
        let lock = directory.path + "/LOCK"
        if lockExisted { #expect(FileManager.default.createFile(atPath: lock, contents: Data())) }
        let faults = FaultInjector()
        faults.perform(before: .open, pathSuffix: "/LOCK") { _ in
            _ = FileManager.default.createFile(atPath: directory.path + "/notes.txt", contents: Data("notes\n".utf8))
        }
        #expect {
            try Store.open(at: directory.path, options: testOptions(faults: faults))
        } throws: { error in
            (error as? LogStoreError)?.code == .notAStore
        }
        #expect(directory.fileNames() == (lockExisted ? ["LOCK", "notes.txt"] : ["notes.txt"]))
    }
}
