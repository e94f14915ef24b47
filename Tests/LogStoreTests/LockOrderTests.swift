import Foundation
@_spi(Engine) import LogStoreSystem
import TestSupport
import Testing

@testable @_spi(Testing) import LogStore

/// The engine's lock order (`LockRank`): locks taken in order pass, a lock taken against it stops a debug
/// build (in a child process: a Swift Testing exit test) naming both locks, and waits keep each thread's
/// stack of held ranks right.
@Suite struct LockOrderTests {
    #if DEBUG
        @Test func locksTakenInTheOrderPass() {
            let compaction = RankedMutex((), rank: .compaction)
            let queue = ConditionLock(0, rank: .queue)
            let manifest = RankedMutex((), rank: .manifest)
            let index = ConditionLock(0, rank: .index)
            let nextID = ConditionLock(0, rank: .nextID)
            let prefill = RankedMutex((), rank: .prefill)
            let leaf = ConditionLock(0, rank: .faultInjector)
            compaction.withLock { _ in
                queue.withLock { _ in
                    manifest.withLock { _ in
                        index.withLock { _ in
                            nextID.withLock { _ in
                                prefill.withLock { _ in
                                    leaf.withLock { _ in
                                        #expect(
                                            LockRankChecker.heldRanks == [
                                                .compaction, .queue, .manifest, .index, .nextID, .prefill,
                                                .faultInjector,
                                            ])
                                    }
                                }
                            }
                        }
                    }
                }
            }
            // Skipping ranks is in order too, and so is taking locks one after the other in any order.
            compaction.withLock { _ in index.withLock { _ in leaf.withLock { _ in } } }
            nextID.withLock { _ in }
            queue.withLock { _ in }
            #expect(LockRankChecker.heldRanks.isEmpty)
        }

        /// Locks without a rank (the object layer's, a test's) are not checked, inside ranked ones or around them.
        @Test func unrankedLocksAreNotChecked() {
            let unranked = ConditionLock(0)
            let index = ConditionLock(0, rank: .index)
            let queue = ConditionLock(0, rank: .queue)
            index.withLock { _ in unranked.withLock { _ in #expect(LockRankChecker.heldRanks == [.index]) } }
            unranked.withLock { _ in queue.withLock { _ in index.withLock { _ in } } }
            #expect(LockRankChecker.heldRanks.isEmpty)
        }

        @Test func aLockThatThrowsIsReleasedFromTheStack() {
            struct Refused: Error {}
            let queue = ConditionLock(0, rank: .queue)
            let manifest = RankedMutex((), rank: .manifest)
            #expect(throws: Refused.self) {
                try queue.withLock { _ throws(Refused) in
                    try manifest.withLock { _ throws(Refused) in throw Refused() }
                }
            }
            #expect(LockRankChecker.heldRanks.isEmpty)
        }

        /// Each thread has a stack of its own: a lock another thread holds does not count.
        @Test func eachThreadHasItsOwnStack() {
            let nextID = ConditionLock(0, rank: .nextID)
            let queue = ConditionLock(0, rank: .queue)
            let seen = ConditionLock<[LockRank]?>(nil)
            nextID.withLock { _ in
                let thread = Thread {
                    queue.withLock { _ in
                        let held = LockRankChecker.heldRanks
                        seen.withLock { $0 = held }
                    }
                    seen.broadcast()
                }
                thread.start()
                let held = seen.waitUntil { $0 }
                #expect(held == [.queue])
                #expect(LockRankChecker.heldRanks == [.nextID])
            }
        }

        /// A wait releases the mutex and takes it again; the rank is held for each call of `check` and
        /// gone once the wait returns, so a lock earlier in the order may be taken then.
        @Test func aWaitHoldsItsRankUntilItReturns() {
            let compaction = RankedMutex((), rank: .compaction)
            let queue = ConditionLock(false, rank: .queue)
            var seen: [[LockRank]] = []
            compaction.withLock { _ in
                _ = queue.waitUntil { ready -> Bool? in
                    seen.append(LockRankChecker.heldRanks)
                    if seen.count == 1 {
                        // Blocks on the mutex until this thread waits; then wakes it.
                        let thread = Thread {
                            queue.withLock { $0 = true }
                            queue.broadcast()
                        }
                        thread.start()
                    }
                    return ready ? true : nil
                }
                #expect(LockRankChecker.heldRanks == [.compaction])
            }
            #expect(seen.count >= 2, "the check ran again after a wait")
            #expect(seen.allSatisfy { $0 == [.compaction, .queue] })
            #expect(LockRankChecker.heldRanks.isEmpty)

            let index = ConditionLock(true, rank: .index)
            _ = index.waitUntil { $0 ? true : nil }
            queue.withLock { _ in }  // earlier in the order than the index lock: fine once the wait returned
            #expect(LockRankChecker.heldRanks.isEmpty)
        }

        @Test func aTimedWaitHoldsItsRankUntilItReturns() {
            let queue = ConditionLock(false, rank: .queue)
            // Timing out.
            var seen: [[LockRank]] = []
            let deadline = SystemClock.monotonicNanoseconds() + 20_000_000
            let timedOut: Bool? = queue.waitUntil(deadline: deadline) { _ -> Bool? in
                seen.append(LockRankChecker.heldRanks)
                return nil
            }
            #expect(timedOut == nil)
            #expect(!seen.isEmpty && seen.allSatisfy { $0 == [.queue] })
            #expect(LockRankChecker.heldRanks.isEmpty)

            // Woken by `signalTimed()`.
            seen = []
            let woken = queue.waitUntil(deadline: SystemClock.monotonicNanoseconds() + 30_000_000_000) {
                ready -> Bool? in
                seen.append(LockRankChecker.heldRanks)
                if seen.count == 1 {
                    let thread = Thread {
                        queue.withLock { $0 = true }
                        queue.signalTimed()
                    }
                    thread.start()
                }
                return ready ? true : nil
            }
            #expect(woken == true)
            #expect(seen.count >= 2 && seen.allSatisfy { $0 == [.queue] })
            #expect(LockRankChecker.heldRanks.isEmpty)
        }

        /// The engine's own paths, in one thread: writes, a dictionary install (queue → manifest → index
        /// → nextID), compaction (compaction → queue → index), hints, collection, statistics and close.
        @Test func theEngineTakesItsLocksInOrder() throws {
            let directory = TemporaryStore("lock-order")
            var options = testOptions(segmentSize: 1 << 16)
            options.compaction.background = false
            let store = try directory.open(options: options)
            var ids: [ObjectID] = []
            // Enough payload bytes for the dictionary sample: a commit installs the shared dictionary.
            for index in 0..<800 {
                let id = try store.put(typeTag: 1, payload: payloadBytes(300 + index % 500, seed: UInt64(index)))
                ids.append(id)
            }
            #expect(store.state.withLock { !$0.dictionaries.isEmpty })
            for id in ids.prefix(400) { try store.delete(id) }
            try store.compact()
            try store.writeHints()
            _ = try store.collectGarbage()
            _ = try store.statistics()
            try store.close()
            #expect(LockRankChecker.heldRanks.isEmpty)
        }

        // MARK: - Violations stop the process

        @Test func aLockTakenAgainstTheOrderStopsTheProcess() async {
            let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
                let index = ConditionLock(0, rank: .index)
                let queue = ConditionLock(0, rank: .queue)
                index.withLock { _ in queue.withLock { _ in } }
            }
            let message = Self.message(result)
            #expect(message.contains("lock order violated"))
            #expect(message.contains("taking \(LockRank.queue)"), "names the lock taken")
            #expect(message.contains("holds \(LockRank.index)"), "names the lock held")
        }

        @Test func twoLocksOfOneRankStopTheProcess() async {
            let same = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
                let first = ConditionLock(0, rank: .index)
                let second = ConditionLock(0, rank: .index)
                first.withLock { _ in second.withLock { _ in } }
            }
            #expect(Self.message(same).contains("holds \(LockRank.index), rank 4, of the same rank"))
            // Leaf locks share their rank: no leaf is taken under another.
            let leaves = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
                let filler = ConditionLock(0, rank: .pageCacheFiller)
                let faults = ConditionLock(0, rank: .faultInjector)
                filler.withLock { _ in faults.withLock { _ in } }
            }
            #expect(Self.message(leaves).contains("taking \(LockRank.faultInjector)"))
            #expect(Self.message(leaves).contains("holds \(LockRank.pageCacheFiller)"))
        }

        @Test func aRankedMutexTakenAgainstTheOrderStopsTheProcess() async {
            let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
                let queue = ConditionLock(0, rank: .queue)
                let compaction = RankedMutex((), rank: .compaction)
                queue.withLock { _ in compaction.withLock { _ in } }
            }
            let message = Self.message(result)
            #expect(message.contains("taking \(LockRank.compaction)"))
            #expect(message.contains("holds \(LockRank.queue)"))
        }

        /// A wait and a broadcast take the mutex too: both are checked.
        @Test func waitsAndBroadcastsAreChecked() async {
            let wait = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
                let nextID = ConditionLock(0, rank: .nextID)
                let queue = ConditionLock(true, rank: .queue)
                nextID.withLock { _ in _ = queue.waitUntil { $0 ? true : nil } }
            }
            let timedWait = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
                let nextID = ConditionLock(0, rank: .nextID)
                let queue = ConditionLock(true, rank: .queue)
                nextID.withLock { _ in _ = queue.waitUntil(deadline: 0) { _ -> Bool? in nil } }
            }
            let broadcast = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
                let nextID = ConditionLock(0, rank: .nextID)
                let queue = ConditionLock(0, rank: .queue)
                nextID.withLock { _ in queue.broadcast() }
            }
            for result in [wait, timedWait, broadcast] {
                #expect(Self.message(result).contains("taking \(LockRank.queue), rank 2, while this thread holds"))
            }
        }

        /// The store's own locks are ranked: a put from under its index lock (which the put takes again,
        /// and whose commit takes the queue lock, earlier in the order) stops the process instead of
        /// deadlocking on its own thread.
        @Test func aPutUnderTheStoresIndexLockStopsTheProcess() async {
            let directory = TemporaryStore("lock-order-index", unverifiedBecause: "the child process dies")
            let path = directory.path
            let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
                [path = path as String] in
                let store = try Store.open(at: path, options: StoreOptions(segmentSize: 1 << 16))
                store.state.withLock { _ in _ = try? store.put(typeTag: 1, payload: [1, 2, 3]) }
            }
            #expect(Self.message(result).contains("taking \(LockRank.index), rank 4, while this thread holds"))
            #expect(Self.message(result).contains("holds \(LockRank.index), rank 4, of the same rank"))
        }

        /// Compacting from a compaction's progress callback would wait for the compaction lock its own
        /// thread holds: the check stops it instead of the deadlock.
        @Test func compactingFromTheProgressCallbackStopsTheProcess() async {
            let directory = TemporaryStore("lock-order-reentry", unverifiedBecause: "the child process dies mid-pass")
            let path = directory.path
            let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
                [path = path as String] in
                var options = StoreOptions(segmentSize: 1 << 16)
                options.compaction.background = false
                let store = try Store.open(at: path, options: options)
                var ids: [ObjectID] = []
                for index in 0..<100 {
                    ids.append(try store.put(typeTag: 1, payload: Array(repeating: 7, count: index)))
                }
                for id in ids.prefix(50) { try store.delete(id) }
                try store.compact { _ in _ = try? store.compact() }
            }
            let message = Self.message(result)
            #expect(message.contains("taking \(LockRank.compaction)"))
            #expect(message.contains("holds \(LockRank.compaction)"))
        }

        /// What a child process that stopped printed to its standard error.
        static func message(_ result: ExitTest.Result?) -> String {
            String(decoding: result?.standardErrorContent ?? [], as: UTF8.self)
        }
    #else
        /// Release builds check nothing: a wrong order of two locks (harmless on one thread) just runs.
        @Test func releaseBuildsDoNotCheck() {
            let index = ConditionLock(0, rank: .index)
            let queue = ConditionLock(0, rank: .queue)
            let taken = index.withLock { _ in queue.withLock { _ in true } }
            #expect(taken)
        }
    #endif
}
