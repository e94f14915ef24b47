import Foundation
@_spi(Engine) import LogStoreSystem
import Synchronization
import TestSupport
import Testing

@testable @_spi(Testing) import LogStore

/// Plain reads (`get` and the other reads by id without a snapshot) go through a view kept per thread
/// (`PlainReadViews`): they must still see every batch published before they began, and the views must not
/// outlive a change of the index or the store.
@Suite struct PlainReadViewTests {
    /// A thread that read before a commit reads the commit's record after it, on the same thread and on
    /// another one, through every kind of plain read.
    @Test func aPlainReadSeesEveryBatchPublishedBeforeIt() throws {
        let directory = TemporaryStore("plain-views")
        let store = try directory.open(options: testOptions())
        let id = try store.put(typeTag: 1, payload: [1])
        #expect(try store.get(id)?.payload == [1])
        // Enough reads on both threads that their views count as lasting (see PlainReadViews).
        for _ in 0..<PlainReadViews.shortLivedServes { _ = try store.get(id) }
        #expect(
            try onAnotherThread { try (0..<PlainReadViews.shortLivedServes).map { _ in try store.get(id) } }.last??
                .payload == [1])
        try store.put(id, typeTag: 2, payload: [2])
        #expect(try store.get(id)?.payload == [2])
        #expect(try onAnotherThread { try store.get(id)?.payload } == [2])
        #expect(try store.header(of: id)?.typeTag == 2)
        #expect(try store.withPayload(of: id) { _, bytes in Array(bytes) } == [2])
        try store.delete(id)
        #expect(try store.get(id) == nil && !store.contains(id))
        #expect(try onAnotherThread { try store.contains(id) } == false)
        try store.close()
    }

    /// A view is used only while no hold has moved the generation on since it was made: one made before
    /// such a hold is neither used again nor kept (a hold that removes segments moves the generation on
    /// and lets the kept views go after the lock; a view kept in between would hold those segments).
    @Test func aViewMadeBeforeAGenerationMovedOnIsNeitherUsedNorKept() throws {
        let directory = TemporaryStore("plain-views-generation")
        let store = try directory.open(options: testOptions())
        _ = try store.put(typeTag: 1, payload: [1])
        let views = PlainReadViews()
        func make() -> PlainReadViews.Cached {
            PlainReadViews.Cached(view: store.state.withLock { $0.durableView() }, generation: views.currentGeneration)
        }
        let first = try #require(views.view(make))
        #expect(views.heldCount == 1)
        #expect(views.view(make) === first)
        // A hold that moved the generation on (and has not let the views go yet): the kept view is not used.
        views.advance()
        let second = try #require(views.view(make))
        #expect(second !== first)
        #expect(views.view(make) === second)
        // The same hold between a read's make and its keep: the view serves that read and is not kept.
        views.advance()
        let third = try #require(
            views.view { () -> PlainReadViews.Cached in
                let made = make()
                views.advance()
                views.release()
                return made
            })
        #expect(third !== second)
        #expect(views.heldCount == 0)
        try store.close()
    }

    /// Closing lets the views go, and a thread that had one is refused as every other.
    @Test func aClosedStoreRefusesThreadsThatHadAView() throws {
        let directory = TemporaryStore("plain-views-close")
        let store = try directory.open(options: testOptions())
        let id = try store.put(typeTag: 1, payload: [1])
        #expect(try store.get(id) != nil)
        #expect(store.plainReadViewsHeld == 1)
        try store.close()
        #expect(store.plainReadViewsHeld == 0)
        #expect(throws: LogStoreError.self) { try store.get(id) }
        #expect(throws: LogStoreError.self) { try store.contains(id) }
    }

    /// A commit lets the views go before it changes the index (so the index is changed in place, not
    /// copied), and so does a compaction pass that moves records or removes segments.
    @Test func viewsAreLetGoWhenTheIndexChanges() throws {
        let directory = TemporaryStore("plain-views-release")
        var options = testOptions(segmentSize: 1 << 16)
        options.compaction.background = false
        let store = try directory.open(options: options)
        var ids: [ObjectID] = []
        for index in 0..<2_000 {
            ids.append(try store.put(typeTag: 1, payload: (0..<100).map { UInt8(truncatingIfNeeded: $0 * 31 + index) }))
        }
        // Enough reads that the view counts as lasting (a view let go after few reads makes the thread
        // read without one for a while).
        for _ in 0..<PlainReadViews.shortLivedServes { #expect(try store.get(ids[0]) != nil) }
        #expect(store.plainReadViewsHeld == 1)
        try store.put(ids[0], typeTag: 1, payload: [7])
        #expect(store.plainReadViewsHeld == 0)
        for _ in 0..<PlainReadViews.shortLivedServes { #expect(try store.get(ids[1]) != nil) }
        #expect(store.plainReadViewsHeld == 1)
        for id in ids.dropFirst(20) { try store.delete(id) }
        #expect(store.plainReadViewsHeld == 0)
        for _ in 0..<PlainReadViews.shortLivedServes { #expect(try store.get(ids[1]) != nil) }
        #expect(store.plainReadViewsHeld == 1)
        try store.compact()
        #expect(store.plainReadViewsHeld == 0)
        #expect(try store.get(ids[0])?.payload == [7])
        #expect(try store.get(ids[1])?.payload == (0..<100).map { UInt8(truncatingIfNeeded: $0 * 31 + 1) })
        #expect(try store.get(ids[30]) == nil)
        try store.close()
    }

    /// A thread whose views serve few reads before a write lets them go reads under the index lock for a
    /// while (no view held), then tries a view again; every read sees the write before it either way.
    @Test func aThreadReadingBetweenWritesReadsWithoutAView() throws {
        let directory = TemporaryStore("plain-views-direct")
        let store = try directory.open(options: testOptions(fsync: .never))
        let id = try store.put(typeTag: 1, payload: [0])
        for round in 1...20 {
            try store.put(id, typeTag: 1, payload: [UInt8(round)])
            #expect(try store.get(id)?.payload == [UInt8(round)])
        }
        #expect(store.plainReadViewsHeld == 0)
        for _ in 0...PlainReadViews.directReads { #expect(try store.get(id)?.payload == [20]) }
        #expect(store.plainReadViewsHeld == 1)
        try store.close()
    }

    /// A store open read-only beside a writer: its plain reads see the batches a refresh applied, and a
    /// reload.
    @Test func aFollowersPlainReadsSeeWhatARefreshApplied() throws {
        let directory = TemporaryStore("plain-views-follower")
        var writerOptions = testOptions()
        writerOptions.compaction.background = false
        let writer = try directory.open(options: writerOptions)
        let id = try writer.put(typeTag: 1, payload: [1])
        var followerOptions = StoreOptions()
        followerOptions.readOnly = true
        followerOptions.createIfMissing = false
        let follower = try directory.open(options: followerOptions)
        #expect(try follower.get(id)?.payload == [1])
        try writer.put(id, typeTag: 1, payload: [2])
        #expect(try follower.get(id)?.payload == [1])
        _ = try follower.refresh()
        #expect(try follower.get(id)?.payload == [2])
        try follower.close()
        try writer.close()
    }

    /// Writers replace records while readers read them with plain gets on other threads: a get never returns
    /// an older version than the newest one committed before it began, and a thread never sees a record go
    /// back. Compaction passes run meanwhile. Printed seed.
    @Test func concurrentPlainReadsNeverGoBack() throws {
        let seed = testSeed("PlainReadViewTests", default: 0x9E4D)
        let directory = TemporaryStore("plain-views-race")
        var options = testOptions(segmentSize: 1 << 16, fsync: .never)
        options.compaction.background = false
        let store = try directory.open(options: options)
        let keys = 64
        var ids: [ObjectID] = []
        for _ in 0..<keys { ids.append(try store.put(typeTag: 1, payload: Self.payload(0))) }
        let frozenIDs = ids
        let committed = Shared([UInt64](repeating: 0, count: keys))
        let stop = Atomic<Bool>(false)
        let reads = Atomic<Int>(0)
        let failures = Shared<[String]>([])
        let group = ThreadGroup()
        group.start(3) { thread in
            var random = SplitMix64(seed: seed &+ UInt64(thread))
            if thread == 0 {
                var round: UInt64 = 0
                while !stop.load(ordering: .relaxed) {
                    round += 1
                    let key = Int(random.next() % UInt64(keys))
                    do {
                        try store.put(frozenIDs[key], typeTag: 1, payload: Self.payload(round))
                        committed.withLock { $0[key] = round }
                        if round % 500 == 0 { try store.compact() }
                    } catch {
                        failures.withLock { $0.append("write: \(error)") }
                        return
                    }
                }
                return
            }
            var seen = [UInt64](repeating: 0, count: keys)
            while !stop.load(ordering: .relaxed) {
                let key = Int(random.next() % UInt64(keys))
                let floor = committed.withLock { $0[key] }
                do {
                    guard let record = try store.get(frozenIDs[key]) else {
                        failures.withLock { $0.append("key \(key) missing") }
                        return
                    }
                    let round = Self.round(of: record.payload)
                    if round < floor || round < seen[key] {
                        failures.withLock {
                            $0.append("key \(key): read \(round), committed \(floor), seen \(seen[key])")
                        }
                        return
                    }
                    seen[key] = round
                    reads.add(1, ordering: .relaxed)
                } catch {
                    failures.withLock { $0.append("read: \(error)") }
                    return
                }
            }
        }
        group.run(until: { reads.load(ordering: .relaxed) > 200_000 }, thenStop: stop)
        #expect(failures.withLock { $0 } == [], "seed \(seed)")
        #expect(reads.load(ordering: .relaxed) > 0)
        try store.close()
    }

    /// Runs `body` on a thread of its own (a `DispatchQueue.sync` would run it on the calling thread) and
    /// returns what it returns.
    private func onAnotherThread<Result: Sendable>(_ body: @escaping @Sendable () throws -> Result) throws -> Result {
        let outcome = Shared<Result?>(nil)
        let failure = Shared<String?>(nil)
        let group = ThreadGroup()
        group.start(1) { _ in
            do {
                let result = try body()
                outcome.withLock { $0 = result }
            } catch {
                failure.withLock { $0 = "\(error)" }
            }
        }
        group.join()
        if let message = failure.withLock({ $0 }) { throw PlainReadTestError(message: message) }
        return try #require(outcome.withLock { $0 })
    }

    private static func payload(_ round: UInt64) -> [UInt8] {
        withUnsafeBytes(of: round.littleEndian) { Array($0) } + Array(repeating: 0xAB, count: 24)
    }

    private static func round(of payload: [UInt8]) -> UInt64 {
        payload.prefix(8).reversed().reduce(0) { $0 << 8 | UInt64($1) }
    }
}

struct PlainReadTestError: Error {
    let message: String
}
