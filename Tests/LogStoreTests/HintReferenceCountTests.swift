import Foundation
@_spi(Engine) import LogStoreFormat
import TestSupport
import Testing

@testable @_spi(Testing) import LogStore

/// Open counts a hinted segment's references from its hint: reference counting frees nothing and no delete
/// is decided on those counts until every hint is compared with its segment.
@Suite struct HintReferenceCountTests {
    func options() -> StoreOptions {
        var options = testOptions(segmentSize: 1 << 16)
        options.compaction.background = false
        return options
    }

    /// A closed store whose sealed first segment (with a hint) holds unpinned B, A → B and C → B.
    func makeStore(_ directory: TemporaryStore) throws -> (a: ObjectID, b: ObjectID, c: ObjectID) {
        let store = try directory.open(options: options())
        let (b, a, c) = (store.newID(), store.newID(), store.newID())
        try store.write { batch in
            batch.put(b, typeTag: 2, payload: [2, 2, 2], pinned: false)
            batch.put(a, typeTag: 1, references: [b], payload: [1])
            batch.put(c, typeTag: 3, references: [b], payload: [3])
        }
        var seed: UInt64 = 0
        while directory.segmentFiles().count < 2 {
            seed += 1
            _ = try store.put(typeTag: 9, payload: payloadBytes(500, seed: seed))
        }
        try store.writeHints()
        try store.close()
        return (a, b, c)
    }

    /// The hint of segment 1 says A refers to nothing.
    func forgeA(_ directory: TemporaryStore, _ a: ObjectID) throws {
        try directory.forgeHint(segment: 1) { entries in
            let at = try #require(entries.firstIndex { $0.kind == .put && $0.id == a.rawValue })
            entries[at].references = []
        }
    }

    /// After the forged session: B is there, and a store opened by scanning is sound.
    func expectBSurvives(_ directory: TemporaryStore, _ b: ObjectID) throws {
        try directory.deleteHints()
        let reopened = try directory.open(options: options())
        #expect(try reopened.get(b)?.payload == [2, 2, 2])
        try reopened.close()
        #expect(try Store.verify(at: directory.path).problems.isEmpty)
    }

    /// C is rewritten without its reference: B's count, from the forged hint, drops to zero, but A still
    /// refers to B. Counting does not free B, and the check that finds the forgery drops the pending free.
    @Test func aForgedReferenceListDoesNotLetCountingFree() throws {
        let directory = TemporaryStore("hint-refcount-cascade")
        let (a, b, c) = try makeStore(directory)
        try forgeA(directory, a)
        let store = try directory.open(options: options())
        #expect(store.segmentsLoadedFromHints == 1)
        try store.put(c, typeTag: 3, payload: [3])
        #expect(try store.get(b)?.payload == [2, 2, 2])
        #expect(throws: LogStoreError.self) { try store.trustHints() }
        #expect(try store.get(b)?.payload == [2, 2, 2])
        try store.close()
        try expectBSurvives(directory, b)
    }

    /// Deleting C while A's hint lists no reference: the delete waits for the hints to be checked, which
    /// finds the forgery and refuses it; B survives.
    @Test func aDeleteWaitsForTheHintsAndAForgedOneRefusesIt() throws {
        let directory = TemporaryStore("hint-refcount-delete-referrer")
        let (a, b, c) = try makeStore(directory)
        try forgeA(directory, a)
        let store = try directory.open(options: options())
        #expect(throws: LogStoreError.self) { try store.delete(c) }
        #expect(try store.get(b)?.payload == [2, 2, 2])
        #expect(try store.get(c) != nil)
        try store.close()
        try expectBSurvives(directory, b)
    }

    /// Deleting B itself while A's hint lists no reference (its count, from the hint, is 1: C's): after
    /// C is deleted in a scanned session B is still referenced by A, and a forged session may not delete it.
    @Test func aForgedReferenceListDoesNotLetAnExplicitDeletePass() throws {
        let directory = TemporaryStore("hint-refcount-delete")
        let (_, b, _) = try makeStore(directory)
        try directory.forgeHint(segment: 1) { entries in
            for at in entries.indices where entries[at].kind == .put && entries[at].references.contains(b) {
                entries[at].references = []
            }
        }
        let store = try directory.open(options: options())
        do {
            try store.delete(b)
            Issue.record("B was deleted although A refers to it")
        } catch {
            #expect(error.code == .corruptHint)
        }
        #expect(try store.get(b)?.payload == [2, 2, 2])
        try store.close()
        try expectBSurvives(directory, b)
        let scanned = try directory.open(options: options())
        #expect(throws: LogStoreError.self) { try scanned.delete(b) }
        try scanned.close()
    }

    /// With honest hints, the free counting held back is performed once the hints are checked, and it is
    /// durable.
    @Test func aHeldBackFreeIsPerformedOnceTheHintsAreChecked() throws {
        let directory = TemporaryStore("hint-refcount-honest")
        let (a, b, c) = try makeStore(directory)
        let store = try directory.open(options: options())
        #expect(store.segmentsLoadedFromHints == 1)
        try store.put(a, typeTag: 1, payload: [1])
        try store.put(c, typeTag: 3, payload: [3])
        #expect(try store.get(b)?.payload == [2, 2, 2])
        try store.trustHints()
        #expect(try store.get(b) == nil)
        #expect(try store.statistics().collectedByCounting == 1)
        try store.close()
        let reopened = try directory.open(options: options())
        #expect(try reopened.get(b) == nil)
        try reopened.close()
        #expect(try Store.verify(at: directory.path).problems.isEmpty)
    }

    /// A compaction pass checks the hints, and then frees what counting held back.
    @Test func aCompactionPerformsAHeldBackFree() throws {
        let directory = TemporaryStore("hint-refcount-compaction")
        let (a, b, c) = try makeStore(directory)
        let store = try directory.open(options: options())
        try store.put(a, typeTag: 1, payload: [1])
        try store.put(c, typeTag: 3, payload: [3])
        #expect(try store.get(b) != nil)
        try store.compact()
        #expect(try store.get(b) == nil)
        try store.close()
    }

    /// An explicit delete in a hinted session checks the hints first and then frees at once what only the
    /// deleted object kept alive.
    @Test func aDeleteInAHintedSessionFreesAtOnce() throws {
        let directory = TemporaryStore("hint-refcount-delete-honest")
        let (a, b, c) = try makeStore(directory)
        let store = try directory.open(options: options())
        try store.delete(a)
        #expect(try store.get(b) != nil)
        try store.delete(c)
        #expect(try store.get(b) == nil)
        try store.close()
    }
}
