import Foundation
import Synchronization
import TestSupport
import Testing

@testable @_spi(Testing) import LogStore

/// Snapshots see one committed state; expectations make a write conditional on what was read.
@Suite struct SnapshotTests {
    @Test func snapshotSeesTheStateOfItsMoment() throws {
        let directory = TemporaryStore("snapshot")
        let store = try directory.open(options: testOptions())
        let a = try store.put(typeTag: 1, payload: [1])
        let b = try store.put(typeTag: 2, payload: [2])
        try store.setRoot("main", to: a)
        let view = try store.snapshot()

        try store.put(a, typeTag: 1, payload: [9])
        try store.delete(b)
        let c = try store.put(typeTag: 1, payload: [3])
        try store.setRoot("main", to: c)
        try store.setRoot("other", to: c)

        #expect(try view.get(a)?.payload == [1])
        #expect(try view.get(b)?.payload == [2])
        #expect(try view.get(c) == nil)
        #expect(view.contains(b) && !view.contains(c))
        #expect(view.roots() == ["main": a])
        #expect(view.ids() == [a, b])
        #expect(view.ids(ofType: 1) == [a])
        #expect(view.count() == 2 && view.count(ofType: 1) == 1)
        #expect(view.countsByType() == [1: 1, 2: 1])
        #expect(try view.header(of: b)?.typeTag == 2)
        #expect(try view.withPayload(of: a) { _, bytes in Array(bytes) } == [1])
        // The store itself has moved on.
        #expect(try store.get(a)?.payload == [9])
        #expect(try store.snapshot().ids() == [a, c])
        try store.close()
        // A snapshot holds its segments: it stays readable after the store closed.
        #expect(try view.get(a)?.payload == [1])
    }

    @Test func versionsAreTheSequenceOfTheWritingBatch() throws {
        let directory = TemporaryStore("versions")
        let store = try directory.open(options: testOptions())
        let id = store.newID()
        let first = try store.write { $0.put(id, typeTag: 1, payload: [1]) }.sequence
        #expect(try store.snapshot().version(of: id) == first)
        let second = try store.write { $0.put(id, typeTag: 1, payload: [2]) }.sequence
        #expect(second > first)
        let view = try store.snapshot()
        #expect(view.version(of: id) == second && view.sequence >= second)
        #expect(try view.versionedGet(id)?.version == second)
        try store.close()
    }

    @Test func snapshotOutlivesCompactionAndCollection() throws {
        let directory = TemporaryStore("snapshot-compaction")
        let store = try directory.open(options: testOptions(segmentSize: 1 << 16))
        var ids: [ObjectID] = []
        for index in 0..<1_000 {
            ids.append(try store.put(typeTag: 1, payload: payloadBytes(100, seed: UInt64(index))))
        }
        // An unpinned object that lives only through a root: removing the root collects it.
        let child = store.newID()
        try store.write {
            $0.put(child, typeTag: 3, payload: [7], pinned: false)
            $0.setRoot("child", to: child)
        }
        let view = try store.snapshot()
        for (index, id) in ids.enumerated() { try store.put(id, typeTag: 1, payload: [UInt8(index % 256)]) }
        try store.removeRoot("child")
        #expect(try store.get(child) == nil)
        let report = try store.compact()
        #expect(report.segmentsCompacted > 0)
        for (index, id) in ids.enumerated() {
            #expect(try view.get(id)?.payload == payloadBytes(100, seed: UInt64(index)))
        }
        #expect(try view.get(child)?.payload == [7])
        try store.close()
        #expect(try Store.verify(at: directory.path).problems.isEmpty)
    }

    @Test func expectationsGuardTheWholeBatch() throws {
        let directory = TemporaryStore("expectations")
        let store = try directory.open(options: testOptions())
        let a = try store.put(typeTag: 1, payload: [1])
        let b = try store.put(typeTag: 1, payload: [1])
        let view = try store.snapshot()
        try store.put(a, typeTag: 1, payload: [2])  // someone else changes a

        var batch = WriteBatch()
        batch.expect(a, version: view.version(of: a))
        batch.expect(b, version: view.version(of: b))
        batch.put(a, typeTag: 1, payload: [3])
        batch.put(b, typeTag: 1, payload: [3])
        let error = #expect(throws: LogStoreError.self) { try store.write(batch) }
        #expect(error?.code == .conflict && error?.objects == [a])
        #expect(try store.get(a)?.payload == [2] && store.get(b)?.payload == [1])

        // Against the current versions the same batch goes through.
        let now = try store.snapshot()
        var retry = WriteBatch()
        retry.expect(a, version: now.version(of: a))
        retry.expect(b, version: now.version(of: b))
        retry.put(a, typeTag: 1, payload: [3])
        try store.write(retry)
        #expect(try store.get(a)?.payload == [3])

        // nil: only if the object is not live.
        var create = WriteBatch()
        create.expect(b, version: nil)
        create.put(b, typeTag: 1, payload: [4])
        #expect(throws: LogStoreError.self) { try store.write(create) }
        try store.delete(b)
        try store.write(create)
        #expect(try store.get(b)?.payload == [4])
        try store.close()
    }

