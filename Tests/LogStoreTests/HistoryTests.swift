import Foundation
import LogStoreExamples
import TestSupport
import Testing

@testable @_spi(Testing) import LogStore

/// Retained moments: each reads back exactly (records and roots) after overwrites, deletes, mark-sweep,
/// compaction, a full rewrite and a reopen; changes between moments; listing, costs and release; names;
/// the retention policy; a writer killed while it retains (in `HistoryCrashTests`).
@Suite struct HistoryTests {
    static var options: StoreOptions {
        var options = StoreOptions(segmentSize: LogStoreLimits.minSegmentSize)
        options.compaction.background = false
        return options
    }

    /// Every record and root of `store`.
    static func contents(_ store: Store) throws -> (records: [ObjectID: Record], roots: [String: ObjectID]) {
        var records: [ObjectID: Record] = [:]
        for id in try store.ids() { records[id] = try store.get(id) }
        return (records, try store.roots())
    }

    /// Every record and root of the moment `name` of the store in `directory`.
    static func moment(_ name: String, in directory: String) throws -> (
        records: [ObjectID: Record], roots: [String: ObjectID]
    ) {
        let store = try Store.open(at: directory, retained: name)
        defer { try? store.close() }
        return try contents(store)
    }

    /// A seeded workload step: puts of new objects referring to older ones, overwrites, deletes of objects
    /// nothing refers to, unpinned garbage, root changes.
    static func churn(_ store: Store, _ random: inout SplitMix64, steps: Int) throws {
        for _ in 0..<steps {
            let ids = try store.ids()
            switch random.next() % 5 {
            case 0, 1:
                let references = ids.isEmpty ? [] : [ids[Int(random.next() % UInt64(ids.count))]]
                let payload = (0..<(200 + Int(random.next() % 800))).map { _ in UInt8(truncatingIfNeeded: random.next())
                }
                try store.put(typeTag: 1, references: references, payload: payload)
            case 2 where !ids.isEmpty:
                let id = ids[Int(random.next() % UInt64(ids.count))]
                let old = try #require(try store.get(id))
                try store.put(
                    id, typeTag: old.typeTag, references: old.references, payload: Array("v\(random.next())".utf8))
            case 3 where !ids.isEmpty:
                let id = ids[Int(random.next() % UInt64(ids.count))]
                let deleted = Result { () throws(LogStoreError) in try store.delete(id) }
                if case .failure(let error) = deleted, error.code != .stillReferenced { throw error }
            case 4:
                // Garbage for mark-sweep: an unpinned object nothing refers to.
                try store.put(typeTag: 2, payload: [1, 2, 3], pinned: false)
                if let id = ids.last { try store.setRoot("root-\(random.next() % 3)", to: id) }
            default:
                continue
            }
        }
    }

    @Test func momentsReadBackExactlyAfterCompactionMarkSweepAndReopen() throws {
        let directory = TemporaryStore("history-exact")
        let seed = UInt64.random(in: 0...UInt64.max)
        print("HistoryTests seed \(seed)")
        var random = SplitMix64(seed: seed)
        let store = try Store.open(at: directory.path, options: Self.options)
        var expected: [String: (records: [ObjectID: Record], roots: [String: ObjectID])] = [:]
        var sequences: [String: UInt64] = [:]
        for round in 0..<6 {
            try Self.churn(store, &random, steps: 150)
            let name = "round-\(round)"
            let moment = try store.retain(as: name)
            expected[name] = try Self.contents(store)
            sequences[name] = moment.sequence
            #expect(moment.sequence == (try store.snapshot().sequence), "seed \(seed)")
            // The store goes on: mark-sweep, compaction, and a full rewrite now and then.
            try store.collectGarbage()
            _ = try store.compact()
            if round % 2 == 1 { _ = try store.rewriteAllSegments() }
        }
        for (name, contents) in expected {
            let read = try Self.moment(name, in: directory.path)
            #expect(read.records == contents.records, "seed \(seed): \(name)")
            #expect(read.roots == contents.roots, "seed \(seed): \(name)")
        }
        try store.close()
        let reopened = try Store.open(at: directory.path, options: Self.options)
        _ = try reopened.rewriteAllSegments()
        try reopened.collectGarbage()
        let usage = try reopened.historyUsage()
        #expect(usage.moments.map(\.name) == (0..<6).map { "round-\($0)" }, "seed \(seed)")
        #expect(usage.moments.map(\.sequence) == (0..<6).map { sequences["round-\($0)"] ?? 0 })
        // After the rewrite, every moment holds files the store no longer has.
        #expect(usage.moments.allSatisfy { $0.bytesNotInStore > 0 } && usage.bytes > 0, "\(usage)")
        try reopened.close()
        for (name, contents) in expected {
            let read = try Self.moment(name, in: directory.path)
            #expect(read.records == contents.records && read.roots == contents.roots, "seed \(seed): \(name)")
            #expect(try Store.verify(at: directory.path + "/history/" + name).isSound, "seed \(seed): \(name)")
        }
    }

