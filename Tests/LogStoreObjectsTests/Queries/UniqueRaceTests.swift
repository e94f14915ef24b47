import Foundation
import LogStore
import LogStoreObjects
import Synchronization
import TestSupport
import Testing

/// Savers racing for one key of a unique index: exactly one wins, the others are told who holds it, and
/// savers of distinct keys all succeed and are all found.
@Suite struct UniqueRaceTests {
    @Test func ofSaversRacingForOneKeyExactlyOneWins() throws {
        let directory = TemporaryStore("unique-race")
        try withObjects(directory, types: queryTypes) { objects in
            let due = Date(timeIntervalSinceReferenceDate: 0)
            for round in 0..<20 {
                let outcomes = Mutex<[String]>([])
                DispatchQueue.concurrentPerform(iterations: 8) { saver in
                    let context = objects.makeContext()
                    let outcome: String
                    do {
                        try context.insert(
                            Ticket(title: "s\(saver)", code: "key\(round)", due: due, priority: saver, status: "open"))
                        try context.save()
                        outcome = "saved"
                    } catch {
                        outcome = (error as? ObjectStoreError)?.code.name ?? "\(error)"
                    }
                    outcomes.withLock { $0.append(outcome) }
                }
                let all = outcomes.withLock { $0 }
                #expect(all.filter { $0 == "saved" }.count == 1, "round \(round): \(all)")
                #expect(all.filter { $0 == "uniqueViolation" }.count == 7, "round \(round): \(all)")
                let code: String? = "key\(round)"
                let holders = try objects.makeContext().fetch(
                    FetchDescriptor<Ticket>(predicate: #Predicate { $0.code == code }))
                #expect(holders.count == 1)
            }
            let failures = Mutex<[String]>([])
            DispatchQueue.concurrentPerform(iterations: 8) { saver in
                let context = objects.makeContext()
                for index in 0..<25 {
                    do {
                        try context.insert(
                            Ticket(title: "d", code: "d\(saver)-\(index)", due: due, priority: 0, status: "distinct"))
                        try context.save()
                    } catch {
                        failures.withLock { $0.append("\(error)") }
                    }
                }
            }
            #expect(failures.withLock { $0 }.isEmpty)
            let distinct = FetchDescriptor<Ticket>(predicate: #Predicate { $0.status == "distinct" })
            #expect(try objects.makeContext().fetchCount(distinct) == 200)
        }
    }
}
