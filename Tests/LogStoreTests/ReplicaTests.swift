import Foundation
import LogStoreExamples
@_spi(Engine) import LogStoreFormat
import Synchronization
import TestSupport
import Testing

@testable @_spi(Testing) import LogStore

/// Replicas: kept up to date in place while a reader reads them, through compaction and mark-sweep;
/// promoted by an open for writing, after which passes are refused; refusals; and a replica read by a
/// child process while a writer in another child is killed with SIGKILL.
@Suite struct ReplicaTests {
    /// What makes the store at `path` not the state of one commit of `CheckpointTests.writeBatch` (the
    /// shared objects from several batches, new objects missing or from later batches, the root elsewhere),
    /// or nil; for a reader on a thread of its own, where expectations are not recorded against the test.
    static func inconsistency(at path: String, shared: [ObjectID]) throws -> String? {
        let store = try Store.open(at: path, options: StoreOptions(readOnly: true))
        defer { try? store.close() }
        var batches: Set<Int> = []
        for id in shared {
            guard let payload = try store.get(id)?.payload else { return "shared object \(id) missing" }
            let text = String(decoding: payload.prefix { $0 != UInt8(ascii: ";") }, as: UTF8.self)
            batches.insert(Int(text.dropFirst("batch ".count)) ?? -2)
        }
        guard batches.count == 1, let newest = batches.first else {
            return "the shared objects come from batches \(batches.sorted())"
        }
        let news = try store.ids(ofType: 2).map { String(decoding: try store.get($0)?.payload ?? [], as: UTF8.self) }
        guard Set(news) == Set((0...max(newest, 0)).map { "new \($0)" }), news.count == newest + 1 else {
            return "batch \(newest) of the shared objects beside \(news.count) new objects"
        }
        guard let root = try store.root(named: "newest"),
            try store.get(root)?.payload == Array("new \(newest)".utf8)
        else { return "the root newest does not name batch \(newest)'s object" }
        return nil
    }

    @Test func aReplicaFollowsTheStoreInPlaceWhileReadersReadIt() throws {
        let directory = TemporaryStore("replica")
        let (store, shared) = try CheckpointTests.seededStore(directory, background: true, batches: 10)
        let replica = directory.path + "/replica"
        let stop = Atomic<Bool>(false)
        let reads = Atomic<Int>(0)
        let failures = Mutex<[String]>([])
        // A reader that opens the replica again and again: every open is one whole commit.
        let reader = Thread {
            while !stop.load(ordering: .relaxed) {
                guard FileManager.default.fileExists(atPath: replica + "/SEGMENTS") else { continue }
                do {
                    if let problem = try Self.inconsistency(at: replica, shared: shared) {
                        failures.withLock { $0.append(problem) }
                    }
                    reads.add(1, ordering: .relaxed)
                } catch {
                    failures.withLock { $0.append("\(error)") }
                }
            }
        }
        reader.start()
        var written = 10
        var passes: [ReplicationReport] = []
        for round in 0..<30 {
            // Small rounds extend the segment being written; large ones roll it over.
            for _ in 0..<(round % 2 == 0 ? 1 : 15) {
                try CheckpointTests.writeBatch(written, shared: shared, to: store)
                written += 1
            }
            if round % 10 == 9 {
                try store.collectGarbage()
                try store.compact()
            }
            passes.append(try store.replicate(to: replica))
            #expect(try CheckpointTests.committedBatches(at: replica, shared: shared) == written - 1)
            // The segment the replica has a part of is held from compaction, and only that one.
            let holds = try FileManager.default.contentsOfDirectory(atPath: directory.path + "/store/history")
                .filter { $0.hasSuffix(".hold") }
            #expect(holds.count == 1)
            let held = try holds.flatMap {
                try FileManager.default.contentsOfDirectory(atPath: directory.path + "/store/history/" + $0)
            }
            #expect(held.count <= 1, "\(held)")
        }
        stop.store(true, ordering: .relaxed)
        while !reader.isFinished { usleep(1_000) }
        #expect(failures.withLock { $0 }.isEmpty, "\(failures.withLock { $0 }.prefix(3))")
        #expect(reads.load(ordering: .relaxed) > 0)
        #expect(passes.contains { $0.segmentsCopied > 0 } && passes.contains { $0.bytesAppended > 0 })
        #expect(passes.contains { $0.segmentsRemoved > 0 }, "background compaction removed nothing")
        #expect(try Store.verify(at: replica).isSound)
        try store.close()
    }

