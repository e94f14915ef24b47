import Foundation
import LogStore
@_spi(Testing) import LogStoreObjects
import Synchronization
import TestSupport
import Testing

/// A gauge with only an ordered index: its batches wait whole for the applier (no unique check needs
/// them at once).
final class Gauge: PersistentObject {
    static let typeName = "test.Gauge"
    static let indexes: [IndexDefinition] = [.ordered(\Gauge.value, field: "value")]
    var value: Int
    init(_ value: Int) { self.value = value }
}

/// The applier, which inserts committed batches' index entries off the committing thread: it catches up
/// on its own, a query or a unique check right after a save sees the save, keys moved between objects in
/// one save stay unique, and queries racing saves answer exactly for their snapshot.
@Suite struct IndexApplierTests {
    let base = Date(timeIntervalSinceReferenceDate: 800_000_000)
    let types: [any PersistentObject.Type] = queryTypes + [Gauge.self]

    /// Waits until the applier has nothing left (at most 20 s); returns the backlog it found last.
    private func settled(_ objects: ObjectStore) -> Int {
        let deadline = Date().addingTimeInterval(20)
        var backlog = objects.indexBacklog
        while backlog > 0 && Date() < deadline {
            usleep(1_000)
            backlog = objects.indexBacklog
        }
        return backlog
    }

