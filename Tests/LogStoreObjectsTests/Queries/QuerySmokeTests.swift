import Foundation
import LogStore
import LogStoreObjects
import TestSupport
import Testing

@Suite struct QueryBasicsTests {
    let base = Date(timeIntervalSinceReferenceDate: 800_000_000)

    /// A plain `Codable` instance does not report its changes: a query the index answers whole still tests
    /// it as it is in memory (only an unchanged model is taken on the index's word).
    @Test func anInstanceChangedInMemoryIsTestedEvenWhenTheIndexAnswersWhole() throws {
        let directory = TemporaryStore("query-plain-memory")
        try withObjects(directory, types: queryTypes) { objects in
            let setup = objects.makeContext()
            for index in 0..<30 {
                try setup.insert(
                    Ticket(
                        title: "t\(index)", code: "c\(index)", due: base.addingTimeInterval(Double(index) * 60),
                        priority: 1, status: "open"))
            }
            try setup.save()
            let context = objects.makeContext()
            let cutoff = base.addingTimeInterval(10 * 60)
            let descriptor = FetchDescriptor<Ticket>(predicate: #Predicate { $0.due < cutoff })
            let loaded = try context.fetch(descriptor)
            #expect(loaded.count == 10)
            let moved = try #require(loaded.first { $0.title == "t4" })
            moved.due = base.addingTimeInterval(3_600)
            #expect(
                try context.fetch(descriptor).map(\.title).sorted()
                    == (0..<10).filter { $0 != 4 }.map { "t\($0)" }.sorted())
        }
    }

    @Test func aRangeQueryUsesTheIndexAndAnswersAsAScanWould() throws {
        let directory = TemporaryStore("query-range")
        try withObjects(directory, types: queryTypes) { objects in
            let context = objects.makeContext()
            for index in 0..<200 {
                try context.insert(
                    Ticket(
                        title: "t\(index)", code: "c\(index)", due: base.addingTimeInterval(Double(index) * 60),
                        priority: index % 5, status: index % 3 == 0 ? "open" : "done"))
            }
            try context.save()
            let cutoff = base.addingTimeInterval(20 * 60)
            let descriptor = FetchDescriptor<Ticket>(
                predicate: #Predicate { $0.due < cutoff }, sortBy: [SortDescriptor(\.due)])
            let plan = try context.explain(descriptor)
            #expect(plan.index == "due")
            #expect(plan.usesIndexOrder)
            let found = try context.fetch(descriptor)
            #expect(found.map(\.title) == (0..<20).map { "t\($0)" })
            #expect(try context.fetchCount(descriptor) == 20)
            var limited = descriptor
            limited.fetchLimit = 5
            limited.fetchOffset = 3
            #expect(try context.fetch(limited).map(\.title) == (3..<8).map { "t\($0)" })
            let compound = FetchDescriptor<Ticket>(
                predicate: #Predicate { $0.status == "open" && $0.priority >= 3 })
            #expect(try context.explain(compound).index == "status+priority")
            let expected = (0..<200).filter { $0 % 3 == 0 && $0 % 5 >= 3 }.map { "t\($0)" }
            #expect(try context.fetch(compound).map(\.title).sorted() == expected.sorted())
        }
    }

    @Test func aUniqueIndexRefusesASecondHolderAndWritesNothing() throws {
        let directory = TemporaryStore("query-unique")
        try withObjects(directory, types: queryTypes) { objects in
            let context = objects.makeContext()
            try context.insert(Ticket(title: "a", code: "X", due: base, priority: 1, status: "open"))
            try context.save()
            let other = objects.makeContext()
            let duplicate = Ticket(title: "b", code: "X", due: base, priority: 1, status: "open")
            try other.insert(duplicate)
            let error = #expect(throws: ObjectStoreError.self) { try other.save() }
            #expect(error?.code == .uniqueViolation)
            #expect(error?.objects.count == 2)
            #expect(try objects.makeContext().count(of: Ticket.self) == 1)
            duplicate.code = "Y"
            try other.save()
            #expect(try objects.makeContext().count(of: Ticket.self) == 2)
        }
    }
}