    @Test func promotingAReplicaMakesItAStoreOfItsOwn() throws {
        let directory = TemporaryStore("replica-promoted")
        let (store, shared) = try CheckpointTests.seededStore(directory, background: false, batches: 40)
        let replica = directory.path + "/replica"
        try store.replicate(to: replica)
        for number in 40..<60 { try CheckpointTests.writeBatch(number, shared: shared, to: store) }
        try store.replicate(to: replica)
        // The store is lost; the replica is opened for writing and goes on from its last commit.
        let promoted = try Store.open(at: replica, options: testOptions())
        #expect(promoted.recovery == nil)
        try CheckpointTests.writeBatch(60, shared: shared, to: promoted)
        // While it is open for writing, a pass is refused.
        #expect { try store.replicate(to: replica) } throws: { ($0 as? LogStoreError)?.code == .locked }
        try promoted.close()
        #expect(try CheckpointTests.committedBatches(at: replica, shared: shared) == 60)
        // Closed, it is a store of its own: a pass is refused and changes nothing.
        #expect { try store.replicate(to: replica) } throws: { ($0 as? LogStoreError)?.code == .invalidArgument }
        #expect(try CheckpointTests.committedBatches(at: replica, shared: shared) == 60)
        try store.close()
    }

    @Test func aReplicaThatWasWrittenToIsRefused() throws {
        let directory = TemporaryStore("replica-diverged", unverifiedBecause: "a replica forked on purpose")
        let (store, shared) = try CheckpointTests.seededStore(directory, background: false, batches: 5)
        let replica = directory.path + "/replica"
        try store.replicate(to: replica)
        // Written to, then killed (no clean close): its tail differs from the store's.
        let fork = try Store.open(at: replica, options: testOptions())
        try CheckpointTests.writeBatch(99, shared: shared, to: fork, salt: 7)
        try fork.close()
        try forgetCleanClose(replica)
        try CheckpointTests.writeBatch(5, shared: shared, to: store)
        #expect { try store.replicate(to: replica) } throws: { ($0 as? LogStoreError)?.code == .invalidArgument }
        // Other folders: another store, one with other files.
        let other = directory.path + "/other"
        try Store.open(at: other, options: testOptions()).close()
        #expect { try store.replicate(to: other) } throws: { ($0 as? LogStoreError)?.code == .invalidArgument }
        // A folder with other files: refused, and nothing written into it.
        let notes = directory.path + "/notes"
        try FileManager.default.createDirectory(atPath: notes, withIntermediateDirectories: true)
        #expect(FileManager.default.createFile(atPath: notes + "/todo.txt", contents: Data("milk".utf8)))
        #expect { try store.replicate(to: notes) } throws: { ($0 as? LogStoreError)?.code == .invalidArgument }
        #expect(try FileManager.default.contentsOfDirectory(atPath: notes) == ["todo.txt"])
        // A replica with other files beside its own: refused.
        let replicaFile = replica + "/todo.txt"
        #expect(FileManager.default.createFile(atPath: replicaFile, contents: Data("milk".utf8)))
        #expect { try store.replicate(to: replica) } throws: { ($0 as? LogStoreError)?.code == .invalidArgument }
        try store.close()
    }

    /// The segment numbers in `directory`.
    static func segmentNumbers(_ directory: String) throws -> Set<Int> {
        Set(
            try FileManager.default.contentsOfDirectory(atPath: directory).compactMap {
                $0.hasSuffix(".seg") ? Int($0.dropLast(4)) : nil
            })
    }

