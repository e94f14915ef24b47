import LogStore
@_spi(Testing) import LogStoreObjects
import TestSupport
import Testing

/// Queries by a protocol type on an object store opened without `protocols:`: the conforming classes are
/// told by their declared conformances, or by loading one object of each class once.
@Suite struct ProtocolQueryTests {
    /// The labels of the stored objects that are `Labelled`.
    static let labelled = ["d1", "d2", "e1", "m1", "s1"]
    /// How many classes with stored objects a first query by `Labelled` loads one of: all but the
    /// declared model.
    static let probedForLabelled = 4

    /// Opens an object store of ``protocolQueryTypes`` in `directory`, without `protocols:` unless given.
    func open(_ directory: TemporaryStore, protocols: [QueryableProtocol] = []) throws -> ObjectStore {
        let objects = try ObjectStore.open(
            at: directory.path, options: StoreOptions(segmentSize: 1 << 20, fsyncPolicy: .never),
            types: protocolQueryTypes, protocols: protocols)
        return directory.closesAtTeardown(objects) { try $0.close() }
    }

    /// Stores two `DeclaredLabel`s, an `ExtendedLabel`, two `Unlabelled`, a `LabelledSub` and a
    /// `DeclaredModel`; no `NeverStored` nor `LabelledBase`.
    func fill(_ objects: ObjectStore) throws {
        let context = objects.makeContext()
        let stored: [any PersistentObject] = [
            DeclaredLabel("d1"), DeclaredLabel("d2"), ExtendedLabel("e1"), Unlabelled("u1"), Unlabelled("u2"),
            LabelledSub("s1"), DeclaredModel("m1"),
        ]
        for object in stored { try context.insert(object) }
        try context.save()
    }

