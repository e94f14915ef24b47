import Foundation
import LogStoreExamples
@_spi(Engine) import LogStoreFormat
@_spi(Engine) import LogStoreSystem
import Synchronization
import TestSupport
import Testing

@testable @_spi(Testing) import LogStore

#if canImport(Glibc)
    import Glibc
#endif

@Suite struct CompactionTests {
    typealias Model = [ObjectID: Record]

    func options(_ faults: FaultInjector? = nil) -> StoreOptions {
        var options = testOptions(segmentSize: 1 << 16, faults: faults)
        options.compaction.background = false
        return options
    }

    func expectEqual(_ store: Store, _ model: Model, roots: [String: ObjectID], _ context: String) throws {
        #expect(try store.ids() == model.keys.sorted(), "\(context)")
        for (id, record) in model { #expect(try store.get(id) == record, "\(context): \(id)") }
        #expect(try store.roots() == roots, "\(context)")
    }

    @Test func compactionKeepsExactlyTheLiveDataAndShrinksTheStore() throws {
        let directory = TemporaryStore("compact-model")
        var store = try directory.open(options: options())
        var model = Model()
        var roots: [String: ObjectID] = [:]
        var random = SplitMix64(seed: 99)
        for round in 0..<6 {
            for _ in 0..<300 {
                switch random.next() % 10 {
                case 0..<5:
                    let id = store.newID()
                    let record = Record(
                        id: id, typeTag: 1, payload: payloadBytes(Int(random.next() % 700), seed: random.next()))
                    try store.put(record)
                    model[id] = record
                case 5..<8:
                    guard let id = model.keys.randomElement(using: &random) else { continue }
                    let record = Record(
                        id: id, typeTag: 2, references: [id], payload: payloadBytes(300, seed: random.next()))
                    try store.put(record)
                    model[id] = record
                case 8:
                    guard let id = model.keys.randomElement(using: &random), !roots.values.contains(id) else {
                        continue
                    }
                    try store.delete(id)
                    model[id] = nil
                default:
                    guard let id = model.keys.randomElement(using: &random) else { continue }
                    let name = "root-\(random.next() % 3)"
                    try store.setRoot(name, to: id)
                    roots[name] = id
                }
            }
            let before = try store.statistics()
            let report = try store.compact()
            let after = try store.statistics()
            #expect(report.segmentsCompacted > 0, "round \(round)")
            #expect(after.totalBytes < before.totalBytes, "round \(round)")
            // The same live records (compared one by one below); their frames are written anew, and one that
            // ends a batch of the output carries the batch checksum, so their bytes may differ a little.
            #expect(after.liveObjects == before.liveObjects, "round \(round)")
            // Outputs are extended ahead of the copy (a hole the page cache is filled in): each file is cut
            // back to exactly its frames before it is synced and renamed.
            for segment in after.segments where segment.isCompactionOutput {
                let attributes = try FileManager.default.attributesOfItem(atPath: segment.file)
                #expect((attributes[.size] as? NSNumber)?.uint64Value == segment.bytes, "\(segment.file)")
            }
            try expectEqual(store, model, roots: roots, "round \(round) after compact")
            if round % 2 == 1 {
                try store.close()
                store = try directory.open(options: options())
                try expectEqual(store, model, roots: roots, "round \(round) after reopen")
            }
        }
        // Everything but the segment being written is garbage-free after a final pass.
        try store.compact()
        let stats = try store.statistics()
        let sealedGarbage = stats.segments.filter { !$0.isActive }.reduce(UInt64(0)) { $0 + $1.garbageBytes }
        // What remains is fixed overhead: a seal frame and an id reservation frame per segment.
        #expect(
            sealedGarbage <= UInt64(100 * stats.segments.count), "garbage left in sealed segments: \(sealedGarbage)")
        try store.close()
        #expect(try Store.verify(at: directory.path).isSound)
    }