    /// Compaction (even a full rewrite) leaves alone the segment a replica has a part of and every newer
    /// one, until the next pass has them whole.
    @Test func aHoldKeepsCompactionAwayFromWhatTheReplicaHasNotReceived() throws {
        let directory = TemporaryStore("replica-hold")
        let (store, shared) = try CheckpointTests.seededStore(directory, background: false, batches: 5)
        let primary = directory.path + "/store"
        let replica = directory.path + "/replica"
        try store.replicate(to: replica)
        let partial = try #require(try Self.segmentNumbers(replica).max())
        for number in 5..<80 { try CheckpointTests.writeBatch(number, shared: shared, to: store) }
        let unshipped = try Self.segmentNumbers(primary).filter { $0 >= partial }
        #expect(unshipped.count > 3, "the writes should have rolled several segments")
        let compaction = try store.compact()
        #expect(compaction.segmentsHeld >= unshipped.count - 1)
        try store.rewriteAllSegments()
        #expect(unshipped.isSubset(of: try Self.segmentNumbers(primary)), "a held segment was compacted")
        try store.replicate(to: replica)
        #expect(try CheckpointTests.committedBatches(at: replica, shared: shared) == 79)
        // Shipped, they are the store's to compact again.
        let freed = try store.compact()
        #expect(freed.segmentsCompacted > 0)
        #expect(!unshipped.isSubset(of: try Self.segmentNumbers(primary)))
        try store.replicate(to: replica)
        #expect(try CheckpointTests.committedBatches(at: replica, shared: shared) == 79)
    }

