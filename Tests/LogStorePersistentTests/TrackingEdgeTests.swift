import Foundation
import LogStorePersistent
import TestSupport
import Testing

@Persistent final class EdgeChild {
    var name = ""
}

/// A plain Codable persistent class (does not report its changes).
final class EdgeItem: PersistentObject {
    static let typeName = "test.EdgeItem"
    var name = ""
    init() {}
}

@Persistent final class EdgeParent {
    var child: EdgeChild? = nil
    var item: EdgeItem? = nil
    var tags: [Tag] = []
}

private let edgeTypes: [any PersistentObject.Type] =
    modelTypes + [EdgeChild.self, EdgeItem.self, EdgeParent.self]

/// Change tracking at its edges: objects freed and linked again, deletes rolled back or cancelled, pins,
/// models refused by another context, objects deleted elsewhere, subclasses with transient fields only.
@Suite struct TrackingEdgeTests {
    /// A model changed and freed in the same save, then linked again: later changes are never saved.
    @Test func aModelChangedAndFreedThenLinkedAgainKeepsReportingChanges() throws {
        let directory = TemporaryStore("edge-freed")
        let objects = try openModels(directory, types: edgeTypes)
        let context = objects.makeContext()
        let parent = EdgeParent()
        let child = EdgeChild()
        parent.child = child
        let id = try context.insert(parent)
        try context.save()
        child.name = "x"
        parent.child = nil
        try context.save()  // child written and freed
        parent.child = child
        try context.save()  // child stored again
        child.name = "y"
        try context.save()
        let check = objects.makeContext()
        let loaded = try #require(try check.object(id: id, as: EdgeParent.self))
        #expect(loaded.child?.name == "y")
    }

    /// A plain Codable object freed and linked again is no longer held: later changes are not saved.
    @Test func aCodableObjectFreedThenLinkedAgainStaysHeld() throws {
        let directory = TemporaryStore("edge-freed-plain")
        let objects = try openModels(directory, types: edgeTypes)
        let context = objects.makeContext()
        let parent = EdgeParent()
        let item = EdgeItem()
        parent.item = item
        let id = try context.insert(parent)
        try context.save()
        parent.item = nil
        try context.save()  // item freed
        parent.item = item
        try context.save()  // item stored again
        item.name = "z"
        try context.save()
        let check = objects.makeContext()
        let loaded = try #require(try check.object(id: id, as: EdgeParent.self))
        #expect(loaded.item?.name == "z")
    }

    /// A change made before begin() is lost when the transaction deleted the object and rolled back.
    @Test func aChangeMadeBeforeARolledBackDeleteIsSaved() throws {
        let directory = TemporaryStore("edge-rollback")
        let objects = try openModels(directory, types: edgeTypes)
        let context = objects.makeContext()
        let tag = Tag()
        let id = try context.insert(tag)
        try context.save()
        tag.name = "before"
        try context.begin()
        context.delete(tag)
        try context.rollback()
        try context.save()
        let check = objects.makeContext()
        #expect(try check.object(id: id, as: Tag.self)?.name == "before")
    }

    /// A plain Codable object deleted then un-deleted by discardChanges() is no longer held.
    @Test func aChangeAfterADiscardedDeleteIsSaved() throws {
        let directory = TemporaryStore("edge-discard")
        let objects = try openModels(directory, types: edgeTypes)
        let setup = objects.makeContext()
        let id = try setup.insert(EdgeItem())
        try setup.save()
        let context = objects.makeContext()
        let item = try #require(try context.object(id: id, as: EdgeItem.self))
        context.delete(item)
        context.discardChanges()
        item.name = "after"
        try context.save()
        let check = objects.makeContext()
        #expect(try check.object(id: id, as: EdgeItem.self)?.name == "after")
    }

    /// unpin, delete, cancelDelete: the unpin is lost.
    @Test func anUnpinSurvivesADeleteAndItsCancellation() throws {
        let directory = TemporaryStore("edge-unpin")
        let objects = try openModels(directory, types: edgeTypes)
        let setup = objects.makeContext()
        let a = try setup.insert(Tag())
        let b = try setup.insert(Tag())
        try setup.save()
        let context = objects.makeContext()
        let control = try #require(try context.object(id: a, as: Tag.self))
        let tag = try #require(try context.object(id: b, as: Tag.self))
        context.unpin(control)
        context.unpin(tag)
        context.delete(tag)
        context.cancelDelete(tag)
        try context.save()
        let controlGone = try !objects.store.contains(a)
        let tagGone = try !objects.store.contains(b)
        #expect(controlGone)
        #expect(tagGone)
    }

    /// A refused insert into another context steals the model's slot: its own context loses its changes.
    @Test func aModelRefusedByAnotherContextStaysTracked() throws {
        let directory = TemporaryStore("edge-foreign")
        let objects = try openModels(directory, types: edgeTypes)
        let setup = objects.makeContext()
        let id = try setup.insert(Tag())
        try setup.save()
        let a = objects.makeContext()
        let b = objects.makeContext()
        let tag = try #require(try a.object(id: id, as: Tag.self))
        #expect(throws: ObjectStoreError.self) { try b.insert(tag) }
        tag.name = "changed in a"
        try a.save()
        let check = objects.makeContext()
        #expect(try check.object(id: id, as: Tag.self)?.name == "changed in a")
    }

