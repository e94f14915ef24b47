import LogStore
import LogStoreObjects
import TestSupport
import Testing

/// A change to an object a context handed out reaches the context's next save, whether or not the caller
/// still holds the object: `Codable` classes because the context keeps their instances, models because they
/// report their changes.
@Suite struct ChangeTrackingTests {
    /// Stores `count` tasks of each kind; returns their ids.
    private func seed(_ objects: ObjectStore, count: Int) throws -> (plain: [ObjectID], tracked: [ObjectID]) {
        let context = objects.makeContext()
        var plain: [ObjectID] = []
        var tracked: [ObjectID] = []
        for index in 0..<count {
            plain.append(try context.insert(UntrackedTask("plain \(index)")))
            tracked.append(try context.insert(TrackedTask("tracked \(index)")))
        }
        try context.save()
        return (plain, tracked)
    }

    @Test func aLoopOverQueriedPlainObjectsSavesItsChanges() throws {
        let directory = TemporaryStore("tracking-plain-loop")
        try withObjects(directory, types: changeTrackingTypes) { objects in
            _ = try seed(objects, count: 5)
            let context = objects.makeContext()
            for task in try context.objects(of: UntrackedTask.self) { task.done = true }
            let report = try context.save()
            #expect(report.written == 5)
            #expect(try objects.makeContext().objects(of: UntrackedTask.self).allSatisfy(\.done))
        }
    }

    @Test func anEditThroughATemporaryIsSaved() throws {
        let directory = TemporaryStore("tracking-temporary")
        try withObjects(directory, types: changeTrackingTypes) { objects in
            let ids = try seed(objects, count: 1)
            let context = objects.makeContext()
            try context.object(id: ids.plain[0], as: UntrackedTask.self)?.title = "renamed"
            try context.object(id: ids.tracked[0], as: TrackedTask.self)?.title = "renamed"
            #expect(try context.save().written == 2)
            let check = objects.makeContext()
            #expect(try check.object(id: ids.plain[0], as: UntrackedTask.self)?.title == "renamed")
            #expect(try check.object(id: ids.tracked[0], as: TrackedTask.self)?.title == "renamed")
        }
    }

    @Test func anEditAfterASaveToAnObjectThenDroppedIsSaved() throws {
        let directory = TemporaryStore("tracking-after-save")
        try withObjects(directory, types: changeTrackingTypes) { objects in
            let ids = try seed(objects, count: 1)
            let context = objects.makeContext()
            do {
                let plain = try #require(try context.object(id: ids.plain[0], as: UntrackedTask.self))
                let tracked = try #require(try context.object(id: ids.tracked[0], as: TrackedTask.self))
                try context.save()
                plain.done = true
                tracked.done = true
            }
            #expect(try context.save().written == 2)
            let check = objects.makeContext()
            #expect(try check.object(id: ids.plain[0], as: UntrackedTask.self)?.done == true)
            #expect(try check.object(id: ids.tracked[0], as: TrackedTask.self)?.done == true)
        }
    }

    @Test func aSaveEncodesOnlyTheChangedModels() throws {
        let directory = TemporaryStore("tracking-only-changed")
        try withObjects(directory, types: changeTrackingTypes) { objects in
            let ids = try seed(objects, count: 50)
            let context = objects.makeContext()
            let tasks = try context.objects(of: TrackedTask.self)
            #expect(tasks.count == 50)
            tasks[7].title = "changed"
            let report = try context.save()
            #expect(report.written == 1)
            #expect(report.unchanged == 0)
            let again = try context.save()
            #expect(again.written == 0 && again.unchanged == 0)
            #expect(try objects.makeContext().object(id: ids.tracked[7], as: TrackedTask.self)?.title == "changed")
        }
    }