    @Test func findsExactlyTheConformingClassesWithoutLoadingIntoTheContext() throws {
        let directory = TemporaryStore("protocol-query")
        let objects = try open(directory)
        try fill(objects)
        let context = objects.makeContext()
        #expect(try context.count(of: (any Labelled).self) == Self.labelled.count)
        let ids = try context.ids(of: (any Labelled).self)
        #expect(ids.count == Self.labelled.count)
        // The objects loaded to find out were loaded elsewhere: this context holds none of them.
        for id in try context.ids(of: (any PersistentObject).self) { #expect(!context.isLoaded(id)) }
        #expect(try context.save().written == 0)
        #expect(objects.conformanceProbes == Self.probedForLabelled)

        let found = try context.objects(of: (any Labelled).self)
        #expect(found.map(\.label).sorted() == Self.labelled)
        #expect(found.contains { $0 is ExtendedLabel } && found.contains { $0 is LabelledSub })
        #expect(found.contains { $0 is DeclaredModel })
        #expect(try context.ids(of: (any Labelled).self, includingSubclasses: false).isEmpty)
        #expect(try context.count(of: LabelledBase.self) == 1)
        #expect(objects.conformanceProbes == Self.probedForLabelled)
    }

    @Test func answersAreKeptAndClassesWithoutObjectsAreNeverLoaded() throws {
        let directory = TemporaryStore("protocol-query-cache")
        let objects = try open(directory)
        try fill(objects)
        #expect(try objects.makeContext().count(of: (any Labelled).self) == Self.labelled.count)
        #expect(objects.conformanceProbes == Self.probedForLabelled)
        let again = objects.makeContext()
        #expect(try again.count(of: (any Labelled).self) == Self.labelled.count)
        #expect(try again.objects(of: (any Labelled).self).count == Self.labelled.count)
        #expect(objects.conformanceProbes == Self.probedForLabelled)

        // The classes without objects were not looked at: now that they have some, they are, once.
        try again.insert(NeverStored("n1"))
        try again.insert(LabelledBase("b1"))
        try again.save()
        #expect(try again.count(of: (any Labelled).self) == Self.labelled.count + 2)
        #expect(objects.conformanceProbes == Self.probedForLabelled + 2)
        #expect(try objects.makeContext().count(of: (any Labelled).self) == Self.labelled.count + 2)
        #expect(objects.conformanceProbes == Self.probedForLabelled + 2)
    }

    @Test func aProtocolNoClassConformsToGivesEmptyResults() throws {
        let directory = TemporaryStore("protocol-query-unclaimed")
        let objects = try open(directory)
        try fill(objects)
        let context = objects.makeContext()
        #expect(try context.count(of: (any Unclaimed).self) == 0)
        #expect(try context.ids(of: (any Unclaimed).self).isEmpty)
        #expect(try context.objects(of: (any Unclaimed).self).isEmpty)
        #expect(try context.keys(of: (any Unclaimed).self).isEmpty)
        try context.deleteAll(of: (any Unclaimed).self)
        #expect(try context.save().written == 0)
        #expect(try context.count() == 7)
        // Every class with objects was loaded once, the declared model too (it does not declare this one).
        #expect(objects.conformanceProbes == 5)
    }

    @Test func deleteAllByAProtocolDeletesTheConformingObjects() throws {
        let directory = TemporaryStore("protocol-query-delete")
        let objects = try open(directory)
        try fill(objects)
        let context = objects.makeContext()
        try context.deleteAll(of: (any Labelled).self)
        try context.save()
        let fresh = objects.makeContext()
        #expect(try fresh.count(of: (any Labelled).self) == 0)
        #expect(try fresh.objects(of: Unlabelled.self).map(\.label).sorted() == ["u1", "u2"])
        #expect(try fresh.count() == 2)
    }

    @Test func aDeclaredConformanceNeedsNoLoad() throws {
        let directory = TemporaryStore("protocol-query-declared")
        let objects = try open(directory)
        let context = objects.makeContext()
        for label in ["m1", "m2", "m3"] { try context.insert(DeclaredModel(label)) }
        try context.save()
        let fresh = objects.makeContext()
        #expect(try fresh.count(of: (any Labelled).self) == 3)
        #expect(try fresh.ids(of: (any Labelled).self).count == 3)
        #expect(objects.conformanceProbes == 0)
        #expect(try fresh.objects(of: (any Labelled).self).map(\.label).sorted() == ["m1", "m2", "m3"])
    }

    @Test func aListedProtocolIsDecidedByItsTestAlone() throws {
        let directory = TemporaryStore("protocol-query-listed")
        let objects = try open(
            directory, protocols: [QueryableProtocol((any Labelled).self) { $0 == DeclaredLabel.self }])
        try fill(objects)
        let context = objects.makeContext()
        #expect(try context.objects(of: (any Labelled).self).map(\.label).sorted() == ["d1", "d2"])
        #expect(objects.conformanceProbes == 0)
    }

    @Test func theLoadReadsTheContextsSnapshot() throws {
        let directory = TemporaryStore("protocol-query-snapshot")
        let objects = try open(directory)
        try fill(objects)
        let reader = objects.makeContext()
        #expect(try reader.count(of: (any Labelled).self) == Self.labelled.count)
        let writer = objects.makeContext()
        try writer.insert(LabelledBase("b1"))
        try writer.save()
        // Not in the reader's snapshot: not counted, and not looked at.
        #expect(try reader.count(of: (any Labelled).self) == Self.labelled.count)
        #expect(objects.conformanceProbes == Self.probedForLabelled)
        try reader.refresh()
        #expect(try reader.count(of: (any Labelled).self) == Self.labelled.count + 1)
        #expect(objects.conformanceProbes == Self.probedForLabelled + 1)
    }

    @Test func concurrentQueriesOnOneObjectStore() async throws {
        let directory = TemporaryStore("protocol-query-concurrent")
        let objects = try open(directory)
        try fill(objects)
        let tasks = 8
        try await withThrowingTaskGroup(of: Void.self) { group in
            for _ in 0..<tasks {
                group.addTask {
                    let context = objects.makeContext()
                    for _ in 0..<3 {
                        let labels = try context.objects(of: (any Labelled).self).map(\.label).sorted()
                        #expect(labels == Self.labelled)
                        #expect(try context.count(of: (any Labelled).self) == Self.labelled.count)
                        #expect(try context.ids(of: (any Unclaimed).self).isEmpty)
                    }
                }
            }
            try await group.waitForAll()
        }
        // Each class is loaded at least once per protocol; at most once per task and protocol when
        // tasks ask at the same moment.
        let probed = Self.probedForLabelled + 5
        #expect(objects.conformanceProbes >= probed && objects.conformanceProbes <= probed * tasks)
        #expect(try objects.makeContext().count(of: (any Labelled).self) == Self.labelled.count)
    }
}
