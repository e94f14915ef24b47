import Foundation
import LogStore
import LogStoreExamples
import LogStoreObjects
import TestSupport
import Testing

/// Random path operations against ``ODBModel``, with reopens in between. The seed is printed; set
/// `LOGSTORE_SEED` to replay one (``testSeed(_:default:)``).
@Suite struct ODBPropertyTests {
    static let keys = ["a", "A", "b", "B", "feed", "FEED", "Feed", "x1", "X1", "Straße", "STRASSE", "q.r"]

    @Test func randomPathOperationsMatchTheModel() throws {
        let seed = testSeed("ODBPropertyTests", default: UInt64.random(in: 1...UInt64.max))
        var random = SplitMix64(seed: seed)
        let directory = TemporaryStore("odb-property")
        var model = ODBModel()
        var odb = try openODB(directory, cacheBudget: Self.budgets[Int(random.next() % 3)])
        defer { try? odb.close() }
        for step in 0..<1_500 {
            let keys = Self.randomPath(&random)
            let context = "seed \(seed), step \(step), path \(keys)"
            switch random.next() % 100 {
            case 0..<40:
                let value = Self.randomValue(&random)
                let type = random.next() % 4 == 0 ? "app" : nil
                check(
                    model.setValue(value, type, at: keys),
                    { try odb.setValue(value, at: ODBPath(keys), applicationType: type) }, context)
            case 40..<50:
                // Many keys into one table: a large (hashed) table.
                let wide = ["wide", "w\(random.next() % 400)"]
                let count = Int(random.next() % 200)
                var outcomes: [ODBModel.Outcome] = []
                var copy = model
                for index in 0..<count { outcomes.append(copy.setValue(.int(index), nil, at: wide + ["k\(index)"])) }
                if outcomes.allSatisfy({ $0 == .ok }) {
                    model = copy
                    try odb.transaction { tx in
                        for index in 0..<count { try tx.setValue(.int(index), at: ODBPath(wide + ["k\(index)"])) }
                    }
                }
                let key = "w\(random.next() % 400)"
                check(
                    model.setValue(.string(key), nil, at: ["wide", key]),
                    { try odb.setValue(.string(key), at: ["wide", key]) }, context)
            case 50..<62:
                check(model.ensureTable(keys), { try odb.ensureTable(ODBPath(keys)) }, context)
            case 62..<70:
                check(model.createTable(keys), { try odb.createTable(ODBPath(keys)) }, context)
            case 70..<85:
                let expected = model.delete(keys)
                if keys.isEmpty {
                    #expect(odbError { try odb.delete([]) }?.code == .rootTable, "\(context)")
                } else {
                    #expect(try odb.delete(ODBPath(keys)) == (expected == .ok), "\(context)")
                }
            case 85..<88:
                check(model.deleteAll(keys), { try odb.deleteAll(in: ODBPath(keys)) }, context)
            case 88..<90:
                let problems = try odb.verify()
                #expect(problems.isEmpty, "seed \(seed), step \(step): \(problems)")
                try odb.close()
                odb = try openODB(directory, cacheBudget: Self.budgets[Int(random.next() % 3)])
            default:
                try compare(model, odb, at: keys, context)
            }
        }
        try compareTree(model.root, odb, at: [], "seed \(seed), at the end")
        try odb.close()
        odb = try openODB(directory)
        try compareTree(model.root, odb, at: [], "seed \(seed), after reopening")
        let report = try Store.verify(at: directory.path)
        #expect(report.problems.isEmpty, "verify: \(report.problems)")
    }

    /// No cache, a cache that keeps evicting, and the default one.
    static let budgets = [0, 20_000, ODB.defaultCacheBudget]

    static func randomPath(_ random: inout SplitMix64) -> [String] {
        let depth = Int(random.next() % 4)
        return (0..<depth).map { _ in keys[Int(random.next() % UInt64(keys.count))] }
    }

    static func randomValue(_ random: inout SplitMix64) -> ODBValue {
        switch random.next() % 6 {
        case 0: .bool(random.next() % 2 == 0)
        case 1: .int(Int(truncatingIfNeeded: random.next()))
        case 2: .double(Double(random.next() % 1000) / 8)
        case 3: .date(Date(timeIntervalSince1970: Double(random.next() % 2_000_000_000)))
        case 4: .string(String(repeating: "s", count: Int(random.next() % 40)))
        default: .data(Data((0..<Int(random.next() % 20)).map { UInt8($0) }))
        }
    }

    /// The ODB call fails with the code the model says, or succeeds when the model does.
    func check(_ expected: ODBModel.Outcome, _ call: () throws -> Void, _ context: String) {
        switch expected {
        case .ok:
            #expect(throws: Never.self, "\(context)") { try call() }
        case .failed(let code):
            do {
                try call()
                Issue.record("expected \(code), nothing thrown; \(context)")
            } catch let error as ODBError {
                #expect(error.code == code, "\(error); \(context)")
            } catch {
                Issue.record("expected \(code), got \(error); \(context)")
            }
        }
    }

    func compare(_ model: ODBModel, _ odb: ODB, at keys: [String], _ context: String) throws {
        let object = try odb.object(at: ODBPath(keys))
        switch model.child(at: keys) {
        case nil: #expect(object == nil, "\(context)")
        case .value(let value, let type): #expect(object == .value(value, applicationType: type), "\(context)")
        case .table(let table): try compareTree(table, odb, at: keys, context)
        }
    }

    func compareTree(_ table: ODBModel.Table, _ odb: ODB, at keys: [String], _ context: String) throws {
        let children = try odb.children(at: ODBPath(keys))
        #expect(try odb.count(at: ODBPath(keys)) == table.children.count, "\(context) at \(keys)")
        var byFolded: [String: ODBChild] = [:]
        for child in children { byFolded[ODBModel.fold(child.key)] = child }
        #expect(Set(byFolded.keys) == Set(table.children.keys), "\(context) at \(keys)")
        for (folded, entry) in table.children {
            guard let child = byFolded[folded] else { continue }
            #expect(child.key == entry.key, "\(context) at \(keys)")
            switch entry.child {
            case .value(let value, let type):
                #expect(child.object == .value(value, applicationType: type), "\(context) at \(keys + [entry.key])")
            case .table(let subtable):
                #expect(child.object == .table, "\(context) at \(keys + [entry.key])")
                if child.object == .table { try compareTree(subtable, odb, at: keys + [entry.key], context) }
            }
        }
    }
}