    @Test func changesBetweenMomentsAndSinceOne() throws {
        let directory = TemporaryStore("history-changes")
        let store = try Store.open(at: directory.path, options: Self.options)
        let kept = try store.put(typeTag: 1, payload: [1])
        let changed = try store.put(typeTag: 1, payload: [2])
        let removed = try store.put(typeTag: 1, payload: [3])
        try store.setRoot("main", to: kept)
        try store.setRoot("old", to: kept)
        try store.retain(as: "before")
        try store.put(changed, typeTag: 1, payload: [22])
        try store.delete(removed)
        let added = try store.put(typeTag: 1, payload: [4])
        try store.setRoot("main", to: added)
        try store.removeRoot("old")
        _ = try store.compact()
        try store.retain(as: "after")

        let expected = StoreDifference(
            added: [added], changed: [changed], removed: [removed], rootsSet: ["main": added], rootsRemoved: ["old"])
        #expect(try store.changes(since: "before") == expected)
        let before = try Store.open(at: directory.path, retained: "before")
        let after = try Store.open(at: directory.path, retained: "after")
        #expect(Store.changes(from: try before.snapshot(), to: try after.snapshot()) == expected)
        #expect(Store.changes(from: try after.snapshot(), to: try before.snapshot()).added == [removed])
        #expect(try store.changes(since: "after").isEmpty)
        try before.close()
        try after.close()
        try store.close()
    }

    @Test func listingCostsAndRelease() throws {
        let directory = TemporaryStore("history-release")
        let store = try Store.open(at: directory.path, options: Self.options)
        var random = SplitMix64(seed: 3)
        try Self.churn(store, &random, steps: 200)
        try store.retain(as: "first")
        #expect(try store.historyUsage().bytes < 1 << 16, "a new moment costs at most the tail it copied")
        try Self.churn(store, &random, steps: 200)
        _ = try store.rewriteAllSegments()
        try store.retain(as: "second")
        let usage = try store.historyUsage()
        #expect(usage.moments.map(\.name) == ["first", "second"])
        let first = try #require(usage.moments.first)
        #expect(first.bytesNotInStore > 0 && first.bytesNotInStore <= first.bytes)

        // Names: invalid ones, a second moment of one name, a moment that is not there.
        for name in ["", ".hidden", "a/b", "x.partial", "y.releasing", String(repeating: "n", count: 129), "LOCK"] {
            #expect(throws: LogStoreError.self, "\(name)") { try store.retain(as: name) }
        }
        #expect { try store.retain(as: "first") } throws: { ($0 as? LogStoreError)?.code == .invalidArgument }
        #expect { try store.release("absent") } throws: { ($0 as? LogStoreError)?.code == .notFound }
        #expect { _ = try Store.open(at: directory.path, retained: "absent") } throws: {
            ($0 as? LogStoreError)?.code == .notFound
        }