    /// A replica that starts holding a segment while a compaction pass copies it (here: the hold made by hand
    /// from the pass's progress callback) makes the pass drop itself: its outputs deleted, every input kept.
    @Test func aCompactionDropsItselfWhenAReplicaStartsHoldingAnInput() throws {
        let directory = TemporaryStore("replica-hold-race")
        let (store, shared) = try CheckpointTests.seededStore(directory, background: false, batches: 1)
        let primary = directory.path + "/store"
        for number in 1..<80 { try CheckpointTests.writeBatch(number, shared: shared, to: store) }
        let before = try Self.segmentNumbers(primary)
        let hold = primary + "/history/replica-0.hold"
        try FileManager.default.createDirectory(atPath: hold, withIntermediateDirectories: true)
        let lowest = String(format: "%010d.seg", try #require(before.min()))
        var linked = false
        let report = try store.compact { _ in
            guard !linked else { return }
            linked = true
            try? FileManager.default.linkItem(atPath: primary + "/" + lowest, toPath: hold + "/" + lowest)
        }
        #expect(linked)
        #expect(report.segmentsCompacted == 0 && report.segmentsHeld > 0)
        #expect(try Self.segmentNumbers(primary) == before, "inputs deleted or outputs left")
        #expect(try store.get(shared[0]).map { String(decoding: $0.payload.prefix(9), as: UTF8.self) } == "batch 79;")
        try FileManager.default.removeItem(atPath: hold)
        #expect(try store.compact().segmentsCompacted > 0)
    }

    /// Full rewrites that build new dictionaries and retire the old between passes: the replica reads every
    /// record after each pass (its older dictionaries stay recorded until its segments naming them are gone)
    /// and ends with the store's dictionaries only.
    @Test func aReplicaFollowsNewDictionariesAndRetiresTheOld() throws {
        let directory = TemporaryStore("replica-dictionaries")
        let primary = directory.path + "/store"
        let store = try directory.closesAtTeardown(Store.open(at: primary, options: DictionaryTests.options)) {
            try $0.close()
        }
        let written = try DictionaryTests.fill(store, count: 6_000, seed: 21)
        let replica = directory.path + "/replica"
        func dictionaries(_ path: String) throws -> [String] {
            try FileManager.default.contentsOfDirectory(atPath: path).filter { $0.hasSuffix(".dict") }.sorted()
        }
        func check() throws {
            let copy = try Store.open(at: replica, options: StoreOptions(createIfMissing: false, readOnly: true))
            defer { try? copy.close() }
            for (id, payload) in written { #expect(try copy.get(id)?.payload == payload) }
        }
        try store.replicate(to: replica)
        try check()
        for _ in 0..<3 {
            try store.rewriteAllSegments()
            try store.replicate(to: replica)
            try check()
        }
        try store.replicate(to: replica)
        try check()
        #expect(try dictionaries(replica) == dictionaries(primary))
        // A dictionary file no manifest records (a pass stopped before removing it) goes with the next pass.
        let stray = replica + "/" + DictionaryFile.fileName(99)
        #expect(FileManager.default.createFile(atPath: stray, contents: Data([1, 2, 3])))
        try store.replicate(to: replica)
        #expect(!FileManager.default.fileExists(atPath: stray))
        // The rewrites made dictionaries and retired some (the segment the hold keeps still names the first).
        #expect(try dictionaries(primary).count < 4 && dictionaries(primary).last != "0000000001.dict")
    }

    /// A replica's hold is listed with what it keeps from compaction (API and `logstore-tool history`) and
    /// removed by `forgetReplica`, after which compaction takes those segments.
    @Test func aReplicaHoldIsListedAndForgotten() throws {
        let directory = TemporaryStore("replica-forget")
        let (store, shared) = try CheckpointTests.seededStore(directory, background: false, batches: 3)
        let primary = directory.path + "/store"
        try store.replicate(to: directory.path + "/replica")
        for number in 3..<60 { try CheckpointTests.writeBatch(number, shared: shared, to: store) }
        let holds = try store.historyUsage().replicaHolds
        let hold = try #require(holds.first)
        #expect(holds.count == 1 && hold.name.hasPrefix("replica-") && hold.name.hasSuffix(".hold"))
        #expect(hold.segments > 2 && hold.bytes > 0 && hold.changedMilliseconds > 0)
        #expect(try Self.segmentNumbers(primary).filter { $0 >= hold.oldestSegment }.count == hold.segments)
        let listed = try ToolRunner.run(["history", primary])
        #expect(listed.status == 0 && listed.stdout.contains("replica hold \(hold.name)"), "\(listed.output)")
        let stats = try ToolRunner.run(["stats", primary])
        #expect(stats.status == 0 && stats.stdout.contains("replica hold \(hold.name)"), "\(stats.output)")
        #expect(try store.compact().segmentsHeld >= hold.segments - 1)
        try store.forgetReplica(hold.name)
        #expect(try store.historyUsage().replicaHolds.isEmpty)
        #expect(try store.compact().segmentsCompacted > 0)
        for name in [hold.name, "../store", "LOCK"] {
            #expect { try store.forgetReplica(name) } throws: { ($0 as? LogStoreError)?.code == .notFound }
        }
        // A forgotten replica is refused: the store may have compacted what it had not received.
        #expect { try store.replicate(to: directory.path + "/replica") } throws: {
            ($0 as? LogStoreError)?.code == .invalidArgument
        }
    }

    /// A store folder another process keeps `flock`ed (here: this test, on its own descriptor) does not stall
    /// a compaction pass or a replica pass for ever: after 10 s the compaction drops itself (its outputs
    /// deleted, its inputs kept) and the replica pass is refused with `locked`.
    @Test func aFolderLockedFromOutsideStallsNeitherCompactionNorAPassForEver() throws {
        let directory = TemporaryStore("replica-flocked")
        let (store, shared) = try CheckpointTests.seededStore(directory, background: false, batches: 1)
        let primary = directory.path + "/store"
        for number in 1..<80 { try CheckpointTests.writeBatch(number, shared: shared, to: store) }
        let before = try Self.segmentNumbers(primary)
        let fd = open(primary, O_RDONLY | O_DIRECTORY)
        #expect(fd >= 0 && flock(fd, LOCK_EX) == 0)
        let compaction = Mutex<CompactionReport?>(nil)
        let compactor = Thread { compaction.withLock { $0 = try? store.compact() } }
        compactor.start()
        #expect { try store.replicate(to: directory.path + "/replica") } throws: {
            ($0 as? LogStoreError)?.code == .locked
        }
        while !compactor.isFinished { usleep(10_000) }
        flock(fd, LOCK_UN)
        close(fd)
        let report = try #require(compaction.withLock { $0 })
        #expect(report.segmentsCompacted == 0)
        #expect(try Self.segmentNumbers(primary) == before, "inputs deleted or outputs left")
        #expect(try store.compact().segmentsCompacted > 0)
    }

