import Foundation
import LogStore
import LogStoreObjects
import TestSupport
import Testing

/// Large tables are split into buckets: one set rewrites O(1) records, not the table.
@Suite struct ODBLargeTableTests {
    @Test func aSetInATableOf100000ChildrenWritesOneRecord() throws {
        let directory = TemporaryStore("odb-large")
        try withODB(directory) { (odb: ODB) throws in
            let total = 100_000
            for start in stride(from: 0, to: total, by: 10_000) {
                try odb.transaction { tx in
                    for index in start..<start + 10_000 {
                        try tx.setValue("value \(index)", at: ["big", "key\(index)"])
                    }
                }
            }
            #expect(try odb.count(at: ["big"]) == total)
            let records = try odbRecordCount(odb.store)
            #expect(records > total / 128)
            var written: [UInt64] = []
            for index in [17, 4_242, 99_999] {
                let before = try odb.store.statistics().segments.reduce(0) { $0 + $1.bytes }
                try odb.setValue("changed \(index)", at: ["BIG", "KEY\(index)"])
                let after = try odb.store.statistics().segments.reduce(0) { $0 + $1.bytes }
                written.append(after - before)
            }
            // A bucket of ~64 short entries is about 1–2 KiB; the whole table is megabytes.
            #expect(written.allSatisfy { $0 < 8_192 }, "bytes written per set: \(written)")
            #expect(try odbRecordCount(odb.store) == records)
            #expect(try odb.value(at: ["big", "key4242"]) == .string("changed 4242"))
            #expect(try odb.value(at: ["big", "key4243"]) == .string("value 4243"))
            #expect(try odb.delete(["big", "key5"]))
            #expect(try odb.count(at: ["big"]) == total - 1)
        }
        try withODB(directory) { (odb: ODB) throws in
            #expect(try odb.value(at: ["big", "key99999"]) == .string("changed 99999"))
            #expect(try odb.keys(at: ["big"]).count == 99_999)
            try odb.deleteAll(in: ["big"])
            #expect(try odbRecordCount(odb.store) == 2)
        }
    }

    @Test func aTableGrowsIntoBucketsOneSetAtATime() throws {
        let directory = TemporaryStore("odb-grow")
        try withODB(directory) { (odb: ODB) throws in
            for index in 0..<600 { try odb.setValue(index, at: ["grow", "k\(index)"]) }
            #expect(try odb.count(at: ["grow"]) == 600)
            #expect(try odbRecordCount(odb.store) > 2 + 600 / 64)
            for index in 0..<600 { #expect(try odb.value(at: ["grow", "K\(index)"]) == .int(index)) }
            try odb.setValue(String(repeating: "z", count: 20_000), at: ["grow", "huge"])
            #expect(try odb.value(at: ["grow", "huge"])?.stringValue?.count == 20_000)
        }
    }
}