    @Test func theApplierCatchesUpWithoutAQuery() throws {
        let seed = testSeed("IndexApplierTests.catchesUp", default: UInt64.random(in: 1...1 << 40))
        var random = SplitMix64(seed: seed)
        let directory = TemporaryStore("index-applier")
        try withObjects(directory, types: types) { objects in
            // The indexes are built (the first query), so that the hooks queue every later batch.
            let reader = objects.makeContext()
            _ = try reader.fetchIDs(FetchDescriptor<Ticket>(predicate: #Predicate { $0.priority == 1 }))
            _ = try reader.fetchIDs(FetchDescriptor<Gauge>(predicate: #Predicate { $0.value == 1 }))
            var dues: [String: Date] = [:]
            var values: [Int] = []
            for batch in 0..<20 {
                let context = objects.makeContext()
                for item in 0..<200 {
                    let code = "k\(batch)-\(item)"
                    let due = base.addingTimeInterval(Double(random.next() % 10_000))
                    dues[code] = due
                    try context.insert(Ticket(title: code, code: code, due: due, priority: 1, status: "open"))
                    let value = Int(random.next() % 1_000)
                    values.append(value)
                    try context.insert(Gauge(value))
                }
                try context.save()
            }
            #expect(settled(objects) == 0, "seed \(seed)")
            let context = objects.makeContext()
            let low = base.addingTimeInterval(2_000)
            let high = base.addingTimeInterval(4_000)
            let inRange = try context.fetch(
                FetchDescriptor<Ticket>(predicate: #Predicate { $0.due >= low && $0.due < high }))
            #expect(
                Set(inRange.compactMap(\.code)) == Set(dues.filter { $0.value >= low && $0.value < high }.keys),
                "seed \(seed)")
            let small = try context.fetch(FetchDescriptor<Gauge>(predicate: #Predicate { $0.value < 100 }))
            #expect(small.map(\.value).sorted() == values.filter { $0 < 100 }.sorted(), "seed \(seed)")
            #expect(try context.fetchUnique(Ticket.self, where: \.code, equals: "k7-42")?.due == dues["k7-42"])
        }
    }

    @Test func aCommitOverTheBacklogLimitAppliesTheBacklogItself() throws {
        let directory = TemporaryStore("index-applier-limit")
        var tuning = ObjectStoreTuning()
        tuning.indexBacklogLimit = 10
        try withObjects(directory, types: types, tuning: tuning) { objects in
            let context = objects.makeContext()
            _ = try context.fetchIDs(FetchDescriptor<Ticket>(predicate: #Predicate { $0.priority == 1 }))
            _ = try context.fetchIDs(FetchDescriptor<Gauge>(predicate: #Predicate { $0.value == 1 }))
            for batch in 0..<30 {
                for item in 0..<100 {
                    try context.insert(
                        Ticket(title: "t", code: "b\(batch)-\(item)", due: base, priority: item % 5, status: "open"))
                    try context.insert(Gauge(batch * 100 + item))
                }
                try context.save()
                // Each class's 100 changes were over the limit: the commit applied them before returning.
                #expect(objects.indexBacklog == 0, "batch \(batch)")
            }
            let reader = objects.makeContext()
            #expect(
                try reader.fetchIDs(FetchDescriptor<Ticket>(predicate: #Predicate { $0.priority == 2 })).count == 600)
            #expect(try reader.fetchIDs(FetchDescriptor<Gauge>(predicate: #Predicate { $0.value < 250 })).count == 250)
        }
    }

    @Test func aQueryOrACheckRightAfterEachSaveSeesIt() throws {
        let directory = TemporaryStore("index-applier-fresh")
        try withObjects(directory, types: types) { objects in
            let writer = objects.makeContext()
            let moving = Ticket(title: "moving", code: "m0", due: base, priority: 1, status: "open")
            try writer.insert(moving)
            try writer.save()
            for step in 1...300 {
                try writer.insert(
                    Ticket(title: "t\(step)", code: "c\(step)", due: base, priority: step % 5, status: "open"))
                try writer.insert(Gauge(step))
                moving.code = "m\(step)"
                try writer.save()
                let reader = objects.makeContext()
                #expect(try reader.fetchUniqueID(Ticket.self, where: \.code, equals: "c\(step)") != nil)
                #expect(try reader.fetchUniqueID(Ticket.self, where: \.code, equals: "m\(step - 1)") == nil)
                let now: String? = "m\(step)"
                #expect(try reader.fetch(FetchDescriptor<Ticket>(predicate: #Predicate { $0.code == now })).count == 1)
                #expect(
                    try reader.fetchIDs(FetchDescriptor<Gauge>(predicate: #Predicate { $0.value == step })).count == 1)
                // The key the moving ticket left is free at once; the one it holds is refused at once.
                try writer.insert(Ticket(title: "again", code: "m\(step - 1)", due: base, priority: 0, status: "open"))
                try writer.save()
                try writer.insert(Ticket(title: "taken", code: "m\(step)", due: base, priority: 0, status: "open"))
                let error = #expect(throws: ObjectStoreError.self) { try writer.save() }
                #expect(error?.code == .uniqueViolation)
                writer.discardChanges()
            }
        }
    }

    @Test func aDeletedObjectsKeyIsFreeAtOnce() throws {
        let directory = TemporaryStore("index-applier-delete")
        try withObjects(directory, types: types) { objects in
            let context = objects.makeContext()
            var ids: [ObjectID] = []
            for index in 0..<2_000 {
                ids.append(
                    try context.insert(
                        Ticket(title: "t\(index)", code: "c\(index)", due: base, priority: 1, status: "open")))
            }
            try context.save()
            _ = try context.fetchUniqueID(Ticket.self, where: \.code, equals: "c0")
            for round in 0..<40 {
                // Each save keeps the applier busy with entries while the next commits land.
                for extra in 0..<50 {
                    try context.insert(
                        Ticket(title: "x", code: "x\(round)-\(extra)", due: base, priority: 2, status: "open"))
                }
                let victim = ids[round * 37]
                context.delete(try #require(try context.object(id: victim, as: Ticket.self)))
                try context.save()
                try context.insert(
                    Ticket(title: "again", code: "c\(round * 37)", due: base, priority: 1, status: "open"))
                try context.save()
                let reader = objects.makeContext()
                let holder = try reader.fetchUniqueID(Ticket.self, where: \.code, equals: "c\(round * 37)")
                #expect(holder != nil && holder != victim, "round \(round)")
            }
        }
    }

    @Test func twoNewObjectsOfOneSaveClaimingOneKeyAreRefused() throws {
        let directory = TemporaryStore("index-applier-batch")
        try withObjects(directory, types: types) { objects in
            let context = objects.makeContext()
            for index in 0..<500 {
                try context.insert(
                    Ticket(title: "t\(index)", code: "c\(index)", due: base, priority: 1, status: "open"))
            }
            let first = try context.insert(Ticket(title: "a", code: "same", due: base, priority: 1, status: "open"))
            let second = try context.insert(Ticket(title: "b", code: "same", due: base, priority: 1, status: "open"))
            let error = #expect(throws: ObjectStoreError.self) { try context.save() }
            #expect(error?.code == .uniqueViolation)
            #expect(Set(error?.objects ?? []) == [first, second])
            #expect(try objects.makeContext().count(of: Ticket.self) == 0)
        }
    }

    @Test func keysMovedBetweenObjectsInOneSaveStayUnique() throws {
        let directory = TemporaryStore("index-applier-swap")
        try withObjects(directory, types: types) { objects in
            let context = objects.makeContext()
            let first = Ticket(title: "first", code: "X", due: base, priority: 1, status: "open")
            let second = Ticket(title: "second", code: "Y", due: base, priority: 1, status: "open")
            let third = Ticket(title: "third", code: "Z", due: base, priority: 1, status: "open")
            let firstID = try context.insert(first)
            let secondID = try context.insert(second)
            let thirdID = try context.insert(third)
            try context.save()
            // Two objects exchange their keys in one save.
            first.code = "Y"
            second.code = "X"
            try context.save()
            var reader = objects.makeContext()
            #expect(try reader.fetchUniqueID(Ticket.self, where: \.code, equals: "X") == secondID)
            #expect(try reader.fetchUniqueID(Ticket.self, where: \.code, equals: "Y") == firstID)
            // Three rotate theirs.
            first.code = "Z"
            second.code = "Y"
            third.code = "X"
            try context.save()
            reader = objects.makeContext()
            #expect(try reader.fetchUniqueID(Ticket.self, where: \.code, equals: "X") == thirdID)
            #expect(try reader.fetchUniqueID(Ticket.self, where: \.code, equals: "Y") == secondID)
            #expect(try reader.fetchUniqueID(Ticket.self, where: \.code, equals: "Z") == firstID)
            for code in ["X", "Y", "Z"] {
                let wanted: String? = code
                #expect(
                    try reader.fetchIDs(FetchDescriptor<Ticket>(predicate: #Predicate { $0.code == wanted })).count == 1
                )
            }
            // Each key is still held once: a newcomer is refused, naming the holder.
            try context.insert(Ticket(title: "newcomer", code: "Y", due: base, priority: 1, status: "open"))
            let error = #expect(throws: ObjectStoreError.self) { try context.save() }
            #expect(error?.code == .uniqueViolation)
            #expect(error?.objects.contains(secondID) == true)
        }
    }

    @Test func queriesRacingSavesAnswerExactlyForTheirSnapshot() throws {
        let seed = testSeed("IndexApplierTests.racing", default: UInt64.random(in: 1...1 << 40))
        let directory = TemporaryStore("index-applier-race")
        try withObjects(directory, types: types) { objects in
            let setup = objects.makeContext()
            var stored: [ObjectID] = []
            for index in 0..<300 {
                let ticket = Ticket(
                    title: "t\(index)", code: "c\(index)", due: base.addingTimeInterval(Double(index)), priority: 1,
                    status: "open")
                stored.append(try setup.insert(ticket))
                try setup.insert(Gauge(index))
            }
            try setup.save()
            let base = base
            let ids = stored
            let done = Atomic<Bool>(false)
            let failures = Mutex<[String]>([])
            DispatchQueue.concurrentPerform(iterations: 2) { role in
                if role == 0 {
                    defer { done.store(true, ordering: .releasing) }
                    var random = SplitMix64(seed: seed)
                    do {
                        let saver = objects.makeContext()
                        let tickets = try ids.map { try #require(try saver.object(id: $0, as: Ticket.self)) }
                        for round in 0..<60 {
                            for _ in 0..<20 {
                                let ticket = tickets[Int(random.next() % UInt64(tickets.count))]
                                ticket.due = base.addingTimeInterval(Double(random.next() % 300))
                                try saver.insert(Gauge(Int(random.next() % 300)))
                            }
                            try saver.insert(
                                Ticket(
                                    title: "new\(round)", code: "n\(round)", due: base, priority: 1, status: "open"))
                            try saver.save()
                        }
                    } catch {
                        failures.withLock { $0.append("saver: \(error)") }
                    }
                } else {
                    var checks = 0
                    while !done.load(ordering: .acquiring) || checks < 5 {
                        checks += 1
                        do {
                            let context = objects.makeContext()
                            let all = try context.fetch(FetchDescriptor<Ticket>())
                            let low = base.addingTimeInterval(50)
                            let high = base.addingTimeInterval(150)
                            let found = Set(
                                try context.fetchIDs(
                                    FetchDescriptor<Ticket>(predicate: #Predicate { $0.due >= low && $0.due < high })))
                            let expected = Set(
                                try all.filter { $0.due >= low && $0.due < high }.map {
                                    try #require(context.id(of: $0))
                                })
                            if found != expected { failures.withLock { $0.append("check \(checks): tickets differ") } }
                            let gauges = try context.fetch(FetchDescriptor<Gauge>())
                            let small = try context.fetchIDs(
                                FetchDescriptor<Gauge>(predicate: #Predicate { $0.value < 30 }))
                            if small.count != gauges.filter({ $0.value < 30 }).count {
                                failures.withLock { $0.append("check \(checks): gauges differ") }
                            }
                        } catch {
                            failures.withLock { $0.append("reader: \(error)") }
                        }
                    }
                }
            }
            #expect(failures.withLock { $0 }.isEmpty, "seed \(seed): \(failures.withLock { $0 })")
        }
    }
}
