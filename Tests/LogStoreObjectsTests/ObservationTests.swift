import Foundation
import LogStore
import LogStoreObjects
import Synchronization
import TestSupport
import Testing

/// Observing objects: fresh values now and after each committed batch that concerns them, read in one
/// snapshot, coalesced when the observer is slow, ending with the store.
@Suite struct ObservationTests {
    @Test func observingATypeYieldsItsObjectsAfterEachChangeToThem() async throws {
        let directory = TemporaryStore("observe-type")
        let objects = try openObjects(directory)
        let setup = objects.makeContext()
        let first = Node("first")
        try setup.insert(first)
        try setup.save()
        let reads = Mutex(0)
        var iterator = objects.observe(types: [Node.self]) { context in
            reads.withLock { $0 += 1 }
            return try context.objects(of: Node.self).map(\.label).sorted()
        }.makeAsyncIterator()
        #expect(try await iterator.next() == ["first"])
        // A batch of another type does not make the observer read again.
        let other = objects.makeContext()
        try other.insert(Note())
        try other.save()
        try other.insert(Node("second"))
        try other.save()
        #expect(try await iterator.next() == ["first", "second"])
        #expect(reads.withLock { $0 } == 2)
        try objects.close()
        #expect(try await iterator.next() == nil)
    }

    @Test func observingOneObjectSeesItChangeAndGoIncludingWhenTheEngineFreesIt() async throws {
        let directory = TemporaryStore("observe-object")
        let objects = try openObjects(directory)
        let context = objects.makeContext()
        let parent = Node("parent")
        let child = Node("child")
        parent.links = [child]
        try context.insert(parent)
        context.unpin(child)
        try context.save()
        guard let childID = context.id(of: child), let parentID = context.id(of: parent) else {
            Issue.record("no ids")
            return
        }
        var watchChild = objects.observe(id: childID, as: Node.self).makeAsyncIterator()
        var watchParent = objects.observe(id: parentID, as: Node.self).makeAsyncIterator()
        #expect(try await watchChild.next()??.label == "child")
        #expect(try await watchParent.next()??.label == "parent")
        child.label = "renamed"
        try context.save()
        #expect(try await watchChild.next()??.label == "renamed")
        // Deleting the parent frees the unpinned child (reference counting): both observers see nil.
        context.delete(parent)
        try context.save()
        let parentNow = try await watchParent.next()
        #expect(parentNow != nil && parentNow! == nil)
        let childNow = try await watchChild.next()
        #expect(childNow != nil && childNow! == nil)
        try objects.close()
    }

    @Test func aSlowObserverGetsTheChangesCoalescedIntoTheNewestState() async throws {
        let directory = TemporaryStore("observe-coalesce")
        let objects = try openObjects(directory)
        let context = objects.makeContext()
        let node = Node("0")
        try context.insert(node)
        try context.save()
        var iterator = objects.observe(Node.self).makeAsyncIterator()
        #expect(try await iterator.next()?.map(\.label) == ["0"])
        for round in 1...50 {
            node.label = "\(round)"
            try context.save()
        }
        // Fifty batches committed while the observer was away: one read sees the newest state.
        #expect(try await iterator.next()?.map(\.label) == ["50"])
        node.label = "51"
        try context.save()
        #expect(try await iterator.next()?.map(\.label) == ["51"])
        try objects.close()
    }

    @MainActor @Test func observingOnTheMainActorHandsOutObjectsThere() async throws {
        let directory = TemporaryStore("observe-main")
        let objects = try openObjects(directory)
        let writer = Task.detached {
            let context = objects.makeContext()
            for index in 0..<3 {
                try context.insert(Node("n\(index)"))
                try context.save()
                try await Task.sleep(for: .milliseconds(5))
            }
        }
        var seen: [Int] = []
        for try await nodes in objects.observe(Node.self) {
            seen.append(nodes.count)
            if nodes.count == 3 { break }
        }
        try await writer.value
        #expect(seen.last == 3)
        #expect(seen == seen.sorted())
        try objects.close()
    }

    @Test func cancellingTheObservingTaskEndsIt() async throws {
        let directory = TemporaryStore("observe-cancel")
        let objects = try openObjects(directory)
        let observer = Task {
            var count = 0
            for try await _ in objects.observe(Node.self) { count += 1 }
            return count
        }
        try await Task.sleep(for: .milliseconds(20))
        observer.cancel()
        #expect(try await observer.value == 1)
        try objects.close()
    }
}