        try store.release("first")
        let after = try store.historyUsage()
        #expect(after.moments.map(\.name) == ["second"])
        #expect(after.bytes < usage.bytes)
        #expect(!FileManager.default.fileExists(atPath: directory.path + "/history/first"))
        // A moment's name can be used again once released.
        try store.retain(as: "first")
        try store.close()

        // A store open read-only cannot retain or release; it can list and open moments.
        let readOnly = try Store.open(at: directory.path, options: StoreOptions(createIfMissing: false, readOnly: true))
        #expect { try readOnly.retain(as: "third") } throws: { ($0 as? LogStoreError)?.code == .readOnly }
        #expect { try readOnly.release("second") } throws: { ($0 as? LogStoreError)?.code == .readOnly }
        #expect(try readOnly.historyUsage().moments.count == 2)
        try readOnly.close()
    }

    @Test func compactionLeavesHeldSegmentsAloneUntilReleased() throws {
        let directory = TemporaryStore("history-held")
        let store = try Store.open(at: directory.path, options: Self.options)
        var random = SplitMix64(seed: 5)
        try Self.churn(store, &random, steps: 300)
        let moment = try store.retain(as: "held")
        // Overwrite everything: every segment the moment holds is now mostly garbage.
        for id in try store.ids() {
            let old = try #require(try store.get(id))
            try store.put(id, typeTag: old.typeTag, references: old.references, payload: Array("new".utf8))
        }
        let pass = try store.compact()
        #expect(pass.segmentsHeld > 0, "\(pass)")
        // The moment's segments are still the store's: compacting them would have freed nothing.
        let held = try #require(try store.historyUsage().moments.first)
        #expect(held.bytesNotInStore == moment.bytesNotInStore, "\(held)")
        let before = try store.statistics().totalBytes
        try store.release("held")
        _ = try store.compact()
        #expect(try store.statistics().totalBytes < before / 2)
        try store.close()
    }

    @Test func aMomentIsNeverWrittenTo() throws {
        let directory = TemporaryStore("history-read-only")
        let store = try Store.open(at: directory.path, options: Self.options)
        try store.put(typeTag: 1, payload: [1])
        try store.retain(as: "kept")
        // An open for writing of the moment's folder is refused, naming its MOMENT file.
        #expect { _ = try Store.open(at: directory.path + "/history/kept", options: Self.options) } throws: { error in
            guard let error = error as? LogStoreError else { return false }
            return error.code == .invalidArgument && error.file?.hasSuffix("history/kept/MOMENT") == true
        }
        // A folder holding another file is not released (nor renamed), and other retains go on.
        try Data("notes".utf8).write(to: URL(fileURLWithPath: directory.path + "/history/kept/notes.txt"))
        #expect { try store.release("kept") } throws: { ($0 as? LogStoreError)?.code == .invalidArgument }
        #expect(FileManager.default.fileExists(atPath: directory.path + "/history/kept/MOMENT"))
        try store.retain(as: "next")
        #expect(try store.historyUsage().moments.map(\.name) == ["kept", "next"])
        try FileManager.default.removeItem(atPath: directory.path + "/history/kept/notes.txt")
        try store.release("kept")
        try store.close()
    }

    @Test func anInterruptedRetainOrReleaseIsCleanedUp() throws {
        let directory = TemporaryStore("history-leftovers")
        let store = try Store.open(at: directory.path, options: Self.options)
        try store.put(typeTag: 1, payload: [1])
        try store.retain(as: "kept")
        // What a crash leaves: a moment half made, and one half released.
        let partial = try Store.open(at: directory.path + "/history/half.partial", options: Self.options)
        try partial.put(typeTag: 1, payload: [9])
        try partial.close()
        try FileManager.default.copyItem(
            atPath: directory.path + "/history/kept", toPath: directory.path + "/history/gone.releasing")
        #expect(try store.historyUsage().moments.map(\.name) == ["kept"])
        try store.retain(as: "next")
        let names = try FileManager.default.contentsOfDirectory(atPath: directory.path + "/history").sorted()
        #expect(names == ["LOCK", "kept", "next"], "\(names)")
        try store.close()
    }

    @Test func theRetentionPolicyKeepsTheNewestOfEachWindow() {
        let hour: UInt64 = 3_600_000
        let day = 24 * hour
        let now = 100 * day
        func moment(_ name: String, _ age: UInt64) -> RetainedMoment {
            RetainedMoment(
                name: name, sequence: now - age, createdMilliseconds: now - age, segments: 1, bytes: 0,
                bytesNotInStore: 0)
        }
        // Two per hour over the last 3 hours, two per day over the 3 days before, and a manual one.
        let moments = [
            moment("auto-h0a", 10 * 60_000), moment("auto-h0b", 5 * 60_000),
            moment("auto-h1a", hour + 40 * 60_000), moment("auto-h1b", hour + 30 * 60_000),
            moment("auto-h2a", 2 * hour + 50 * 60_000), moment("auto-h2b", 2 * hour + 45 * 60_000),
            moment("auto-d1a", day + 5 * hour), moment("auto-d1b", day + 4 * hour),
            moment("auto-d2a", 2 * day + 5 * hour), moment("auto-d2b", 2 * day + 4 * hour),
            moment("manual", 3 * day),
        ]
        func released(_ policy: RetentionPolicy) -> [String] {
            policy.momentsToRelease(moments.shuffled(), nowMilliseconds: now).map(\.name)
        }
        #expect(released(RetentionPolicy(keepLast: 2, namePrefix: "auto-")).count == 8)
        #expect(!released(RetentionPolicy(keepLast: 2, namePrefix: "auto-")).contains("manual"))
        // `now` is midnight (UTC) of day 100: the "h" moments are in the last hours of day 99.
        // Hourly for 3 hours keeps the newest of hours 23 and 22 (hour 21 began 3 hours ago), plus the newest.
        #expect(
            Set(released(RetentionPolicy(keepLast: 1, hourlyFor: .seconds(3 * 3_600), namePrefix: "auto-")))
                == ["auto-h0a", "auto-h1a", "auto-h2a", "auto-h2b", "auto-d1a", "auto-d1b", "auto-d2a", "auto-d2b"])
        // Daily for 3 days keeps the newest of days 99 and 98 (day 97 began 3 days ago).
        #expect(
            Set(released(RetentionPolicy(dailyFor: .seconds(3 * 86_400), namePrefix: "auto-")))
                == ["auto-h0a", "auto-h1a", "auto-h1b", "auto-h2a", "auto-h2b", "auto-d1a", "auto-d2a", "auto-d2b"])
        #expect(released(RetentionPolicy()).count == moments.count)
        // "Forever" does not overflow; a moment dated after now (a clock set back) counts as now.
        // Every day's newest kept: days 99, 98 and 97.
        #expect(released(RetentionPolicy(dailyFor: .seconds(Int64.max), namePrefix: "auto-")).count == 7)
        let future = RetainedMoment(
            name: "auto-future", sequence: now + 1, createdMilliseconds: now + 5 * day, segments: 1, bytes: 0,
            bytesNotInStore: 0)
        let newest = RetentionPolicy(keepLast: 1, namePrefix: "auto-").momentsToRelease(
            moments + [future], nowMilliseconds: now)
        #expect(!newest.map(\.name).contains("auto-future") && newest.count == 10)
    }

    @Test func applyRetentionReleasesWhatThePolicyDoesNotKeep() throws {
        let directory = TemporaryStore("history-policy")
        let store = try Store.open(at: directory.path, options: Self.options)
        for index in 0..<4 {
            try store.put(typeTag: 1, payload: [UInt8(index)])
            try store.retain(as: "auto-\(index)")
        }
        try store.retain(as: "manual")
        let released = try store.applyRetention(RetentionPolicy(keepLast: 2, namePrefix: "auto-"))
        #expect(released.map(\.name) == ["auto-0", "auto-1"])
        #expect(try store.historyUsage().moments.map(\.name) == ["auto-2", "auto-3", "manual"])
        try store.close()
    }
}
