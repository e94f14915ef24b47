import Foundation
import LogStore
import LogStoreExamples
import LogStoreObjects
import TestSupport
import Testing

/// Random inserts, updates, deletes, reopens, compactions and mark-sweeps against a model that answers the
/// same queries by brute force, over every index kind (ordered, compound, unique, prefix, references), at
/// the newest snapshot and at older ones. The seed is printed; set `LOGSTORE_SEED` to replay one.
@Suite struct QueryModelTests {
    struct Fields: Equatable {
        var title: String
        var code: String?
        var due: Date
        var priority: Int
        var status: String
        var labels: [Int]
        var escalation: Bool
    }

    static let base = Date(timeIntervalSinceReferenceDate: 800_000_000)
    static let statuses = ["open", "done", "waiting"]
    static let titles = ["alpha", "alpine", "beta", "bet", "gamma", "Ångström", "A\u{30A}ngstrom", "delta"]

    /// "steps" with the defaults, "synchronous" with every index change made by the committing thread,
    /// "backlogged" with a backlog limit of one change (each commit waits for the background queue and
    /// applies the rest itself).
    @Test(arguments: ["steps", "synchronous", "backlogged"]) func queriesAnswerAsABruteForceModel(
        _ label: String
    ) throws {
        var tuning = ObjectStoreTuning()
        if label == "synchronous" { tuning.appliesIndexesInBackground = false }
        if label == "backlogged" { tuning.indexBacklogLimit = 1 }
        let seed = testSeed("QueryModelTests.\(label)", default: UInt64.random(in: 1...1 << 40))
        var random = SplitMix64(seed: seed)
        let directory = TemporaryStore("query-model")
        var objects = try openObjects(directory, types: queryTypes, tuning: tuning)
        var model: [ObjectID: Fields] = [:]
        var labelIDs: [ObjectID] = []
        let setup = objects.makeContext()
        for index in 0..<4 { labelIDs.append(try setup.insert(Label("label\(index)"))) }
        try setup.save()
        var old: (context: ObjectContext, model: [ObjectID: Fields])?

        func randomFields() -> Fields {
            Fields(
                title: Self.titles[Int(random.next() % UInt64(Self.titles.count))] + "\(random.next() % 3)",
                code: random.next() % 4 == 0 ? nil : "c\(random.next() % 40)",
                due: Self.base.addingTimeInterval(Double(random.next() % 200) * 60),
                priority: Int(random.next() % 5), status: Self.statuses[Int(random.next() % 3)],
                labels: (0..<Int(random.next() % 3)).map { _ in Int(random.next() % 4) },
                escalation: random.next() % 5 == 0)
        }
        func violates(_ fields: Fields, as id: ObjectID?) -> Bool {
            guard let code = fields.code else { return false }
            return model.contains { $0.key != id && $0.value.code == code }
        }
        func apply(_ fields: Fields, to ticket: Ticket, _ context: ObjectContext) throws {
            ticket.title = fields.title
            ticket.code = fields.code
            ticket.due = fields.due
            ticket.priority = fields.priority
            ticket.status = fields.status
            ticket.labels = try fields.labels.map { try #require(try context.object(id: labelIDs[$0], as: Label.self)) }
        }

        for step in 0..<300 {
            let context = objects.makeContext()
            let choice = random.next() % 100
            let ids = model.keys.sorted()
            if choice < 45 || ids.isEmpty {
                let fields = randomFields()
                let ticket =
                    fields.escalation
                    ? Escalation(title: "", code: nil, due: Self.base, priority: 0, level: 2)
                    : Ticket(title: "", code: nil, due: Self.base, priority: 0, status: "")
                try apply(fields, to: ticket, context)
                let id = try context.insert(ticket)
                if violates(fields, as: nil) {
                    let error = #expect(throws: ObjectStoreError.self, "seed \(seed), step \(step)") {
                        try context.save()
                    }
                    #expect(error?.code == .uniqueViolation, "seed \(seed), step \(step)")
                } else {
                    try context.save()
                    model[id] = fields
                }
            } else if choice < 75 {
                let id = ids[Int(random.next() % UInt64(ids.count))]
                let ticket = try #require(try context.object(id: id, as: Ticket.self))
                var fields = randomFields()
                fields.escalation = ticket is Escalation
                try apply(fields, to: ticket, context)
                if violates(fields, as: id) {
                    let error = #expect(throws: ObjectStoreError.self, "seed \(seed), step \(step)") {
                        try context.save()
                    }
                    #expect(error?.code == .uniqueViolation, "seed \(seed), step \(step)")
                } else {
                    try context.save()
                    model[id] = fields
                }
            } else if choice < 90 {
                let id = ids[Int(random.next() % UInt64(ids.count))]
                context.delete(try #require(try context.object(id: id, as: Ticket.self)))
                try context.save()
                model[id] = nil
            } else if choice < 93 {
                try objects.close()
                objects = try openObjects(directory, types: queryTypes, tuning: tuning)
                old = nil
            } else if choice < 96 {
                _ = try objects.store.compact()
            } else if choice < 98 {
                _ = try objects.store.collectGarbage()
            } else {
                let keep = objects.makeContext()
                _ = try keep.count(of: Ticket.self)
                old = (keep, model)
            }
            try check(objects.makeContext(), model, labelIDs, &random, "seed \(seed), step \(step)")
            if let old, random.next() % 3 == 0 {
                try check(old.context, old.model, labelIDs, &random, "seed \(seed), step \(step), older snapshot")
            }
        }
        try objects.close()
    }