    @Test func concurrentExpectationsLetExactlyOneWriterWin() throws {
        let directory = TemporaryStore("expectation-race")
        let store = try directory.open(options: testOptions(fsync: .never))
        let counter = try store.put(typeTag: 1, payload: Array(repeating: 0, count: 8))
        let conflicts = Atomic<Int>(0)
        let threads = ThreadGroup()
        // Each thread adds 1 to the counter 100 times, re-reading on conflict: no increment may be lost.
        threads.start(4) { _ in
            var done = 0
            while done < 100 {
                do {
                    let view = try store.snapshot()
                    guard let record = try view.get(counter) else { return }
                    let value = record.payload.withUnsafeBytes { $0.loadUnaligned(as: UInt64.self) } + 1
                    var batch = WriteBatch()
                    batch.expect(counter, version: view.version(of: counter))
                    batch.put(counter, typeTag: 1, payload: withUnsafeBytes(of: value) { Array($0) })
                    try store.write(batch)
                    done += 1
                } catch let error as LogStoreError where error.code == .conflict {
                    conflicts.add(1, ordering: .relaxed)
                } catch {
                    Issue.record("\(error)")
                    return
                }
            }
        }
        threads.join()
        let final = try #require(try store.get(counter)).payload.withUnsafeBytes { $0.loadUnaligned(as: UInt64.self) }
        #expect(final == 400, "conflicts: \(conflicts.load(ordering: .relaxed))")
        try store.close()
    }

    /// Writers replace a group of objects in one batch each (all holding the batch's number, some freed by
    /// reference counting, the store compacting meanwhile); readers read the whole group through one
    /// snapshot at a time and must always find one batch's values.
    @Test func readersThroughSnapshotsNeverSeeHalfABatch() throws {
        let directory = TemporaryStore("snapshot-readers")
        var options = testOptions(segmentSize: 1 << 16, fsync: .never)
        options.compaction.background = false
        let store = try directory.open(options: options)
        let size = 20
        func writeGroup(_ round: UInt64) throws {
            try store.write { batch in
                var members: [ObjectID] = []
                for _ in 0..<size {
                    let id = store.newID()
                    batch.put(id, typeTag: 2, payload: withUnsafeBytes(of: round) { Array($0) }, pinned: false)
                    members.append(id)
                }
                let head = store.newID()
                batch.put(head, typeTag: 1, references: members, payload: withUnsafeBytes(of: round) { Array($0) })
                batch.setRoot("head", to: head)
                if let old = try store.root(named: "head") { batch.delete(old) }
            }
        }
        try writeGroup(0)
        let stop = Atomic<Bool>(false)
        let reads = Atomic<Int>(0)
        let problems = Shared<[String]>([])
        let threads = ThreadGroup()
        threads.start(2) { _ in
            while !stop.load(ordering: .relaxed) {
                do {
                    let view = try store.snapshot()
                    guard let head = view.root(named: "head"), let record = try view.get(head) else {
                        problems.withLock { $0.append("no head") }
                        return
                    }
                    var rounds: Set<[UInt8]> = [record.payload]
                    for member in record.references {
                        guard let child = try view.get(member) else {
                            problems.withLock { $0.append("member \(member) missing") }
                            return
                        }
                        rounds.insert(child.payload)
                    }
                    if rounds.count != 1 { problems.withLock { $0.append("mixed rounds \(rounds.count)") } }
                    reads.add(1, ordering: .relaxed)
                } catch {
                    problems.withLock { $0.append("\(error)") }
                    return
                }
            }
        }
        var round: UInt64 = 1
        let start = ContinuousClock.now
        while reads.load(ordering: .relaxed) < 400 || round < 100, ContinuousClock.now - start < .seconds(30) {
            try writeGroup(round)
            if round % 25 == 0 { _ = try store.compact() }
            round += 1
        }
        stop.store(true, ordering: .relaxed)
        threads.join()
        #expect(problems.withLock { $0 }.isEmpty, "\(problems.withLock { $0.prefix(5) })")
        #expect(reads.load(ordering: .relaxed) >= 300)
        try store.close()
        #expect(try Store.verify(at: directory.path).problems.isEmpty)
    }
}
