import Testing

@testable import LogStore

/// A batch description holds one written object inline and anything else in a shared box: both read and
/// change the same way.
@Suite struct CommittedBatchTests {
    let first = ObjectChange(id: ObjectID(7), typeTag: 1)
    let second = ObjectChange(id: ObjectID(8), typeTag: 2)

    @Test func aSinglePutIsHeldInlineAndReadsLikeAnyOther() {
        let single = CommittedBatch(sequence: 3, written: [first])
        guard case .oneWritten(let change) = single.contents else {
            Issue.record("a batch of one put should hold it inline")
            return
        }
        #expect(change == first)
        #expect(single.written == [first])
        #expect(Array(single.written) == [first])
        #expect(single.written.count == 1 && single.deleted.isEmpty && single.freed.isEmpty)
        #expect(single.rootsSet.isEmpty && single.rootsRemoved.isEmpty)
        #expect(single.touches(first.id) && !single.touches(second.id))
        #expect(single.changedIDs == [first.id])
        #expect(single == CommittedBatch(sequence: 3, written: ObjectChanges([first])))
        #expect(single != CommittedBatch(sequence: 4, written: [first]))
    }

    @Test func changingAListKeepsTheOthers() {
        var batch = CommittedBatch(sequence: 5, written: [first])
        batch.freed = [second]
        #expect(batch.written == [first] && batch.freed == [second])
        batch.rootsSet = [RootChange(name: "main", target: first.id)]
        batch.written = [first, second]
        #expect(batch.written == [first, second] && batch.freed == [second])
        #expect(batch.rootsSet == [RootChange(name: "main", target: first.id)])
        batch.freed = []
        batch.rootsSet = []
        batch.written = [second]
        guard case .oneWritten = batch.contents else {
            Issue.record("back to one put: inline again")
            return
        }
        #expect(batch == CommittedBatch(sequence: 5, written: [second]))
    }

    @Test func objectChangesCompareByTheirObjects() {
        let inline = CommittedBatch(sequence: 1, written: [first]).written
        let boxed = ObjectChanges([first])
        #expect(inline == boxed)
        #expect(inline.hashValue == boxed.hashValue)
        #expect(inline.description == [first].description)
        #expect(ObjectChanges() == [] && ObjectChanges().isEmpty)
        #expect(ObjectChanges([first, second]).map(\.id) == [first.id, second.id])
    }
}

/// The change log's answer when the store went back to an older batch: only an observer that was given a
/// batch after it hears `.rewound`, once, from the lowest point the store went back to.
@Suite struct ChangeLogRewindTests {
    func log(through newest: UInt64) -> ChangeLog {
        let log = ChangeLog(after: 0, limit: 1_000)
        log.publish((1...newest).map { CommittedBatch(sequence: $0) })
        return log
    }

    @Test func onlyObserversPastThePointHearThatTheStoreWentBack() {
        let log = log(through: 10)
        let epoch = log.epoch
        log.reloaded(at: 6).resume()
        // Given batch 8: it hears, and goes on from 6.
        let ahead = log.changesNewestFirst(after: 8, epoch: epoch, limit: 10)
        #expect(ahead.changes == [.rewound(to: 6)] && ahead.cursor == 6 && ahead.epoch == log.epoch)
        // Given batch 4 only: nothing it saw is gone; it missed 5 and 6.
        let behind = log.changesNewestFirst(after: 4, epoch: epoch, limit: 10)
        #expect(behind.changes == [.missed(after: 4, through: 6)])
        // Made after the rewind: nothing to say until a batch comes.
        #expect(log.changesNewestFirst(after: 6, epoch: log.epoch, limit: 10).changes.isEmpty)
        log.publish([CommittedBatch(sequence: 7, written: [ObjectChange(id: ObjectID(1), typeTag: 1)])])
        let next = log.changesNewestFirst(after: ahead.cursor, epoch: ahead.epoch, limit: 10)
        #expect(next.changes.map(\.sequence) == [7])
    }

    /// An observer that read in the epoch before a rewind and only then waits is not left waiting.
    @Test func aWaitAfterARewindReturnsAtOnce() async {
        let log = log(through: 10)
        let epoch = log.epoch
        log.reloaded(at: 6).resume()
        await log.wait(after: 10, epoch: epoch)
        #expect(log.changesNewestFirst(after: 10, epoch: epoch, limit: 10).changes == [.rewound(to: 6)])
    }

    @Test func twoRewindsAreOneFromTheLowestPoint() {
        let log = log(through: 10)
        let epoch = log.epoch
        log.reloaded(at: 7).resume()
        log.publish([CommittedBatch(sequence: 8)])
        log.reloaded(at: 5).resume()
        let read = log.changesNewestFirst(after: 9, epoch: epoch, limit: 10)
        #expect(read.changes == [.rewound(to: 5)])
        // A newer load that finds more batches is no rewind.
        log.reloaded(at: 12).resume()
        let later = log.changesNewestFirst(after: read.cursor, epoch: read.epoch, limit: 10)
        #expect(later.changes == [.missed(after: 5, through: 12)])
    }
}