    /// Runs a few random queries in `context` and compares them with `model`.
    private func check(
        _ context: ObjectContext, _ model: [ObjectID: Fields], _ labelIDs: [ObjectID], _ random: inout SplitMix64,
        _ where: String
    ) throws {
        func ids(_ tickets: [Ticket]) -> [ObjectID] { tickets.compactMap { context.id(of: $0) }.sorted() }
        func expected(_ test: (Fields) -> Bool) -> [ObjectID] { model.filter { test($0.value) }.keys.sorted() }

        let low = Self.base.addingTimeInterval(Double(random.next() % 200) * 60)
        let high = low.addingTimeInterval(Double(random.next() % 60) * 60)
        let range = FetchDescriptor<Ticket>(
            predicate: #Predicate { $0.due >= low && $0.due < high }, sortBy: [SortDescriptor(\.due)])
        #expect(try context.explain(range).index == "due", "\(`where`)")
        let inRange = try context.fetch(range)
        #expect(ids(inRange) == expected { $0.due >= low && $0.due < high }, "\(`where`): due range")
        #expect(inRange.map(\.due) == inRange.map(\.due).sorted(), "\(`where`): due order")
        #expect(try context.fetchCount(range) == inRange.count, "\(`where`): due count")

        let priority = Int(random.next() % 5)
        let byPriority = FetchDescriptor<Ticket>(predicate: #Predicate { $0.priority == priority })
        #expect(
            try context.fetchIDs(byPriority).sorted() == expected { $0.priority == priority }, "\(`where`): priority")

        let status = Self.statuses[Int(random.next() % 3)]
        let compound = FetchDescriptor<Ticket>(predicate: #Predicate { $0.status == status && $0.priority >= priority })
        #expect(try context.explain(compound).index == "status+priority", "\(`where`)")
        #expect(
            ids(try context.fetch(compound)) == expected { $0.status == status && $0.priority >= priority },
            "\(`where`): compound")

        let prefix = ["al", "be", "Å", "A\u{30A}", "gamma1", "z"][Int(random.next() % 6)]
        let prefixed = FetchDescriptor<Ticket>(predicate: #Predicate { $0.title.starts(with: prefix) })
        #expect(try context.explain(prefixed).index == "title", "\(`where`)")
        #expect(ids(try context.fetch(prefixed)) == expected { $0.title.starts(with: prefix) }, "\(`where`): prefix")

        let code: String? = "c\(random.next() % 40)"
        let byCode = FetchDescriptor<Ticket>(predicate: #Predicate { $0.code == code })
        #expect(ids(try context.fetch(byCode)) == expected { $0.code == code }, "\(`where`): unique code")
        let unique = try context.fetchUnique(Ticket.self, where: \.code, equals: code)
        #expect(unique.flatMap { context.id(of: $0) } == expected { $0.code == code }.first, "\(`where`): fetchUnique")
        #expect(
            try context.fetchUniqueID(Ticket.self, where: \.code, equals: code) == expected { $0.code == code }.first,
            "\(`where`): fetchUniqueID")
        // nil is a value uniqueness does not apply to: the lowest id holding it.
        let withoutCode = try context.fetchUnique(Ticket.self, where: \.code, equals: nil)
        #expect(
            withoutCode.flatMap { context.id(of: $0) } == expected { $0.code == nil }.first,
            "\(`where`): fetchUnique of nil")

        let labelNumber = Int(random.next() % 4)
        let label = try #require(try context.object(id: labelIDs[labelNumber], as: Label.self))
        #expect(
            ids(try context.referrers(to: label, through: \Ticket.labels))
                == expected { $0.labels.contains(labelNumber) }, "\(`where`): referrers")

        var page = FetchDescriptor<Ticket>(sortBy: [SortDescriptor(\.priority, order: .reverse)])
        page.fetchOffset = Int(random.next() % 5)
        page.fetchLimit = Int(random.next() % 7)
        let sortedPriorities = model.values.map(\.priority).sorted(by: >)
        let start = min(page.fetchOffset ?? 0, sortedPriorities.count)
        let end = min(sortedPriorities.count, start + (page.fetchLimit ?? 0))
        #expect(try context.fetch(page).map(\.priority) == Array(sortedPriorities[start..<end]), "\(`where`): page")

        let scanned = FetchDescriptor<Ticket>(predicate: #Predicate { $0.priority != priority })
        #expect(try context.explain(scanned).index == nil, "\(`where`)")
        #expect(ids(try context.fetch(scanned)) == expected { $0.priority != priority }, "\(`where`): scan")
    }
}
