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
