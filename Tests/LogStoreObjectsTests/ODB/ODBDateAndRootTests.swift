import Foundation
import LogStore
import LogStoreObjects
import TestSupport
import Testing

/// Dates come back exactly after a reopen (and dates of the older encoding still read); `root` as the
/// first key of a member-access path is the implied root table, as it is in paths.
@Suite struct ODBDateAndRootTests {
    @Test func aDateReadsBackExactlyAfterReopening() throws {
        let directory = TemporaryStore("odb-date-exact")
        // Dates whose seconds since 2001 (Date's own value) are not exactly representable since 1970.
        let dates = [
            Date(timeIntervalSinceReferenceDate: 786_000_000.123_456_7),
            Date(timeIntervalSinceReferenceDate: 0.1),
            Date(timeIntervalSinceReferenceDate: -1e-7),
            Date(timeIntervalSinceReferenceDate: 1.0 / 3.0),
        ]
        try withODB(directory) { (odb: ODB) throws in
            for (index, date) in dates.enumerated() { try odb.setValue(date, at: ["dates", "d\(index)"]) }
        }
        try withODB(directory) { (odb: ODB) throws in
            for (index, date) in dates.enumerated() {
                let read = try #require(try odb.value(at: ["dates", "d\(index)"], as: Date.self))
                #expect(
                    read.timeIntervalSinceReferenceDate.bitPattern == date.timeIntervalSinceReferenceDate.bitPattern,
                    "\(read.timeIntervalSinceReferenceDate - date.timeIntervalSinceReferenceDate) s off")
            }
        }
    }

    @Test func aDateOfTheOlderEncodingStillReads() throws {
        let directory = TemporaryStore("odb-date-old")
        let seconds = 1_700_000_000.25
        let store = try Store.open(at: directory.path, options: odbTestOptions())
        // A root table of one entry "d": kind 5, the IEEE 754 bits of seconds since 1970, little-endian.
        var payload: [UInt8] = [0x01, 0x01, 0x01, UInt8(ascii: "d"), 0x05]
        for shift in stride(from: 0, to: 64, by: 8) {
            payload.append(UInt8(truncatingIfNeeded: seconds.bitPattern >> UInt64(shift)))
        }
        let table = try store.put(typeTag: TypeNames.tag(for: "logstore.odb.table"), payload: payload, pinned: false)
        try store.setRoot("odb.root", to: table)
        try store.close()
        try withODB(directory) { (odb: ODB) throws in
            #expect(try odb.value(at: ["d"]) == .date(Date(timeIntervalSince1970: seconds)))
            // Rewriting the table stores the date in the current encoding, with the same value.
            try odb.setValue(1, at: ["other"])
        }
        try withODB(directory) { (odb: ODB) throws in
            #expect(try odb.value(at: ["d"]) == .date(Date(timeIntervalSince1970: seconds)))
        }
    }

    @Test func rootAsTheFirstMemberIsTheRootTable() throws {
        let directory = TemporaryStore("odb-member-root")
        try withODB(directory) { (odb: ODB) throws in
            odb.root.RSS.count = 3
            #expect(odb.lastAccessError == nil)
            #expect(try odb.value(at: ["RSS", "count"]) == .int(3))
            #expect(try odb.keys(at: []) == ["RSS"], "no child named root")
            let count: Int? = odb.root.RSS.count
            #expect(count == 3)
            #expect(odb.root.path == ODBPath([]) && odb["ROOT"].path == ODBPath([]))
            odb.root.flag = true
            #expect(try odb.value(at: ["flag"]) == .bool(true))
        }
    }

    @Test func aRealChildNamedRootIsReachedBelowTheRoot() throws {
        let directory = TemporaryStore("odb-child-root")
        try withODB(directory) { (odb: ODB) throws in
            // As an older store may hold it: a table named "root" in the root table.
            try odb.setValue(1, at: ["root", "root", "a"])
            #expect(try odb.keys(at: []) == ["root"])
            let a: Int? = odb.root.root.a
            #expect(a == 1)
            #expect(odb.root.root.path == ODBPath(["root", "root"]))
            odb.root.root.b = 2
            #expect(try odb.value(at: ["root", "root", "b"]) == .int(2))
        }
    }
}