    @Test func unchangedModelsAreHeldWeaklyAndChangedOnesUntilTheSave() throws {
        let directory = TemporaryStore("tracking-weak")
        try withObjects(directory, types: changeTrackingTypes) { objects in
            let ids = try seed(objects, count: 2)
            let context = objects.makeContext()
            _ = try context.object(id: ids.tracked[0], as: TrackedTask.self)
            try context.object(id: ids.tracked[1], as: TrackedTask.self)?.done = true
            _ = try context.object(id: ids.plain[0], as: UntrackedTask.self)
            #expect(!context.isLoaded(ids.tracked[0]))
            #expect(context.isLoaded(ids.tracked[1]))
            #expect(context.isLoaded(ids.plain[0]))
            try context.save()
            #expect(!context.isLoaded(ids.tracked[1]))
            #expect(context.isLoaded(ids.plain[0]))
        }
    }

    @Test func aPlainCycleThroughAnUnchangedModelIsRefused() throws {
        let directory = TemporaryStore("tracking-cycle")
        try withObjects(directory, types: changeTrackingTypes) { objects in
            let setup = objects.makeContext()
            let first = TrackedTask("first")
            let second = TrackedTask("second")
            first.next = second
            let firstID = try setup.insert(first)
            try setup.save()
            let context = objects.makeContext()
            let loaded = try #require(try context.object(id: firstID, as: TrackedTask.self))
            let loadedSecond = try #require(loaded.next)
            // `first` is unchanged; the edit to `second` closes the cycle through it.
            loadedSecond.next = loaded
            let error = #expect(throws: ObjectStoreError.self) { try context.save() }
            #expect(error?.code == .cyclicReference)
        }
    }

    @Test func aModelFreedByAnEarlierSaveIsStoredAgainWhenLinked() throws {
        let directory = TemporaryStore("tracking-relink")
        try withObjects(directory, types: changeTrackingTypes) { objects in
            let setup = objects.makeContext()
            let first = TrackedTask("first")
            first.next = TrackedTask("second")
            let firstID = try setup.insert(first)
            try setup.save()
            let context = objects.makeContext()
            let loaded = try #require(try context.object(id: firstID, as: TrackedTask.self))
            let second = try #require(loaded.next)
            loaded.next = nil
            try context.save()
            #expect(try context.count(of: TrackedTask.self) == 1)
            loaded.next = second
            try context.save()
            let check = objects.makeContext()
            #expect(try check.object(id: firstID, as: TrackedTask.self)?.next?.title == "second")
        }
    }

    @Test func aModelReportsItsChangesAgainAfterEachSaveAndDiscard() throws {
        let directory = TemporaryStore("tracking-again")
        try withObjects(directory, types: changeTrackingTypes) { objects in
            let ids = try seed(objects, count: 1)
            let context = objects.makeContext()
            let task = try #require(try context.object(id: ids.tracked[0], as: TrackedTask.self))
            task.title = "first"
            #expect(task.hasReportedChange)
            #expect(try context.save().written == 1)
            #expect(!task.hasReportedChange)
            task.title = "second"
            #expect(try context.save().written == 1)
            task.done = true
            context.discardChanges()  // the changed instance is dropped (detached); a load gives a new one
            let again = try #require(try context.object(id: ids.tracked[0], as: TrackedTask.self))
            #expect(again !== task && !again.hasReportedChange)
            again.title = "third"
            #expect(try context.save().written == 1)
            #expect(try objects.makeContext().object(id: ids.tracked[0], as: TrackedTask.self)?.title == "third")
        }
    }

    @Test func aChangedModelSurvivesAFailedSave() throws {
        let directory = TemporaryStore("tracking-failed-save")
        try withObjects(directory, types: changeTrackingTypes) { objects in
            let ids = try seed(objects, count: 1)
            let context = objects.makeContext()
            let other = objects.makeContext()
            try context.object(id: ids.tracked[0], as: TrackedTask.self)?.title = "mine"
            try other.object(id: ids.tracked[0], as: TrackedTask.self)?.title = "theirs"
            try other.save()
            #expect(throws: ObjectStoreError.self) { try context.save() }
            #expect(context.isLoaded(ids.tracked[0]))
        }
    }
}
