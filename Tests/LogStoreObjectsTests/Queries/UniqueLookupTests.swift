import Foundation
import LogStore
import LogStoreObjects
import TestSupport
import Testing

/// A ticket stored before its code had a unique index: the same stored type as ``Ticket``, without the
/// index, so that two objects can hold one code.
final class UncheckedTicket: PersistentObject {
    static let typeName = "test.Ticket"
    var title: String
    var code: String?
    var due: Date
    var priority: Int
    var status: String
    var labels: [Label] = []

    init(title: String, code: String?) {
        self.title = title
        self.code = code
        due = Date(timeIntervalSinceReferenceDate: 0)
        priority = 0
        status = "open"
    }
}

@Suite struct UniqueLookupTests {
    let base = Date(timeIntervalSinceReferenceDate: 800_000_000)

    private func ticket(_ title: String, _ code: String?) -> Ticket {
        Ticket(title: title, code: code, due: base, priority: 1, status: "open")
    }

    @Test func fetchUniqueFindsTheHolderThroughTheIndex() throws {
        let directory = TemporaryStore("unique-lookup")
        try withObjects(directory, types: queryTypes) { objects in
            let context = objects.makeContext()
            for index in 0..<50 { try context.insert(ticket("t\(index)", "c\(index)")) }
            try context.save()
            let reader = objects.makeContext()
            #expect(try reader.fetchUnique(Ticket.self, where: \.code, equals: "c7")?.title == "t7")
            #expect(try reader.fetchUnique(Ticket.self, where: \.code, equals: "missing") == nil)
            let id = try #require(try reader.fetchUniqueID(Ticket.self, where: \.code, equals: "c3"))
            #expect(try reader.object(id: id, as: Ticket.self)?.title == "t3")
            #expect(try reader.fetchUniqueID(Ticket.self, where: \.code, equals: "missing") == nil)
            // A subclass is looked up through the class that declares the index.
            try context.insert(Escalation(title: "e", code: "e1", due: base, priority: 1, level: 2))
            try context.save()
            let escalations = objects.makeContext()
            #expect(try escalations.fetchUnique(Ticket.self, where: \.code, equals: "e1") is Escalation)
            let error = #expect(throws: ObjectStoreError.self) {
                _ = try escalations.fetchUnique(Escalation.self, where: \.code, equals: "e1")
            }
            #expect(error?.code == .invalidQuery)
            // The same instance the context already holds.
            let first = try reader.fetchUnique(Ticket.self, where: \.code, equals: "c9")
            #expect(try reader.fetchUnique(Ticket.self, where: \.code, equals: "c9") === first)
        }
    }

    @Test func fetchUniqueRefusesAFieldWithoutAUniqueIndex() throws {
        let directory = TemporaryStore("unique-lookup-refused")
        try withObjects(directory, types: queryTypes) { objects in
            let error = #expect(throws: ObjectStoreError.self) {
                _ = try objects.makeContext().fetchUnique(Ticket.self, where: \.title, equals: "a")
            }
            #expect(error?.code == .invalidQuery)
        }
    }

    @Test func fetchUniqueSeesUnsavedChangesAndPendingDeletes() throws {
        let directory = TemporaryStore("unique-lookup-unsaved")
        try withObjects(directory, types: queryTypes) { objects in
            let context = objects.makeContext()
            let kept = ticket("kept", "K")
            try context.insert(kept)
            try context.insert(ticket("gone", "G"))
            try context.save()

            let editing = objects.makeContext()
            // A new object, not saved: found by its value in memory.
            try editing.insert(ticket("new", "N"))
            #expect(try editing.fetchUnique(Ticket.self, where: \.code, equals: "N")?.title == "new")
            #expect(try objects.makeContext().fetchUnique(Ticket.self, where: \.code, equals: "N") == nil)
            // A pending delete is left out, with unsaved new objects or without.
            editing.delete(try #require(try editing.fetchUnique(Ticket.self, where: \.code, equals: "G")))
            #expect(try editing.fetchUnique(Ticket.self, where: \.code, equals: "G") == nil)
            let deleting = objects.makeContext()
            deleting.delete(try #require(try deleting.fetchUnique(Ticket.self, where: \.code, equals: "G")))
            #expect(try deleting.fetchUnique(Ticket.self, where: \.code, equals: "G") == nil)
            #expect(try deleting.fetchUniqueID(Ticket.self, where: \.code, equals: "G") == nil)
            // A plain instance changed in memory, with nothing else unsaved: tested as it is.
            let changing = objects.makeContext()
            try #require(try changing.fetchUnique(Ticket.self, where: \.code, equals: "K")).code = "elsewhere"
            #expect(try changing.fetchUnique(Ticket.self, where: \.code, equals: "K") == nil)
            // An instance whose code changed in memory is tested as it is (its stored code no longer matches).
            let loaded = try #require(try editing.fetchUnique(Ticket.self, where: \.code, equals: "K"))
            loaded.code = "K2"
            #expect(try editing.fetchUnique(Ticket.self, where: \.code, equals: "K") == nil)
            try editing.save()
            #expect(try objects.makeContext().fetchUnique(Ticket.self, where: \.code, equals: "K2")?.title == "kept")
            #expect(try objects.makeContext().fetchUnique(Ticket.self, where: \.code, equals: "G") == nil)
        }
    }

    @Test func anOlderSnapshotSeesTheHolderAsItWas() throws {
        let directory = TemporaryStore("unique-lookup-snapshot")
        try withObjects(directory, types: queryTypes) { objects in
            let context = objects.makeContext()
            try context.insert(ticket("first", "A"))
            try context.save()
            let old = objects.makeContext()
            #expect(try old.fetchUnique(Ticket.self, where: \.code, equals: "A")?.title == "first")
            let writer = objects.makeContext()
            let loaded = try #require(try writer.fetchUnique(Ticket.self, where: \.code, equals: "A"))
            loaded.code = "B"
            try writer.insert(ticket("second", "A"))
            try writer.save()
            // A query at the newest snapshot first, so the index moves past `old`'s.
            let now = objects.makeContext()
            #expect(try now.fetchUnique(Ticket.self, where: \.code, equals: "A")?.title == "second")
            #expect(try now.fetchUnique(Ticket.self, where: \.code, equals: "B")?.title == "first")
            // `old` still reads its snapshot: the first ticket holds A there, and nothing holds B.
            #expect(try old.fetchUnique(Ticket.self, where: \.code, equals: "A")?.title == "first")
            #expect(try old.fetchUnique(Ticket.self, where: \.code, equals: "B") == nil)
            #expect(try old.fetchUniqueID(Ticket.self, where: \.code, equals: "B") == nil)
        }
    }

    @Test func keysSeveralObjectsHeldBeforeTheIndexAreAnsweredFromTheirListOfHolders() throws {
        let directory = TemporaryStore("unique-lookup-shared")
        var ids: [ObjectID] = []
        try withObjects(directory, types: [UncheckedTicket.self, Label.self]) { objects in
            let context = objects.makeContext()
            ids.append(try context.insert(UncheckedTicket(title: "one", code: "D")))
            ids.append(try context.insert(UncheckedTicket(title: "two", code: "D")))
            ids.append(try context.insert(UncheckedTicket(title: "three", code: "E")))
            try context.save()
        }
        try withObjects(directory, types: queryTypes) { objects in
            let context = objects.makeContext()
            // Two objects hold D: the lowest id is returned, as the query returns both.
            #expect(try context.fetchUnique(Ticket.self, where: \.code, equals: "D")?.title == "one")
            let code: String? = "D"
            let byCode = FetchDescriptor<Ticket>(predicate: #Predicate { $0.code == code })
            #expect(try context.fetchIDs(byCode) == [ids[0], ids[1]])
            // Deleting one makes the other the only holder.
            context.delete(try #require(try context.object(id: ids[0], as: Ticket.self)))
            try context.save()
            let after = objects.makeContext()
            #expect(try after.fetchUnique(Ticket.self, where: \.code, equals: "D")?.title == "two")
            // A third holder is refused now that the index exists.
            try after.insert(ticket("four", "D"))
            let error = #expect(throws: ObjectStoreError.self) { try after.save() }
            #expect(error?.code == .uniqueViolation)
            #expect(try objects.makeContext().fetchUnique(Ticket.self, where: \.code, equals: "E")?.title == "three")
        }
    }
}