    /// One batch of 3 MB: its copies are one run of one sequence number, which the outputs split into
    /// batches of at most 1 MiB (segments of 4 MiB) or across outputs (segments of 64 KiB); reopened
    /// (from hints) and verified (scanned), every record is there and every batch checksum holds.
    @Test(arguments: [1 << 16, 4 << 20])
    func aLargeBatchIsCopiedInBatchesAcrossOutputs(segmentSize: Int) throws {
        let directory = TemporaryStore("compact-large-batch")
        var options = testOptions(segmentSize: segmentSize)
        options.compaction.background = false
        var model: Model = [:]
        do {
            let store = try directory.open(options: options)
            let ids = (0..<3000).map { _ in store.newID() }
            try store.write { batch in
                for (index, id) in ids.enumerated() {
                    batch.put(
                        id, typeTag: 1, references: index > 0 ? [ids[index - 1]] : [],
                        payload: payloadBytes(1000, seed: UInt64(index)))
                }
            }
            // Garbage in the batch's segment: the head of the chain is replaced.
            try store.put(ids[2999], typeTag: 2, references: [ids[2998]], payload: [1])
            for id in try store.ids() { model[id] = try store.get(id) }
            while directory.segmentFiles().count < 2 { try store.put(typeTag: 3, payload: payloadBytes(9000, seed: 9)) }
            for id in try store.ids() { model[id] = try store.get(id) }
            let report = try store.compact()
            #expect(report.recordsCopied >= 2999)
            try expectEqual(store, model, roots: [:], "after compact")
            try store.close()
        }
        #expect(try Store.verify(at: directory.path).isSound)
        let reopened = try directory.open(options: options)
        #expect(reopened.segmentsLoadedFromHints > 0)
        try expectEqual(reopened, model, roots: [:], "reopened")
        try reopened.close()
    }

