import Foundation
import LogStore
import LogStoreObjects
import TestSupport
import Testing

/// Threads writing one table lose nothing; transactions are atomic; a read closure sees one snapshot.
@Suite struct ODBConcurrencyTests {
    @Test func threadsSettingKeysOfOneTableLoseNothing() throws {
        let directory = TemporaryStore("odb-threads")
        try withODB(directory) { (odb: ODB) throws in
            let threads = 4
            let perThread = 150
            DispatchQueue.concurrentPerform(iterations: threads) { thread in
                for index in 0..<perThread {
                    do {
                        try odb.setValue(index, at: ["shared", "t\(thread)-\(index)"])
                    } catch {
                        Issue.record("thread \(thread): \(error)")
                    }
                }
            }
            #expect(try odb.count(at: ["shared"]) == threads * perThread)
            for thread in 0..<threads {
                for index in 0..<perThread {
                    #expect(try odb.value(at: ["shared", "t\(thread)-\(index)"]) == .int(index))
                }
            }
        }
    }

    @Test func concurrentIncrementsInTransactionsAllCount() throws {
        let directory = TemporaryStore("odb-increments")
        try withODB(directory) { (odb: ODB) throws in
            DispatchQueue.concurrentPerform(iterations: 4) { _ in
                for _ in 0..<50 {
                    do {
                        try odb.transaction { tx in
                            let count = try tx.value(at: ["stats", "count"], as: Int.self) ?? 0
                            try tx.setValue(count + 1, at: ["stats", "count"])
                        }
                    } catch {
                        Issue.record("\(error)")
                    }
                }
            }
            #expect(try odb.value(at: ["stats", "count"]) == .int(200))
        }
    }

    @Test func aTransactionIsAtomicAndAThrowingOneWritesNothing() throws {
        struct Stop: Error {}
        let directory = TemporaryStore("odb-atomic")
        try withODB(directory) { (odb: ODB) throws in
            try odb.transaction { tx in
                for index in 0..<500 { try tx.setValue(index, at: ["many", "k\(index)"]) }
                #expect(try tx.value(at: ["many", "k7"]) == .int(7))
            }
            #expect(try odb.count(at: ["many"]) == 500)
            #expect(throws: Stop.self) {
                try odb.transaction { tx in
                    try tx.setValue(1, at: ["other"])
                    try tx.delete(["many"])
                    throw Stop()
                }
            }
            #expect(try odb.count(at: ["many"]) == 500)
            #expect(try odb.value(at: ["other"]) == nil)
        }
    }

    @Test func tablesCreatedAndDeletedInOneTransactionAreNotWritten() throws {
        let directory = TemporaryStore("odb-detached")
        try withODB(directory) { (odb: ODB) throws in
            try odb.transaction { tx in
                try tx.setValue(1, at: ["tmp", "a", "b"])
                try tx.delete(["tmp"])
                try tx.setValue(2, at: ["kept", "x"])
                try tx.createTable(["kept"])
                try tx.setValue(3, at: ["kept", "y"])
            }
            #expect(try odbRecordCount(odb.store) == 2)
            #expect(try odb.keys(at: ["kept"]) == ["y"])
        }
    }

    @Test func aReadSeesOneSnapshot() throws {
        let directory = TemporaryStore("odb-snapshot")
        try withODB(directory) { (odb: ODB) throws in
            try odb.setValue(1, at: ["a"])
            try odb.setValue(1, at: ["b", "c"])
            try odb.read { view in
                try odb.transaction { tx in
                    try tx.setValue(2, at: ["a"])
                    try tx.setValue(2, at: ["b", "c"])
                }
                #expect(try view.value(at: ["a"]) == .int(1))
                #expect(try view.value(at: ["b", "c"]) == .int(1))
            }
            #expect(try odb.value(at: ["a"]) == .int(2))
        }
    }
}