    /// Without its hold (removed by hand), the store compacts away the segment the replica has a part of:
    /// the next pass refuses (the store kept no hold for it), and the replica stays as it was, readable.
    @Test func aReplicaWhosePartWasCompactedAwayIsRefusedAndLeftAsItWas() throws {
        let directory = TemporaryStore("replica-unheld")
        let (store, shared) = try CheckpointTests.seededStore(directory, background: false, batches: 3)
        let primary = directory.path + "/store"
        let replica = directory.path + "/replica"
        try store.replicate(to: replica)
        let partial = try #require(try Self.segmentNumbers(replica).max())
        for hold in try FileManager.default.contentsOfDirectory(atPath: primary + "/history")
        where hold.hasSuffix(".hold") {
            try FileManager.default.removeItem(atPath: primary + "/history/" + hold)
        }
        for number in 3..<80 { try CheckpointTests.writeBatch(number, shared: shared, to: store) }
        try store.compact()
        #expect(!(try Self.segmentNumbers(primary)).contains(partial), "the segment should have been compacted")
        func files() throws -> [String: Int] {
            var sizes: [String: Int] = [:]
            for name in try FileManager.default.contentsOfDirectory(atPath: replica) where name != "LOCK" {
                sizes[name] = try FileManager.default.attributesOfItem(atPath: replica + "/" + name)[.size] as? Int
            }
            return sizes
        }
        let before = try files()
        #expect { try store.replicate(to: replica) } throws: { error in
            let error = error as? LogStoreError
            return error?.code == .invalidArgument && error?.message.contains("keeps no hold for this replica") == true
        }
        #expect(try files() == before)
        #expect(try CheckpointTests.committedBatches(at: replica, shared: shared) == 2)
    }

    /// A pass from a read-only store whose view is older than the writer's (not refreshed, the writer has
    /// compacted since) ships the writer's newest state: the view moves on under the hold first, so nothing
    /// compacted before the hold existed is missed.
    @Test func aPassFromAStaleReadOnlyViewShipsTheNewestState() throws {
        let directory = TemporaryStore("replica-stale")
        let (store, shared) = try CheckpointTests.seededStore(directory, background: false, batches: 3)
        let follower = try Store.open(
            at: directory.path + "/store", options: StoreOptions(createIfMissing: false, readOnly: true))
        defer { try? follower.close() }
        for number in 3..<80 { try CheckpointTests.writeBatch(number, shared: shared, to: store) }
        #expect(try store.compact().segmentsCompacted > 0)
        let replica = directory.path + "/replica"
        let pass = try follower.replicate(to: replica)
        #expect(pass.sequence == (try store.snapshot().sequence))
        #expect(try CheckpointTests.committedBatches(at: replica, shared: shared) == 79)
    }

    /// A pass cut short at each write, sync, rename, unlink and open in turn (the call fails and the pass stops
    /// there, as a killed process would; its source is a read-only store beside the writer, so the faults
    /// touch only the pass): the replica still opens read-only at one commit, no older than the last whole
    /// pass, and the next pass brings it up to date. The writer writes and compacts between passes.
    @Test func aPassCutShortAtAnyCallLeavesAReplicaTheNextPassCompletes() throws {
        let directory = TemporaryStore("replica-interrupted")
        let (store, shared) = try CheckpointTests.seededStore(directory, background: false, batches: 5)
        let faults = FaultInjector()
        var options = StoreOptions(createIfMissing: false, readOnly: true)
        options.faultInjector = faults
        let follower = try Store.open(at: directory.path + "/store", options: options)
        defer { try? follower.close() }
        let replica = directory.path + "/replica"
        try follower.replicate(to: replica)
        var written = 5
        var cut: [FaultInjector.Operation: Int] = [:]
        for operation in [FaultInjector.Operation.write, .sync, .rename, .unlink, .open] {
            // The first call of that kind fails, then the second, ... until a pass makes fewer such calls.
            for after in 0..<60 {
                for _ in 0..<5 {
                    try CheckpointTests.writeBatch(written, shared: shared, to: store)
                    written += 1
                }
                try store.compact()
                let before = try CheckpointTests.committedBatches(at: replica, shared: shared)
                let callsBefore = faults.calls(operation)
                faults.inject(operation, .error(EIO), after: after)
                _ = Result { try follower.replicate(to: replica) }
                faults.clear()
                // The pass made at most `after` such calls: the fault never fired, every call was cut.
                let fired = faults.calls(operation) - callsBefore > after
                let seen = try CheckpointTests.committedBatches(at: replica, shared: shared)
                #expect(seen >= before && seen <= written - 1, "\(operation) after \(after): batch \(seen)")
                try follower.replicate(to: replica)
                #expect(try CheckpointTests.committedBatches(at: replica, shared: shared) == written - 1)
                guard fired else { break }
                cut[operation, default: 0] += 1
            }
        }
        // Every kind of call was cut at several points (a pass makes fewer unlinks than the others).
        print("replica passes cut short: \(cut)")
        #expect(cut.count == 5 && cut.values.allSatisfy { $0 >= 2 }, "\(cut)")
    }

    /// A writer in another process creates its next segment, then writes its header: a follower that lists
    /// the folder between the two sees an empty newest segment. A pass taking that state leaves the segment
    /// out (the replica never lists a segment that does not read) and holds the one before it instead.
    @Test func aSegmentItsWriterHasNotStartedIsLeftOut() throws {
        let directory = TemporaryStore("replica-unstarted")
        let (store, shared) = try CheckpointTests.seededStore(directory, background: false, batches: 1)
        var written = 1
        while try store.checkpointSource().segments.count < 2 {
            try CheckpointTests.writeBatch(written, shared: shared, to: store)
            written += 1
        }
        let source = try store.checkpointSource()
        let last = try #require(source.segments.last)
        var unstarted = source
        unstarted.segments[unstarted.segments.count - 1] = CheckpointSource.Segment(
            file: last.file, size: 0, isAppend: true, mayGrow: true, hintUsable: false)
        let trimmed = Store.withoutUnstartedSegment(unstarted)
        #expect(trimmed.segments.map(\.file.number) == source.segments.dropLast().map(\.file.number))
        #expect(trimmed.manifest.segments == source.manifest.segments.filter { $0 != last.file.number })
        let previous = try #require(trimmed.segments.last)
        #expect(previous.isAppend && previous.mayGrow && previous.size == source.segments[0].size)
        // A state whose newest segment has its header is left as it is.
        #expect(Store.withoutUnstartedSegment(source).segments.map(\.size) == source.segments.map(\.size))
    }

    /// A writer in a child process (`crash-writer`) is killed with SIGKILL while this process replicates
    /// its store every few milliseconds (open read-only, refreshed) and a second child (`replica-reader`)
    /// opens the replica again and again meanwhile, checking that each open is one whole commit and that none
    /// goes back; after the kill, a last pass ships every acknowledged commit and the replica, promoted, holds
    /// them all.
    @Test func aReplicaReadByAnotherProcessStaysConsistentWhileTheWriterIsKilled() throws {
        let directory = TemporaryStore("replica-crash")
        let primary = directory.path + "/primary"
        let replica = directory.path + "/replica"
        let child = try RunningTool(
            ["crash-writer", primary, "--seed", "5", "--segment-size", "\(1 << 16)", "--pause-microseconds", "300"],
            binary: .crashHarness)
        _ = child.waitForFirstLine(timeout: 60)
        let follower = try Store.open(at: primary, options: StoreOptions(createIfMissing: false, readOnly: true))
        try follower.replicate(to: replica)
        let reader = try RunningTool(["replica-reader", replica, "--seconds", "4"], binary: .crashHarness)
        var passes = 0
        let start = Date()
        while Date().timeIntervalSince(start) < 3 {
            try follower.refresh()
            try follower.replicate(to: replica)
            passes += 1
            usleep(5_000)
        }
        child.killNow()
        let result = child.finish()
        #expect(result.signaled, "the writer ended early: \(result.output)")
        try follower.refresh()
        let last = try follower.replicate(to: replica)
        try follower.close()
        let reading = reader.finish()
        print("replica crash test: \(passes) passes; the reading process: \(reading.output)")
        #expect(
            reading.status == 0 && reading.stdout.hasPrefix("reads "),
            "status \(reading.status), signaled \(reading.signaled): \(reading.output)")
        var lines = result.stdout.split(separator: "\n", omittingEmptySubsequences: false)
        lines.removeLast()
        let promoted = try Store.open(at: replica, options: testOptions(segmentSize: 1 << 16))
        #expect(try promoted.snapshot().sequence == last.sequence)
        let roots = try promoted.roots()
        for line in lines {
            let fields = line.split(separator: " ").compactMap { UInt64($0) }.map { ObjectID($0) }
            if line.hasPrefix("put "), let id = fields.first {
                #expect(try promoted.get(id) != nil, "acknowledged put \(id) missing from the replica")
            } else if line.hasPrefix("batch "), let manifest = fields.first {
                #expect(roots["batch-\(manifest)"] == manifest, "acknowledged batch \(manifest) missing")
                #expect(try promoted.get(manifest)?.references == Array(fields.dropFirst()))
            }
        }
        try promoted.close()
        #expect(passes > 20)
    }
}