    @Test func deletedObjectsNeverComeBack() throws {
        let directory = TemporaryStore("compact-tombstone")
        var store = try directory.open(options: options())
        var deleted: [ObjectID] = []
        var kept: [ObjectID] = []
        for index in 0..<300 {
            let id = try store.put(typeTag: 1, payload: payloadBytes(500, seed: UInt64(index)))
            if index % 2 == 0 { deleted.append(id) } else { kept.append(id) }
        }
        for id in deleted { try store.delete(id) }
        for _ in 0..<200 { try store.put(typeTag: 9, payload: payloadBytes(500, seed: 1)) }  // seal the tombstones
        for pass in 0..<3 {
            try store.compact()
            try store.close()
            store = try directory.open(options: options())
            for id in deleted { #expect(try store.get(id) == nil, "pass \(pass): \(id) came back") }
            for id in kept { #expect(try store.get(id) != nil, "pass \(pass)") }
        }
        try store.close()
    }

    /// A failure (or crash) at each step of a pass leaves the same live data after reopening.
    @Test(arguments: [
        (FaultInjector.Operation.write, 0), (.sync, 0), (.rename, 0), (.unlink, 0), (.unlink, 1),
    ])
    func failureAtEveryStepLosesNothing(operation: FaultInjector.Operation, after: Int) throws {
        let directory = TemporaryStore("compact-fault")
        let faults = FaultInjector()
        var store = try directory.open(options: options(faults))
        var model = Model()
        for index in 0..<400 {
            let id = store.newID()
            let record = Record(id: id, typeTag: 1, payload: payloadBytes(400, seed: UInt64(index)))
            try store.put(record)
            model[id] = record
        }
        for id in model.keys.sorted().prefix(250) {
            try store.delete(id)
            model[id] = nil
        }
        faults.inject(operation, .error(EIO), after: after)
        // The pass itself (sealing the segment being written is a writer step, tested elsewhere).
        #expect(throws: LogStoreError.self) { try store.compactSegments(garbageRatio: 0, progress: nil) }
        try expectEqual(store, model, roots: [:], "after failed compaction")
        // The store stays usable for writing: compaction failures do not fail the writer.
        let extra = try store.put(typeTag: 3, payload: [3])
        model[extra] = Record(id: extra, typeTag: 3, payload: [3])
        faults.clear()
        // "Crash": reopen from what is on disk.
        try? store.close()
        store = try directory.open(options: options())
        try expectEqual(store, model, roots: [:], "reopened after \(operation) failure")
        #expect(!directory.fileNames().contains { $0.hasSuffix(".compacting") })
        try store.compact()
        try expectEqual(store, model, roots: [:], "compacted again")
        try store.close()
        #expect(try Store.verify(at: directory.path).isSound)
    }

    @Test func leftoverOutputOfACrashedPassIsRemovedOnOpen() throws {
        let directory = TemporaryStore("compact-leftover")
        var store = try directory.open(options: options())
        let id = try store.put(typeTag: 1, payload: [1])
        try store.close()
        let leftover = directory.path + "/0000000009.seg.compacting"
        try Data([1, 2, 3]).write(to: URL(fileURLWithPath: leftover))
        store = try directory.open(options: options())
        #expect(!FileManager.default.fileExists(atPath: leftover))
        #expect(try store.get(id)?.payload == [1])
        try store.close()
    }

    @Test func readersAndAWriterRunCorrectlyWhileCompactionLoops() throws {
        let directory = TemporaryStore("compact-concurrent")
        let store = try directory.open(options: options())
        let stop = Atomic<Bool>(false)
        let failures = Shared<[String]>([])
        let reads = Atomic<Int>(0)
        let passes = Atomic<Int>(0)
        let highest = Atomic<UInt64>(0)
        let group = ThreadGroup()
        group.start(1) { _ in
            var random = SplitMix64(seed: 5)
            var version: UInt64 = 0
            while !stop.load(ordering: .relaxed) {
                version += 1
                let id =
                    highest.load(ordering: .relaxed) > 50 && random.next() % 2 == 0
                    ? ObjectID(1 + random.next() % highest.load(ordering: .relaxed)) : store.newID()
                do {
                    if try store.contains(id) || id.rawValue > highest.load(ordering: .relaxed) {
                        try store.put(id, typeTag: 1, payload: ConcurrencyTests.payload(id: id, version: version))
                    }
                    highest.max(id.rawValue, ordering: .relaxed)
                } catch {
                    failures.withLock { $0.append("write: \(error)") }
                    return
                }
            }
        }
        group.start(2) { reader in
            var random = SplitMix64(seed: 50 + UInt64(reader))
            while !stop.load(ordering: .relaxed) {
                let limit = highest.load(ordering: .relaxed)
                guard limit > 0 else { continue }
                let id = ObjectID(1 + random.next() % limit)
                do {
                    if let record = try store.get(id), !ConcurrencyTests.isValid(record.payload, id: id) {
                        failures.withLock { $0.append("wrong payload for \(id)") }
                    }
                    reads.add(1, ordering: .relaxed)
                } catch {
                    failures.withLock { $0.append("read \(id): \(error)") }
                    return
                }
            }
        }
        group.start(1) { _ in
            while !stop.load(ordering: .relaxed) {
                do {
                    try store.compact()
                    passes.add(1, ordering: .relaxed)
                } catch {
                    failures.withLock { $0.append("compact: \(error)") }
                    return
                }
            }
        }
        group.run(
            until: { passes.load(ordering: .relaxed) >= 20 && reads.load(ordering: .relaxed) >= 1000 }, thenStop: stop)
        #expect(failures.withLock { $0 }.isEmpty, "\(failures.withLock { $0.prefix(5) })")
        #expect(passes.load(ordering: .relaxed) >= 20)
        try store.close()
        #expect(try Store.verify(at: directory.path).isSound)
    }
}

extension CompactionTests {
    @Test func backgroundCompactorReclaimsGarbageByItself() throws {
        let directory = TemporaryStore("compact-background")
        var options = testOptions(segmentSize: 1 << 16)
        options.compaction = CompactionOptions(
            background: true, startGarbageRatio: 0.3, segmentGarbageRatio: 0.3, minimumInterval: .milliseconds(20))
        let store = try directory.open(options: options)
        var ids: [ObjectID] = []
        for index in 0..<400 { ids.append(try store.put(typeTag: 1, payload: payloadBytes(500, seed: UInt64(index)))) }
        for id in ids.dropFirst(50) { try store.delete(id) }
        for index in 0..<200 { try store.put(typeTag: 2, payload: payloadBytes(500, seed: UInt64(index))) }
        // What the compactor promises: it keeps passing while the store's garbage share is at least the
        // start ratio, and a pass leaves no sealed segment at or over the segment ratio. So eventually one
        // of the two is below its threshold (the segment being written is never compacted).
        func settled() throws -> Bool {
            let stats = try store.statistics()
            let worstSealed =
                stats.segments.filter { !$0.isActive }.map { Double($0.garbageBytes) / Double($0.bytes) }.max() ?? 0
            return worstSealed < 0.3 || Double(stats.garbageBytes) < 0.3 * Double(stats.totalBytes)
        }
        let deadline = ContinuousClock.now + .seconds(20)
        while ContinuousClock.now < deadline, try !settled() { Thread.sleep(forTimeInterval: 0.02) }
        #expect(try settled())
        // The garbage went by the background thread's own passes (nothing here called compact()).
        #expect((store.compactor.withLock { $0 }?.passes.load(ordering: .relaxed) ?? 0) > 0)
        for (index, id) in ids.prefix(50).enumerated() {
            #expect(try store.get(id)?.payload == payloadBytes(500, seed: UInt64(index)))
        }
        try store.close()
    }
}

extension CompactionTests {
    @Test func onDemandCompactionReclaimsTheSegmentBeingWritten() throws {
        let directory = TemporaryStore("compact-active")
        let store = try directory.open(options: options())
        let keep = try store.put(typeTag: 1, payload: payloadBytes(1000, seed: 1))
        for index in 0..<20 { try store.put(keep, typeTag: 1, payload: payloadBytes(1000, seed: UInt64(index))) }
        #expect(try store.statistics().segments.count == 1)
        let before = try store.statistics().totalBytes
        try store.compact()
        #expect(try store.statistics().totalBytes < before / 4)
        #expect(try store.get(keep)?.payload == payloadBytes(1000, seed: 19))
        let next = try store.put(typeTag: 2, payload: [2])  // writing goes on in a new segment
        try store.close()
        let reopened = try directory.open(options: options())
        #expect(try reopened.get(next)?.payload == [2])
        #expect(try reopened.get(keep)?.payload == payloadBytes(1000, seed: 19))
        try reopened.close()
        #expect(try Store.verify(at: directory.path).isSound)
    }
}

/// The background compactor's policy under churn: one segment per pass, the one with the most garbage, and
/// new segments sized to a small store.
@Suite struct CompactionPolicyTests {
    /// Writes `count` records of about 1 KiB (incompressible) in batches of 10; returns their ids.
    func fill(_ store: Store, count: Int, seed: UInt64) throws -> [ObjectID] {
        var ids: [ObjectID] = []
        var random = SplitMix64(seed: seed)
        for _ in 0..<(count / 10) {
            var batch = WriteBatch()
            for _ in 0..<10 {
                let id = store.newID()
                ids.append(id)
                batch.put(id, typeTag: 1, payload: (0..<1_000).map { _ in UInt8(truncatingIfNeeded: random.next()) })
            }
            try store.write(batch)
        }
        return ids
    }

    @Test func aLimitedPassTakesTheSegmentWithTheLargestGarbageShare() throws {
        let directory = TemporaryStore("policy-largest-share")
        var options = testOptions(segmentSize: 1 << 16)
        options.compaction.background = false
        let store = try directory.open(options: options)
        let ids = try fill(store, count: 400, seed: 1)
        let bySegment = try store.statistics().segments.filter { !$0.isActive }
        #expect(bySegment.count >= 4)
        // Garbage in every sealed segment, most of all in the third.
        var located: [UInt32: [ObjectID]] = [:]
        for id in ids {
            let segment = try store.readState { $0.durableEntry(id.rawValue)?.segment }
            if let segment { located[segment, default: []].append(id) }
        }
        let sealed = bySegment.map(\.number).sorted()
        let target = sealed[2]
        for number in sealed {
            let records = located[number] ?? []
            let share = number == target ? 0.8 : 0.4
            for id in records.prefix(Int(Double(records.count) * share)) { try store.delete(id) }
        }
        let report = try store.compactSegments(garbageRatio: 0.25, limit: 1, progress: nil)
        #expect(report.segmentsCompacted == 1)
        let remaining = Set(directory.segmentFiles().map { URL(fileURLWithPath: $0).lastPathComponent })
        #expect(!remaining.contains(LogFormat.segmentFileName(target)))
        for number in sealed where number != target { #expect(remaining.contains(LogFormat.segmentFileName(number))) }
        try store.close()
    }

    @Test func aFailingBackgroundPassIsReportedInTheStatistics() throws {
        let directory = TemporaryStore("policy-background-error")
        let faults = FaultInjector()
        var options = testOptions(segmentSize: 1 << 16, faults: faults)
        options.compaction = CompactionOptions(
            background: true, startGarbageRatio: 0.1, segmentGarbageRatio: 0.1, minimumInterval: .milliseconds(10))
        let store = try directory.open(options: options)
        #expect(try store.statistics().backgroundCompactionError == nil)
        // Every compaction output fails to be created.
        faults.inject(.open, .error(EIO), times: 1_000_000, pathSuffix: ".seg.compacting")
        let ids = try fill(store, count: 300, seed: 3)
        for id in ids.prefix(200) { try store.delete(id) }
        var reported: LogStoreError?
        for _ in 0..<500 where reported == nil {
            reported = try store.statistics().backgroundCompactionError
            if reported == nil { usleep(10_000) }
        }
        let error = try #require(reported)
        #expect(error.code == .ioError)
        faults.clear()
        try store.close()
    }

    @Test func newSegmentsOfASmallStoreAreSmallerThanTheSegmentSize() throws {
        let directory = TemporaryStore("policy-adaptive-size")
        var options = StoreOptions()
        options.compaction.background = false
        let store = try directory.open(options: options)
        _ = try fill(store, count: 9_000, seed: 2)  // about 9 MiB, the default segment size being 64 MiB
        let segments = try store.statistics().segments
        #expect(segments.count >= 2, "\(segments.map(\.bytes))")
        #expect(segments.allSatisfy { $0.bytes <= UInt64(4 << 20) + (64 << 10) })
        try store.close()
    }
}