    /// Linking an unchanged model that another context deleted: which error?
    @Test func linkingAModelDeletedElsewhereIsAConflict() throws {
        let directory = TemporaryStore("edge-linkdeleted")
        let objects = try openModels(directory, types: edgeTypes)
        let setup = objects.makeContext()
        let pid = try setup.insert(EdgeParent())
        let tid = try setup.insert(Tag())
        try setup.save()
        let a = objects.makeContext()
        let parent = try #require(try a.object(id: pid, as: EdgeParent.self))
        let tag = try #require(try a.object(id: tid, as: Tag.self))
        let b = objects.makeContext()
        b.delete(try #require(try b.object(id: tid, as: Tag.self)))
        try b.save()
        parent.tags.append(tag)
        do {
            try a.save()
            Issue.record("save succeeded")
        } catch {
            #expect(error.code == .conflict)
        }
    }
}

@Persistent class EdgeBase {
    var a = 0
}

@Persistent final class EdgeTransientSub: EdgeBase {
    @Transient var scratch = 1
    override init() { super.init() }
}

/// More edges of change tracking: links to objects deleted elsewhere, subclasses with transient fields only,
/// failed saves, models added again.
@Suite struct TrackingEdgeTests2 {
    /// Control: the same link to an object deleted elsewhere, through a plain Codable object.
    @Test func linkingACodableObjectDeletedElsewhereIsAConflict() throws {
        let directory = TemporaryStore("edge-linkdeleted-plain")
        let objects = try openModels(directory, types: edgeTypes)
        let setup = objects.makeContext()
        let pid = try setup.insert(EdgeParent())
        let iid = try setup.insert(EdgeItem())
        try setup.save()
        let a = objects.makeContext()
        let parent = try #require(try a.object(id: pid, as: EdgeParent.self))
        let item = try #require(try a.object(id: iid, as: EdgeItem.self))
        let b = objects.makeContext()
        b.delete(try #require(try b.object(id: iid, as: EdgeItem.self)))
        try b.save()
        parent.item = item
        do {
            try a.save()
            Issue.record("save succeeded")
        } catch {
            #expect(error.code == .conflict)
        }
    }

    /// A @Persistent subclass whose only own stored property is @Transient.
    @Test func aSubclassWithOnlyTransientFieldsSaves() throws {
        let directory = TemporaryStore("edge-transient-sub")
        let objects = try openModels(directory, types: edgeTypes + [EdgeBase.self, EdgeTransientSub.self])
        let context = objects.makeContext()
        try context.insert(EdgeTransientSub())
        #expect(throws: Never.self) { try context.save() }
    }

    /// A failed save keeps the model's change; it is written once the cause is withdrawn.
    @Test func aFailedSaveKeepsAModelsChange() throws {
        let directory = TemporaryStore("edge-failed")
        let objects = try openModels(directory, types: edgeTypes)
        let setup = objects.makeContext()
        let parent = EdgeParent()
        let child = EdgeChild()
        parent.child = child
        let pid = try setup.insert(parent)
        try setup.save()
        let context = objects.makeContext()
        let p = try #require(try context.object(id: pid, as: EdgeParent.self))
        let c = try #require(p.child)
        c.name = "kept"
        context.delete(c)
        #expect(throws: ObjectStoreError.self) { try context.save() }
        context.cancelDelete(c)
        try context.save()
        #expect(try objects.makeContext().object(id: pid, as: EdgeParent.self)?.child?.name == "kept")
    }
}

/// Change tracking at its edges: objects freed and linked again, deletes rolled back or cancelled, pins,
/// models refused by another context, objects deleted elsewhere, subclasses with transient fields only.
@Suite struct TrackingEdgeTests3 {
    /// A new model changed, forgotten by a rollback, added again: its flag `hasReportedChange` stays true,
    /// so after the first save no change to it is ever reported.
    @Test func aModelAddedAgainAfterARollbackReportsChanges() throws {
        let directory = TemporaryStore("edge-readd")
        let objects = try openModels(directory, types: edgeTypes)
        let context = objects.makeContext()
        let tag = Tag()
        try context.begin()
        try context.insert(tag)
        tag.name = "draft"
        try context.rollback()
        let id = try context.insert(tag)
        try context.save()
        tag.name = "final"
        try context.save()
        #expect(try objects.makeContext().object(id: id, as: Tag.self)?.name == "final")
    }

    /// The same through discardChanges().
    @Test func aModelAddedAgainAfterADiscardReportsChanges() throws {
        let directory = TemporaryStore("edge-readd-discard")
        let objects = try openModels(directory, types: edgeTypes)
        let context = objects.makeContext()
        let tag = Tag()
        try context.insert(tag)
        tag.name = "draft"
        context.discardChanges()
        let id = try context.insert(tag)
        try context.save()
        tag.name = "final"
        try context.save()
        #expect(try objects.makeContext().object(id: id, as: Tag.self)?.name == "final")
    }
}
